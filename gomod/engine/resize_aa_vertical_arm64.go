package engine

import "unsafe"

// The antialias fast path's vertical pass on arm64: NEON (aaVNEON, resize_aa_vertical_arm64.s) where
// the kernel set says so (kernelSet.NEON), else the pure-Go aaVScalar, which it equals bit for bit.
// The amd64-only kernels (aaVRow3, vresizeAAU8Paired) decline here, so that their callers run aaVRow
// and vresizeAAU8.

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
