//go:build cuda

package binding

import "github.com/goprep/goprep/gomod/cuda"

func init() {
	cudaBuilt = true
	registerGPU = cuda.Register
}
