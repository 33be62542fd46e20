//go:build !(goexperiment.simd && amd64)

package engine

// duoEnabled reports whether fused plans take duoRows: only with SIMD.
func duoEnabled() bool { return false }

// fusedEnabled reports whether fusedRow can run: only with SIMD.
func fusedEnabled() bool { return false }

func hresizeRow(d []int16, src []uint8, rb int, f *fastPlan) {
	hresizeScalar(d, src, rb, f, 0, len(f.taps))
}

func vnormRow(out []float32, s0, s1 []int16, b0, b1 int32, scale, mean, std float32, lut *[256]float32) {
	vnormScalar(out, s0, s1, b0, b1, lut)
}

func fusedRow(out *[3][]float32, src []uint8, rb0, rb1 int, f *fastPlan, b0, b1 int32, nt *normTables) bool {
	return false
}

func duoH(out *[3][]float32, src []uint8, rb0, rb1 int, f *fastPlan, b0, b1 int32) {
	duoScalar(out, src, rb0, rb1, f, b0, b1, 0, len(f.taps))
}

// duoRows: no duoH path without SIMD (see the amd64 version).
func (w *worker) duoRows(p *Plan, b *jobBufs, base, img, y, y1 int) int { return 0 }
