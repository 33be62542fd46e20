package engine

// The fast antialias path's horizontal pass for a planar source (aaPlan.planar: a torchvision
// (C, H, W) uint8 tensor read in place), with SIMD in resize_aa_planar_amd64.go and aaHPlanar
// (resize_aa.go) as its pure-Go twin, tested bit for bit.
//
// Every channel row of a planar source is a plain byte row and all of them share the plan's column
// table, so the SIMD kernel works on six rows at once (3 channels of 2 source rows), two per 256-bit
// register (one per 128-bit lane): per output column, for each 8-tap chunk, one 16-byte load per row,
// one byte shuffle per register widening the 8 taps to int16, and VPMADDWD against the chunk's
// weights; three VPHADDD then reduce the six rows' partial sums. The weights are the plan's own
// fixed-point table (p.cols.Taps.WI, aaPlanarTab.shift bits); when a weight does not fit int16 (22-bit
// Pillow weights do not) it is split as w = hi*2^11 + lo (0 <= lo < 2^11) so that the 16-bit
// multiply-adds still give the exact 32-bit sums: sum(p*w) = 2^11*sum(p*hi) + sum(p*lo).

// aaPlanarSplit is where a weight that does not fit int16 is split (w = hi<<aaPlanarSplit + lo).
const aaPlanarSplit = 11

// aaPlanarChunk is 8 taps of one column: weights (or their high parts) in hi, low parts in lo (only
// with aaPlanarTab.split), each repeated in both 128-bit lanes; taps past the column's count are 0.
type aaPlanarChunk struct {
	hi, lo [16]int16
}

// aaPlanarTab is the planar horizontal pass's share of an aaPlan.
type aaPlanarTab struct {
	chunks []aaPlanarChunk
	first  []int32 // column j's chunks are chunks[first[j]:first[j+1]]
	winEnd int     // relative end (from a row's minOff origin) of the bytes the 16-byte loads read
	split  bool    // some weight does not fit int16: hi/lo halves
	shift  uint64  // fixed-point bits of the table (the sums are rounded and shifted by it)
}

// aaTableShift is the fixed-point precision of the plan's integer column and row tables.
func aaTableShift(p *Plan) uint64 { return pilPrecisionBits }

// newAAPlanarTab builds the planar SIMD tables of a (planar) aaPlan from the plan's column weights.
func newAAPlanarTab(a *aaPlan, p *Plan) *aaPlanarTab {
	ct := &p.cols.Taps
	t := &aaPlanarTab{first: make([]int32, len(a.cols)+1), shift: aaTableShift(p)}
	for j := range a.cols {
		c := a.cols[j]
		for _, w := range ct.WI[c.w : c.w+c.cnt] {
			if w > 1<<15-1 || w < -1<<15 {
				t.split = true
			}
		}
	}
	for j := range a.cols {
		c := a.cols[j]
		t.first[j] = int32(len(t.chunks))
		for q := int32(0); q < c.cnt; q += 8 {
			var ck aaPlanarChunk
			for i := int32(0); i < 8 && q+i < c.cnt; i++ {
				w := ct.WI[c.w+q+i]
				hi, lo := w, int32(0)
				if t.split {
					hi, lo = w>>aaPlanarSplit, w&(1<<aaPlanarSplit-1)
				}
				ck.hi[i], ck.hi[8+i] = int16(hi), int16(hi)
				ck.lo[i], ck.lo[8+i] = int16(lo), int16(lo)
			}
			t.chunks = append(t.chunks, ck)
		}
		nch := len(t.chunks) - int(t.first[j])
		t.winEnd = max(t.winEnd, int(c.off)+8*max(nch-1, 0)+16)
	}
	t.first[len(a.cols)] = int32(len(t.chunks))
	return t
}
