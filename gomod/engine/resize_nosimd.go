//go:build !(goexperiment.simd && amd64)

package engine

// simdEnabled reports whether the row kernels use SIMD in this build.
const simdEnabled = false

func vnormRow(out []float32, s0, s1 []int16, b0, b1 int32, scale, mean, std float32, lut *[256]float32) {
	vnormScalar(out, s0, s1, b0, b1, lut)
}

func hresizeRow(d []int16, src []uint8, rb int, f *fastPlan) {
	hresizeScalar(d, src, rb, f, 0, len(f.taps))
}

// SIMDLevel names the row kernels in use.
func SIMDLevel() string { return "none (pure Go)" }

func fusedRow(out *[3][]float32, src []uint8, rb0, rb1 int, f *fastPlan, b0, b1 int32, nt *normTables) bool {
	return false
}
