package engine

import "math/bits"

// The antialias horizontal pass on AVX-512 VBMI + VNNI machines (aaHRowsZ,
// resize_aa_vnni_amd64.s): its tables, built per plan where the kernel can run (aaZEnabled). The
// kernel takes 8 taps of one row per byte permute and multiply-add; its weights are the 4-tap chunks'
// (aaChunk), two chunks per step, high halves then low halves.

// aaZCol is one column for aaHRowsZ: its first tap's byte offset (aaCol.off), its 8-tap steps, the
// index of its first step's weights in aaPlan.zw (the steps after the previous column's), and its
// split's shift, base and threshold less one (aaCol: sh with mul = 2^sh).
type aaZCol struct {
	off, steps, w, sh, base, thrm1 int32
}

// aaZW is the weights (high or low halves) of one 8-tap step of one column for aaHRowsZ: lane l
// holds the (tap 2l, tap 2l+1) pairs of the three channels, [w w' w w' w w' 0 0] (the 4-tap chunks'
// A and B lanes, two chunks per step); taps past the column's count are 0.
type aaZW [32]int16

// newAAZ builds aaHRowsZ's tables from the 4-tap chunks: the high halves' steps of all columns in
// zw[:len(zw)/2], the low halves' at the same places in the second half. It widens aaPlan.wideEnd to
// the end of the kernel's loads (64 bytes from every second step's first tap), so that aaHRows4W's
// bounds test and edge copies cover them too.
func newAAZ(a *aaPlan) {
	steps := 0
	for _, c := range a.cols {
		steps += int(c.cnt+7) / 8
	}
	a.zcols = make([]aaZCol, len(a.cols))
	a.zw = make([]aaZW, 2*steps)
	s := 0
	for j, c := range a.cols {
		nch := int(c.cnt+3) / 4
		ns := (nch + 1) / 2
		a.zcols[j] = aaZCol{off: c.off, steps: int32(ns), w: int32(s), sh: int32(bits.TrailingZeros32(uint32(c.mul))),
			base: c.base, thrm1: c.thr - 1}
		for q := 0; q < nch; q++ {
			ck, hi, lo := &a.chunks[int(c.ch)+q], &a.zw[s+q/2], &a.zw[steps+s+q/2]
			h := 16 * (q % 2)
			copy(hi[h:h+8], ck.hiA[:8])
			copy(hi[h+8:h+16], ck.hiB[:8])
			copy(lo[h:h+8], ck.loA[:8])
			copy(lo[h+8:h+16], ck.loB[:8])
		}
		s += ns
		a.wideEnd = max(a.wideEnd, int(c.off)+48*((ns-1)/2)+64)
	}
}
