package engine

// The fast antialias path's horizontal pass for a planar source (aaPlan.planar: a torchvision
// (C, H, W) uint8 tensor read in place), with SIMD in resize_aa_planar_amd64.go and aaHPlanar
// (resize_aa.go) as its pure-Go twin, tested bit for bit.
//
// Every channel row of a planar source is a plain byte row and all of them share the plan's column
// table, so the SIMD kernel works on six rows at once (3 channels of 2 source rows) against one
// weight load per 8-tap chunk. The weights are the plan's own fixed-point table (p.cols.Taps.WI,
// aaPlanarTab.shift bits), multiplied in 32 bits: exact at any precision the table has.

// aaPlanarChunk is the weights of 8 taps of one column; taps past the column's count are 0.
type aaPlanarChunk struct {
	w [8]int32
}

// aaPlanarTab is the planar horizontal pass's share of an aaPlan.
type aaPlanarTab struct {
	chunks []aaPlanarChunk
	first  []int32 // column j's chunks are chunks[first[j]:first[j+1]]
	winEnd int     // relative end (from a row's minOff origin) of the bytes the 16-byte loads read
	shift  uint64  // fixed-point bits of the table (the sums are rounded and shifted by it)
	single bool    // every column has one chunk (at most 8 taps): chunks[j] is column j's (aaHPlanar8)
	offs   []int32 // aaCol.off of every column, packed (aaHPlanar8 steps through them by pointer)
}

// aaTableShift is the fixed-point precision of the plan's integer column and row tables.
func aaTableShift(p *Plan) uint64 { return pilPrecisionBits }

// newAAPlanarTab builds the planar SIMD tables of a (planar) aaPlan from the plan's column weights.
func newAAPlanarTab(a *aaPlan, p *Plan) *aaPlanarTab {
	ct := &p.cols.Taps
	t := &aaPlanarTab{first: make([]int32, len(a.cols)+1), shift: aaTableShift(p), single: true}
	for j := range a.cols {
		c := a.cols[j]
		t.first[j] = int32(len(t.chunks))
		for q := int32(0); q < c.cnt; q += 8 {
			var ck aaPlanarChunk
			for i := int32(0); i < 8 && q+i < c.cnt; i++ {
				ck.w[i] = ct.WI[c.w+q+i]
			}
			t.chunks = append(t.chunks, ck)
		}
		nch := len(t.chunks) - int(t.first[j])
		t.single = t.single && nch == 1
		t.winEnd = max(t.winEnd, int(c.off)+8*max(nch-1, 0)+16)
	}
	t.first[len(a.cols)] = int32(len(t.chunks))
	t.offs = make([]int32, len(a.cols))
	for j := range a.cols {
		t.offs[j] = a.cols[j].off
	}
	return t
}
