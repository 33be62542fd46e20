package engine

// The antialias fast path's vertical weights, laid out once per plan for the paired vertical loop
// (aaVTables, aaVPairs), and the pure-Go vertical pass (aaVScalar). The SIMD passes that read them:
// resize_aa_vertical_amd64.go, resize_aa_vertical_arm64.go; their pure-Go twins:
// resize_aa_vertical_other.go.

// aaVTables lays out every content row's vertical weights for the paired vertical loop (aaVPairs),
// once per plan: computing them for every output row (colShift, 16 words per pair) took ~2% of
// BenchmarkAntialias1080 (perf, cpu-clock samples), and ~2-3% of a vertical-first plan's time.
// All rows share one allocation, one row's pairs after another's and one spare pair after the last
// (aaVPairs' spare: the pointer stepping past a row's last pair stays inside the allocation, on the
// next row's first pair or the spare; a row's slice is capped there and never appended to): one
// allocation per row was most of a per-item training plan's allocations, and a spare pair per row
// a seventh of its bytes (BenchmarkNewPlanTrainCrop).
func aaVTables(rt *taps) ([][]int32, []aaVHead) {
	vw, vh := make([][]int32, len(rt.Cnt)), make([]aaVHead, len(rt.Cnt))
	total := aaVPairLen // the spare pair
	for _, c := range rt.Cnt {
		if np := (int(c) + 1) / 2; np <= aaVMaxPairs {
			total += aaVPairLen * np
		}
	}
	store := make([]int32, total)
	for r, c := range rt.Cnt {
		room := 0
		if np := (int(c) + 1) / 2; np <= aaVMaxPairs {
			room = aaVPairLen * np
		}
		vw[r], vh[r] = aaVPairs(store[:0:room+aaVPairLen], rt.WI[r*rt.K:r*rt.K+int(c)])
		store = store[room:]
	}
	return vw, vh
}

// aaVScalar is the pure-Go vertical pass plus normalisation of columns [from, len(out)) of one output
// plane row: Pillow's ImagingResampleVertical_8bpc over the cached planar rows (plane offset po), then
// the normalisation table.
func aaVScalar(out []float32, hs [][]uint8, po int, wv []int32, lut *[256]float32, from int) {
	for x := from; x < len(out); x++ {
		acc := int32(1 << (pilPrecisionBits - 1))
		for t, h := range hs {
			acc += int32(h[po+x]) * wv[t]
		}
		out[x] = lut[clampU8(acc>>pilPrecisionBits)]
	}
}

// aaVMaxPairs is the longest vertical window, in tap pairs, that aaVRow's VPMADDWD loop takes.
const aaVMaxPairs = 64

// aaVPairLen is the int32 words of one tap pair in aaVPairs' layout: 16 high halves, 16 low halves.
const aaVPairLen = 32

// aaVHead is the split of one output row's vertical weights (colShift, as for a horizontal column):
// mul = 2^sh, lo0 when no weight has a low half, and the bounds of the low halves' sum (aaCol).
type aaVHead struct {
	mul, base, thr int32
	lo0            bool
}

// aaVPairs lays out one output row's vertical weights wv for aaVRow (into buf's storage), split at
// the row's colShift: for each tap pair (2i, 2i+1; an odd last tap pairs with weight 0), the high
// halves (hi0, hi1) as int16 in one int32, sixteen times (a broadcast VPMADDWD operand, 32 bytes of
// it for AVX2, 64 for AVX-512), then the low halves the same way: aaVPairLen words per pair. Empty
// when the window is longer than aaVMaxPairs pairs. The storage has one pair to spare: the kernels'
// weight pointer steps past the last pair (never read), which checkptr accepts only inside the
// allocation.
func aaVPairs(buf []int32, wv []int32) ([]int32, aaVHead) {
	np := (len(wv) + 1) / 2
	if np > aaVMaxPairs {
		return buf[:0], aaVHead{}
	}
	if cap(buf) < aaVPairLen*(np+1) {
		buf = make([]int32, aaVPairLen*np, aaVPairLen*(np+1))
	}
	buf = buf[:aaVPairLen*np]
	sh := colShift(wv)
	var lmin, width int64
	for i := 0; i < np; i++ {
		w0, w1 := wv[2*i], int32(0)
		if 2*i+1 < len(wv) {
			w1 = wv[2*i+1]
		}
		h0, l0 := colHalves(w0, sh)
		h1, l1 := colHalves(w1, sh)
		for _, l := range [2]int16{l0, l1} {
			width += 255 * int64(max(l, -l))
			lmin += 255 * int64(min(l, 0))
		}
		hi, lo := int32(uint16(h0))|int32(uint16(h1))<<16, int32(uint16(l0))|int32(uint16(l1))<<16
		for q := 0; q < aaVPairLen/2; q++ {
			buf[aaVPairLen*i+q], buf[aaVPairLen*i+aaVPairLen/2+q] = hi, lo
		}
	}
	return buf, aaVHead{mul: 1 << sh, base: int32(1<<(pilPrecisionBits-1) + lmin),
		thr: int32(max(1<<pilPrecisionBits-width, 0)), lo0: width == 0}
}
