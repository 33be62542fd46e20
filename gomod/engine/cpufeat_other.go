//go:build !(goexperiment.simd && amd64) && !arm64

package engine

// simdEnabled reports whether the row kernels use SIMD in this build.
const simdEnabled = false

// detectCPU: without SIMD kernels in the build no feature matters; chooseKernels picks the pure-Go
// kernels.
func detectCPU() cpuFeatures { return cpuFeatures{} }
