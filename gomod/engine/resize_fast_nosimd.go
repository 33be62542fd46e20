//go:build !(goexperiment.simd && amd64)

package engine

// duoEnabled reports whether fused plans take duoRow: only with SIMD.
func duoEnabled() bool { return false }

// fusedEnabled reports whether fusedRow can run: only with SIMD.
func fusedEnabled() bool { return false }

func duoH(d []int16, src []uint8, rb0, rb1 int, f *fastPlan, b0, b1 int32) {
	duoScalar(d, src, rb0, rb1, f, b0, b1, 0, len(f.taps))
}

func normI16(out []float32, v []int16, scale, mean, std float32, lut *[256]float32) {
	normI16Scalar(out, v, lut)
}
