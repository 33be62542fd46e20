//go:build !(goexperiment.simd && amd64)

package engine

// aaZEnabled reports whether plans build aaHRowsZ's tables: only with SIMD.
func aaZEnabled() bool { return false }

// noVNNI would switch aaHRowsZ off (tests, benchmarks); there is none without SIMD.
var noVNNI bool

// noAsmY would switch aaHRowsY off; there is none without SIMD.
var noAsmY bool

// no512V would switch aaVRow3W off; there is none without SIMD.
var no512V bool

// aaVWideEnabled reports whether aaVRow3 hands its columns to aaVRow3W: only with SIMD.
func aaVWideEnabled() bool { return false }

// aaHRows is the fast antialias horizontal pass of one or two rows (h1 nil: one).
func aaHRows(h0, h1 []uint8, src []uint8, rb0, rb1 int, a *aaPlan, p *Plan) {
	aaHScalar(h0, src, rb0, a, p, 0, len(a.cols))
	if h1 != nil {
		aaHScalar(h1, src, rb1, a, p, 0, len(a.cols))
	}
}

// aaHRows4 is aaHRows for four rows (h[q] from the row at byte offset rb[q]).
func aaHRows4(h *[4][]uint8, rb *[4]int, src []uint8, a *aaPlan, p *Plan) {
	for q := range h {
		aaHScalar(h[q], src, rb[q], a, p, 0, len(a.cols))
	}
}

// aaVRow is the fast antialias vertical pass plus normalisation of one output plane row.
func aaVRow(out []float32, hs [][]uint8, po int, wv []int32, pw []int32, vh aaVHead, scale, mean, std float32, lut *[256]float32) {
	aaVScalar(out, hs, po, wv, lut, 0)
}

// aaHRows4W is the 8-taps-per-step SIMD horizontal pass; without SIMD it declines (aaHRows4 runs).
func aaHRows4W(h *[4][]uint8, rb *[4]int, src []uint8, a *aaPlan, p *Plan, edge []byte) bool {
	return false
}

// aaVRow3 is the three-plane SIMD vertical pass; without SIMD it declines (aaVRow runs per plane).
func aaVRow3(out *[3][]float32, hs [][]uint8, po *[3]int, wv, pw []int32, vh aaVHead, nt *normTables, luts *[3]*[256]float32, wide bool) bool {
	return false
}

// vresizeAAU8Paired is vresizeAAU8's SIMD loop; without SIMD it computes no column.
func vresizeAAU8Paired(dst []uint8, hs [][]uint8, pw []int32, vh aaVHead) int { return 0 }
