package engine

// simdEnabled reports whether the amd64 archsimd kernels are in this build: never on arm64, whose
// kernels are the NEON assembly of the *_arm64.s files (cpuFeatures.NEON, kernelSet.NEON).
const simdEnabled = false

// detectCPU reports NEON (Advanced SIMD), which every ARMv8-A Linux CPU has (the arm64 ABI requires
// it), so there is nothing to read. chooseKernels (kernels.go) turns it into the process's kernel set;
// kernelOverrides.NoSIMD turns the NEON kernels off (the pure-Go twins then run: how the tests compare
// both in one binary).
// Why: Graviton and Grace (issue 29) run the same binary as any other arm64 Linux machine.
func detectCPU() cpuFeatures { return cpuFeatures{NEON: true} }
