package engine

// The antialias horizontal pass on AVX-512 VBMI + VNNI machines (aaHRowsZ,
// resize_aa_vnni_amd64.s): its tables, built per plan where the kernel set runs it (kernelSet.AAHZ). The
// kernel takes 8 taps of one row per byte permute and multiply-add; its weights are the 4-tap chunks'
// (aaChunk), two chunks per step, high halves then low halves.

// aaZW is the weights (high or low halves) of one 8-tap step of one column for aaHRowsZ: lane l
// holds the (tap 2l, tap 2l+1) pairs of the three channels, [w w' w w' w w' 0 0] (the 4-tap chunks'
// A and B lanes, two chunks per step); taps past the column's count are 0. A tail step holds its one
// chunk's lanes twice (lanes 2, 3 multiply the second row).
type aaZW [32]int16

// newAAZ builds aaHRowsZ's tables from the 4-tap chunks: the high halves' steps of all columns in
// zw[:len(zw)/2], the low halves' at the same places in the second half. It widens aaPlan.wideEnd to
// the end of the kernel's loads (64 bytes from each full pair's or lone step's first tap, 32 from a
// tail's), so that aaHRows4W's bounds test and edge copies cover them too.
func newAAZ(a *aaPlan) {
	steps := 0
	for _, c := range a.cols {
		steps += int(c.cnt+7) / 8
	}
	a.zcols = make([]aaAsmCol, len(a.cols))
	a.zw = make([]aaZW, 2*steps)
	s := 0
	for j, c := range a.cols {
		nch := int(c.cnt+3) / 4
		full, tail := nch/2, nch%2
		a.zcols[j] = asmCol(&c, int32(full), int32(tail), int32(s))
		for q := 0; q < nch; q++ {
			ck, hi, lo := &a.chunks[int(c.ch)+q], &a.zw[s+q/2], &a.zw[steps+s+q/2]
			for h := 16 * (q % 2); h < 32; h += 16 {
				copy(hi[h:h+8], ck.hiA[:8])
				copy(hi[h+8:h+16], ck.hiB[:8])
				copy(lo[h:h+8], ck.loA[:8])
				copy(lo[h+8:h+16], ck.loB[:8])
				if q < 2*full {
					break // a full step's second chunk is its own
				}
			}
		}
		s += full + tail
		end := int(c.off) + 48*(full/2) // past the pairs of full steps
		if full%2 == 1 {
			end += 64 // a lone full step
		} else if full > 0 {
			end += 16 // the last pair's loads end 64 bytes from its first tap, 16 past this
		}
		if tail == 1 {
			end = max(end, int(c.off)+24*full+32)
		}
		a.wideEnd = max(a.wideEnd, end)
	}
}
