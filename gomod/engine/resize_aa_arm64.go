package engine

import (
	"sort"
	"unsafe"
)

// The arm64 kernels of the antialias (Pillow / PyTorch uint8) fast path: NEON (resize_aa_arm64.s)
// where the kernel set says so (kernelSet.NEON), else the pure-Go kernels of resize_aa.go, which they
// equal bit for bit (TestAAHNEONEqualsScalar, TestAAVNEONEqualsScalar, and the whole-path tests such
// as TestAntialiasFastPathEqualsGeneral under qemu-aarch64: scripts/test_arm64.sh). The amd64-only
// kernels (aaHRows4W, aaVRow3, vresizeAAU8Paired) decline here, so that their callers run these.

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

// aaVRow computes Pillow's vertical pass (ImagingResampleVertical_8bpc) over the cached planar rows
// hs (plane offset po) and the normalisation, into one output plane row: per column
// clampU8((2^21 + sum(h*w)) >> 22), then (v*scale - mean) / std with one IEEE operation per step.
// With k.NEON, 16 columns per step in aaVNEON, the last len(out)%16 in aaVScalar.
// Invariants: len(wv) >= len(hs); every row holds po+len(out) bytes.
// Twin: aaVScalar, which reads the same values from the normalisation table (normTables.apply);
// proved by TestAAVNEONEqualsScalar and TestAAVRowEqualScalarRandom.
// Why: the vertical pass is the antialias path's second loop over every output value.
func (k *kernelSet) aaVRow(out []float32, hs [][]uint8, po int, wv []int32, pw []int32, vh aaVHead, scale, mean, std float32, lut *[256]float32) {
	n := len(out)
	nb := n / 16
	if !k.NEON || nb == 0 || len(hs) == 0 {
		aaVScalar(out, hs, po, wv, lut, 0)
		return
	}
	wv = wv[:len(hs)]
	for _, h := range hs {
		_ = h[po : po+n] // every row holds the columns (a panic, not a stray read, if one does not)
	}
	aaVNEON(unsafe.Pointer(&out[0]), unsafe.Pointer(&hs[0]), len(hs), po, unsafe.Pointer(&wv[0]), nb, scale, mean, std)
	if 16*nb < n {
		aaVScalar(out, hs, po, wv, lut, 16*nb)
	}
}

// aaVNEON runs aaVRow's NEON loop over nb >= 1 blocks of 16 columns and nt >= 1 rows (row t's data
// pointer at hs+24t, its weight at wv+4t): per row one 16-byte load, widened to four int32 vectors
// and multiplied by the broadcast weight into accumulators that start at 2^21 (MLA: integer); then
// SSHR #22, SMAX 0 and SMIN 255 (clampU8), SCVTF, and FMUL, FSUB, FDIV (never fused).
// Invariants: as aaVRow's.
// Twin: aaVScalar; proved by TestAAVNEONEqualsScalar.
// Why: the loop in assembly (Go 1.26's archsimd has no arm64 types).
//
//go:noescape
func aaVNEON(out, hs unsafe.Pointer, nt, po int, wv unsafe.Pointer, nb int, scale, mean, std float32)

// aaVRow3 declines (the three-plane loop is AVX2's): aaVRow runs per plane.
func (k *kernelSet) aaVRow3(out *[3][]float32, hs [][]uint8, po *[3]int, wv, pw []int32, vh aaVHead, nt *normTables, luts *[3]*[256]float32, wide bool) bool {
	return false
}

// vresizeAAU8Paired computes no column: vresizeAAU8 computes them all.
func (k *kernelSet) vresizeAAU8Paired(dst []uint8, hs [][]uint8, pw []int32, vh aaVHead) int {
	return 0
}
