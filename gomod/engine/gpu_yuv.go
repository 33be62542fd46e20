package engine

import (
	"fmt"
	"slices"
)

// The GPU side of YUV sources (yuv.go): the goprep_preprocess_yuv_c* kernels read the planes and
// convert each tap's pixel as they read it (kernels/resize.cuh: gp_ldr), with the CPU converter's
// fixed-point coefficients (yuvCoef), which the descriptor carries (gp_image.yuv). The kernel's row
// table locates each row tap's Y samples, two more tables its U and V samples (pixel 0 of the row,
// format byte positions included), and the column table holds pixel columns (the CPU's holds RGB
// offsets, 3x), so a tap reads the value the CPU's converted row holds at that pixel.

// yuvKernelName is a YUV plan's entry point (kernels/preprocess.cu).
func yuvKernelName(c int) string { return fmt.Sprintf("goprep_preprocess_yuv_c%d", c) }

// YUVKernelNames are the YUV entry points, for output channel counts 1-4.
func YUVKernelNames() []string {
	var out []string
	for c := 1; c <= 4; c++ {
		out = append(out, yuvKernelName(c))
	}
	return out
}

// yuvRowTables are, per row tap of the plan, the byte offsets of the tap row's Y, U and V samples of
// pixel 0 from the image origin.
func (p *Plan) yuvRowTables() (y, u, v []int64) {
	yp := p.yuv
	n := len(p.rows.Off)
	y, u, v = make([]int64, n), make([]int64, n), make([]int64, n)
	for i, r := range p.rows.Off {
		cr := r >> yp.cShift
		y[i] = int64(yp.yOff + r*yp.yRow)
		u[i] = int64(yp.uOff + cr*yp.uRow)
		v[i] = int64(yp.vOff + cr*yp.vRow)
	}
	return y, u, v
}

// newYUVStage is a YUV plan's row staging: of each plane, only the rows the plan reads (the Y rows of
// its row taps, their chroma rows), and of those only the bytes of the pixel pairs between the
// leftmost and rightmost column it reads. Nil when that saves less than 10% of the image's span.
func newYUVStage(p *Plan) *RowStage {
	if len(p.rows.Off) == 0 || len(p.cols.Off) == 0 {
		return nil
	}
	yp, in := p.yuv, &p.Spec.In
	g := yuvFormats[in.YUV.Format]
	pl := in.YUV.Planes
	x0 := (slices.Min(p.cols.Off) / 3) &^ 1
	x1 := (slices.Max(p.cols.Off)/3 + 2) &^ 1
	rows := slices.Clone(p.rows.Off)
	slices.Sort(rows)
	rows = slices.Compact(rows)
	s := &RowStage{rows: rows}
	// at[i] maps a row of plane i to where its staged bytes begin
	at := make([]map[int]int, len(pl))
	for i := range pl {
		at[i] = map[int]int{}
		prs := rows
		if i > 0 {
			prs = nil
			for _, r := range rows {
				prs = append(prs, r>>yp.cShift)
			}
			prs = slices.Compact(prs)
		}
		skip, n := x0/2*g.rowBytes2[i], (x1-x0)/2*g.rowBytes2[i]
		for _, r := range prs {
			src := int(pl[i].Off) + r*int(pl[i].Stride) + skip
			at[i][r] = s.elems - skip
			if k := len(s.pieces); k > 0 && s.pieces[k-1][0]+s.pieces[k-1][2] == s.elems && s.pieces[k-1][1]+s.pieces[k-1][2] == src {
				s.pieces[k-1][2] += n
			} else {
				s.pieces = append(s.pieces, [3]int{s.elems, src, n})
			}
			s.elems += n
		}
	}
	if s.elems*10 > p.imgElems*9 {
		return nil
	}
	n := len(p.rows.Off)
	s.off, s.yuvU, s.yuvV = make([]int64, n), make([]int64, n), make([]int64, n)
	for i, r := range p.rows.Off {
		cr := r >> yp.cShift
		s.off[i] = int64(at[0][r] + g.yOff)
		s.yuvU[i] = int64(at[g.uP][cr] + g.uOff)
		s.yuvV[i] = int64(at[g.vP][cr] + g.vOff)
	}
	return s
}

// yuvTemplate fills a YUV plan's descriptor: the row tables (staged or from the image origin), the
// column table as pixel columns, the converter's coefficients and sample steps.
func (b *DeviceBatch) yuvTemplate(p *Plan, d *gpImage, staged bool) {
	yp := p.yuv
	var y, u, v []int64
	if staged {
		st := p.GPUStage()
		y, u, v = st.off, st.yuvU, st.yuvV
	} else {
		y, u, v = p.yuvRowTables()
	}
	cols := make([]int64, len(p.cols.Off))
	for i, o := range p.cols.Off {
		cols[i] = int64(o / 3)
	}
	d.Rows, d.Cols = b.axis(&p.rows, y), b.axis(&p.cols, cols)
	k := yp.coef
	d.Yuv = gpYUV{
		U: b.put(bytesOf(u)), V: b.put(bytesOf(v)),
		Cy: k.cy, Cr: k.cr, Cgu: k.cgu, Cgv: k.cgv, Cb: k.cb, Yoff: k.yoff, Ylo: k.ylo,
		Ystep: int32(yp.yStep), Cstep: int32(yp.cStep),
	}
	d.Vec = 0
}
