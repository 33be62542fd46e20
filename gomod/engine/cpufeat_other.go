//go:build !(goexperiment.simd && amd64)

package engine

// simdEnabled reports whether the row kernels use SIMD in this build.
const simdEnabled = false

// SIMDLevel names the row kernels in use.
func SIMDLevel() string { return "none (pure Go)" }
