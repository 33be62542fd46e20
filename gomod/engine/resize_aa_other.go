//go:build !(goexperiment.simd && amd64) && !arm64

package engine

// The pure-Go twins of resize_aa_amd64.go's kernels: with no SIMD in the build the kernel set is all
// false (chooseKernels); the passes run the scalar kernels the SIMD ones equal, and the SIMD-only
// kernels decline, so that their callers run those.

// aaHRows is aaHScalar over one or two rows (h1 nil: one).
func (k *kernelSet) aaHRows(h0, h1 []uint8, src []uint8, rb0, rb1 int, a *aaPlan, p *Plan) {
	aaHScalar(h0, src, rb0, a, p, 0, len(a.cols))
	if h1 != nil {
		aaHScalar(h1, src, rb1, a, p, 0, len(a.cols))
	}
}

// aaHRows4 is aaHScalar over four rows (h[q] from the row at byte offset rb[q]).
func (k *kernelSet) aaHRows4(h *[4][]uint8, rb *[4]int, src []uint8, a *aaPlan, p *Plan) {
	for q := range h {
		aaHScalar(h[q], src, rb[q], a, p, 0, len(a.cols))
	}
}

// aaHRows4W declines (8 taps per step needs AVX2): aaHRows4 runs.
func (k *kernelSet) aaHRows4W(h *[4][]uint8, rb *[4]int, src []uint8, a *aaPlan, p *Plan, edge []byte) bool {
	return false
}

// aaVRow is aaVScalar over the whole row.
func (k *kernelSet) aaVRow(out []float32, hs [][]uint8, po int, wv []int32, pw []int32, vh aaVHead, scale, mean, std float32, lut *[256]float32) {
	aaVScalar(out, hs, po, wv, lut, 0)
}

// aaVRow3 declines (the three-plane loop needs AVX2): aaVRow runs per plane.
func (k *kernelSet) aaVRow3(out *[3][]float32, hs [][]uint8, po *[3]int, wv, pw []int32, vh aaVHead, nt *normTables, luts *[3]*[256]float32, wide bool) bool {
	return false
}

// vresizeAAU8Paired computes no column: vresizeAAU8 computes them all.
func (k *kernelSet) vresizeAAU8Paired(dst []uint8, hs [][]uint8, pw []int32, vh aaVHead) int {
	return 0
}
