//go:build cgo

package gpu

import cpukernel "github.com/goprep/goprep/kernels/cpu"

// The engine's tests always run the simulated GPU on the real kernels/*.cu, compiled for the CPU
// (cgo: package kernels/cpu is C++; a cross-compiled vet, GOARCH=arm64, has no cgo).
func init() { UseSimKernels(cpukernel.Launch) }
