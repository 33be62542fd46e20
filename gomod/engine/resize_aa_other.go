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
