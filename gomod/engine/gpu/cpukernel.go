//go:build cpukernel

package gpu

import cpukernel "github.com/goprep/goprep/kernels/cpu"

// With -tags cpukernel the simulated GPU of the extension (goprep.testing.simulate_gpu) runs the
// real kernels/*.cu compiled for the CPU. Production builds without a C++ compiler leave it out.
func init() { UseSimKernels(cpukernel.Launch) }
