package engine

import cpukernel "github.com/goprep/goprep/kernels/cpu"

// The engine's tests always run the simulated GPU on the real kernels/*.cu, compiled for the CPU.
func init() { UseSimKernels(cpukernel.Launch) }
