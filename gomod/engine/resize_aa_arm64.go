package engine

import (
	"sort"
	"unsafe"
)

// The arm64 kernels of the antialias (Pillow / PyTorch uint8) fast path's horizontal pass (the
// vertical pass: resize_aa_vertical_arm64.go): NEON (resize_aa_arm64.s) where the kernel set says so
// (kernelSet.NEON), else the pure-Go kernels of resize_aa.go, which they equal bit for bit
// (TestAAHNEONEqualsScalar, TestAAVNEONEqualsScalar, and the whole-path tests such as
// TestAntialiasFastPathEqualsGeneral under qemu-aarch64: scripts/test_arm64.sh). The amd64-only
// kernel aaHRows4W declines here, so that its callers run these.

// aaHRows is the horizontal pass (aaHRow) over one or two rows (h1 nil: one).
func (k *kernelSet) aaHRows(h0, h1 []uint8, src []uint8, rb0, rb1 int, a *aaPlan, p *Plan) {
	k.aaHRow(h0, src, rb0, a, p)
	if h1 != nil {
		k.aaHRow(h1, src, rb1, a, p)
	}
}

// aaHRows4 is the horizontal pass (aaHRow) over four rows (h[q] from the row at byte offset rb[q]).
func (k *kernelSet) aaHRows4(h *[4][]uint8, rb *[4]int, src []uint8, a *aaPlan, p *Plan) {
	for q := range h {
		k.aaHRow(h[q], src, rb[q], a, p)
	}
}

// aaHRow computes Pillow's horizontal pass (ImagingResampleHorizontal_8bpc) of the row at rb into
// planar d (plane c at c*n): per column and channel clampU8((2^21 + sum(p*w)) >> 22). With k.NEON
// and the plan's NEON tables (aaPlan.buildNEON), aaHNEON takes the prefix of columns whose loads stay
// inside src (aaPlan.nend), aaHScalar the rest (near the end of the array).
// Invariants: len(d) >= 3n; without the tables (planar plans, kernel sets without NEON) it is aaHScalar.
// Twin: aaHScalar; proved by TestAAHNEONEqualsScalar and TestAntialiasFastPathEqualsGeneral.
// Why: the 1080p -> 224 downscale spends most of its time in this pass (17-35 taps a column).
func (k *kernelSet) aaHRow(d []uint8, src []uint8, rb int, a *aaPlan, p *Plan) {
	n := len(a.cols)
	if !k.NEON || len(a.ncols) != n || n == 0 || len(a.nw) == 0 {
		aaHScalar(d, src, rb, a, p, 0, n)
		return
	}
	d = d[:3*n]
	lim := len(src) - (rb + a.minOff)
	m := n
	if int(a.nend[n-1]) > lim {
		m = sort.Search(n, func(j int) bool { return int(a.nend[j]) > lim })
	}
	if m > 0 {
		row := unsafe.Add(unsafe.Pointer(unsafe.SliceData(src)), rb+a.minOff)
		aaHNEON(row, unsafe.Pointer(&a.ncols[0]), unsafe.Pointer(&a.nw[0]), unsafe.Pointer(&d[0]), m, n)
	}
	if m < n {
		aaHScalar(d, src, rb, a, p, m, n)
	}
}

// aaHNEON runs aaHRow's NEON loop over nc >= 1 columns (aaNCol from cols, weights nw), writing
// column j's channels to d[j], d[n+j], d[2n+j]. Per group of 8 taps one LD3 splits 8 pixels into
// their channels, each widened to int32 and multiplied by the int32 weights into an accumulator
// (MLA: integer, wrapping as Go's int32 sums); a tail of 1-4 taps takes the low 4 pixels only.
// The accumulators start at (2^21, 0, 0, 0), pairwise adds (ADDP) reduce them, SSHR #22 and two
// saturating narrows (SQXTUN, UQXTN) are clampU8.
// Invariants: each column's loads (24 bytes a group or tail from row+off) lie inside the array
// (aaHRow checks aaPlan.nend); the weights past a column's taps are zero.
// Twin: aaHScalar; proved by TestAAHNEONEqualsScalar.
// Why: the loop in assembly (Go 1.26's archsimd has no arm64 types).
//
//go:noescape
func aaHNEON(row, cols, nw, d unsafe.Pointer, nc, n int)

// aaHRows4W declines (its 8-tap loop is AVX2's): aaHRows4 runs.
func (k *kernelSet) aaHRows4W(h *[4][]uint8, rb *[4]int, src []uint8, a *aaPlan, p *Plan, edge []byte) bool {
	return false
}
