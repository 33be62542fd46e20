package engine

import "slices"

// rowStage is how a host image is staged for the GPU when its plan reads only some source rows: only
// those rows go through the pinned buffer and over PCIe, packed one after another, and the kernel
// reads them through a remapped row table. 1080p -> 224 bilinear reads 448 of 1080 rows, so this
// moves 41% of the bytes the whole image would (the review's main finding against the first design).
type rowStage struct {
	rows     []int   // distinct source row offsets (elements from the image origin), ascending
	colLo    int     // first element of a row that any column and channel reads, relative to the row
	rowElems int     // elements staged per row
	off      []int64 // the plan's row table remapped into the staged layout
	elems    int     // elements staged per image
}

// newRowStage returns the plan's row staging, or nil when staging the whole image span is as good:
// every row touched, or rows that are not compact in memory (a planar source, where one pixel's
// channels are a whole plane apart), so the packed rows would not be smaller.
func newRowStage(p *Plan) *rowStage {
	r, c := &p.rows, &p.cols
	if len(r.Off) == 0 || len(c.Off) == 0 {
		return nil
	}
	rows := slices.Clone(r.Off)
	slices.Sort(rows)
	rows = slices.Compact(rows)
	chLo, chHi := min(0, (p.inC-1)*p.strideC), max(0, (p.inC-1)*p.strideC)
	colLo := slices.Min(c.Off) + chLo
	colHi := slices.Max(c.Off) + chHi + 1
	s := &rowStage{rows: rows, colLo: colLo, rowElems: colHi - colLo}
	s.elems = len(rows) * s.rowElems
	if s.elems*10 > p.imgElems*9 { // less than 10% saved: copy the span in one piece instead
		return nil
	}
	s.off = make([]int64, len(r.Off))
	for i, o := range r.Off {
		k, _ := slices.BinarySearch(rows, o)
		s.off[i] = int64(k*s.rowElems - colLo)
	}
	return s
}

// pieces returns the staging copies of one image, as (staged, source) element ranges relative to
// the staged buffer and the image origin; rows adjacent in both are merged into one copy.
func (s *rowStage) pieces() [][3]int {
	var out [][3]int // staged start, source start, length
	for k, r := range s.rows {
		dst, src := k*s.rowElems, r+s.colLo
		if n := len(out); n > 0 && out[n-1][0]+out[n-1][2] == dst && out[n-1][1]+out[n-1][2] == src {
			out[n-1][2] += s.rowElems
			continue
		}
		out = append(out, [3]int{dst, src, s.rowElems})
	}
	return out
}

// stagedElems is how many source elements of one image go to the GPU.
func (p *Plan) stagedElems() int {
	if p.stage != nil {
		return p.stage.elems
	}
	return p.imgElems
}
