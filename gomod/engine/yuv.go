package engine

import (
	"math"
	"slices"
	"unsafe"
)

// YUV frame sources (NV12, NV21, I420, YUYV, UYVY): the colour conversion fused into the resize's row
// reads. A YUV plan sees its source as a virtual interleaved RGB image of In.H x In.W x 3 (NewPlan
// gives it the strides h = 1, w = 3, c = 1, so a row table entry is a row index and a column table
// entry the offset of a pixel in an RGB row); the worker converts each source row the plan reads,
// only at the columns its taps read (yuvPlan.runs and sparse, yuv_sparse.go), into a slot of its buffer of
// converted rows (worker.yuvAt, worker.yuvBuf), which every row kernel then reads as it reads an
// RGB source: the general path, the bilinear fast path's fused rows (duoH, fusedRow) and the
// antialias SIMD path (aaRow's groups of four rows) alike. A 4:2:0 row and its chroma partner are
// converted in one pass when the plan reads both. No full-resolution RGB image is ever made, and
// the results equal converting first and resizing after, bit for bit, for every resize rule.
// The converter is yuvConvScalar, or its AVX2 twin (yuv_amd64.go) or NEON twin (yuv_arm64.go), 16
// pixels a step.
//
// The stage is a function of (Y, Cb, Cr) samples and their siting only, so a JPEG decoder's raw
// YCbCr planes (4:2:0 or 4:2:2, BT.601 full range: the "jpeg" preset) fit it as I420-like planes.

// YUVSpec is the layout and colour of a YUV source (InputSpec.YUV). Planes hold, per format:
// nv12/nv21: Y (H rows of W bytes), then the interleaved chroma (H/2 rows of W bytes: U,V pairs for
// nv12, V,U for nv21); i420: Y, U (H/2 rows of W/2 bytes), V (the same); yuyv/uyvy: one plane of
// H rows of 2W bytes (Y0 U Y1 V / U Y0 V Y1 per pixel pair). Chroma is sited as OpenCV reads it:
// each chroma sample covers a 2x2 (4:2:0) or 2x1 (4:2:2) block, replicated (no filtering).
type YUVSpec struct {
	Format string     `json:"format"`           // "nv12", "nv21", "i420", "yuyv", "uyvy"
	Matrix string     `json:"matrix"`           // "bt601", "bt709", "bt2020"
	Range  string     `json:"range"`            // "limited" (Y 16-235, C 16-240) or "full"
	OpenCV bool       `json:"opencv,omitempty"` // OpenCV's constants and Y clamp (bt601 limited only)
	Planes []YUVPlane `json:"planes"`
}

// YUVPlane is one plane of a YUV image: its element (0, 0) lies Off bytes from the source pointer
// (the image's origin, Job.Src; negative when it comes first in memory), its rows Stride bytes apart.
type YUVPlane struct {
	Off    int64 `json:"off"`
	Stride int64 `json:"stride"`
}

// yuvMatrices are the (Kr, Kb) of each colour matrix (ITU-R BT.601, BT.709, BT.2020 non-constant).
var yuvMatrices = map[string][2]float64{"bt601": {0.299, 0.114}, "bt709": {0.2126, 0.0722}, "bt2020": {0.2627, 0.0593}}

// yuvGeom is a format's geometry: planes, the bytes of a row of each plane per pixel of width (x2,
// so 4:2:0 chroma's W/2 is exact), whether the chroma is vertically subsampled, and which sizes must
// be even.
type yuvGeom struct {
	planes           int
	rowBytes2        [3]int // a plane row's bytes = rowBytes2 * W / 2
	chromaRows       int    // 2: chroma rows are H/2 (4:2:0), 1: H (4:2:2, in the same plane)
	evenW, evenH     bool
	yOff, uOff, vOff int // element offsets of Y, U, V in their planes' rows
	uP, vP           int // the planes of U and V (Y's is plane 0)
	yStep, cStep     int // bytes between consecutive Y samples, and between chroma samples
}

var yuvFormats = map[string]yuvGeom{
	"nv12": {planes: 2, rowBytes2: [3]int{2, 2}, chromaRows: 2, evenW: true, evenH: true, uOff: 0, vOff: 1, uP: 1, vP: 1, yStep: 1, cStep: 2},
	"nv21": {planes: 2, rowBytes2: [3]int{2, 2}, chromaRows: 2, evenW: true, evenH: true, uOff: 1, vOff: 0, uP: 1, vP: 1, yStep: 1, cStep: 2},
	"i420": {planes: 3, rowBytes2: [3]int{2, 1, 1}, chromaRows: 2, evenW: true, evenH: true, uP: 1, vP: 2, yStep: 1, cStep: 1},
	"yuyv": {planes: 1, rowBytes2: [3]int{4}, chromaRows: 1, evenW: true, yOff: 0, uOff: 1, vOff: 3, yStep: 2, cStep: 4},
	"uyvy": {planes: 1, rowBytes2: [3]int{4}, chromaRows: 1, evenW: true, yOff: 1, uOff: 0, vOff: 2, yStep: 2, cStep: 4},
}

// yuvNames lists a map's keys in order, for error messages.
func yuvNames[V any](m map[string]V) string {
	k := make([]string, 0, len(m))
	for n := range m {
		k = append(k, "'"+n+"'")
	}
	slices.Sort(k)
	s := ""
	for i, n := range k {
		if i > 0 {
			s += ", "
		}
		s += n
	}
	return s
}

// validateYUV checks a YUV source: the format, matrix and range names, the sizes the format needs
// even, each plane's row stride against its row's bytes, plane extents that stay far from int64's
// limit and planes that do not overlap one another. Called by Spec.Validate with the rest of In.
func validateYUV(in *InputSpec) error {
	y := in.YUV
	g, ok := yuvFormats[y.Format]
	if !ok {
		return errf(CodeInvalidArgument, "format", "must be one of %s, got %q", yuvNames(yuvFormats), y.Format)
	}
	if _, ok := yuvMatrices[y.Matrix]; !ok {
		return errf(CodeInvalidArgument, "matrix", "must be one of %s, got %q", yuvNames(yuvMatrices), y.Matrix)
	}
	if y.Range != "limited" && y.Range != "full" {
		return errf(CodeInvalidArgument, "range", "must be 'limited' or 'full', got %q", y.Range)
	}
	if y.OpenCV && (y.Matrix != "bt601" || y.Range != "limited") {
		return errf(CodeInvalidArgument, "preset", "OpenCV's arithmetic is BT.601 limited range only")
	}
	if in.DType != U8 || in.C != 3 {
		return errf(CodeBadDType, "src", "a YUV source is 8-bit and converts to 3 channels")
	}
	if in.Strides[1] != 0 || in.Strides[2] != 0 || in.Strides[3] != 0 {
		return errf(CodeInvalidArgument, "src", "a YUV source's layout is its planes: pixel strides must be 0")
	}
	if g.evenW && in.W%2 != 0 || g.evenH && in.H%2 != 0 {
		what := "width"
		if g.evenH {
			what = "width and height"
		}
		return errf(CodeBadShape, "src", "%s needs an even %s (chroma covers 2x2 or 2x1 pixels), got %dx%d", y.Format, what, in.H, in.W)
	}
	if len(y.Planes) != g.planes {
		return errf(CodeBadShape, "src", "%s has %d planes, got %d", y.Format, g.planes, len(y.Planes))
	}
	var spans [][2]int64
	for i, pl := range y.Planes {
		rows, bytes := yuvPlaneSize(g, i, in.H, in.W)
		if pl.Stride < int64(bytes) {
			return errf(CodeBadShape, "src", "plane %d's row stride %d is less than its %d bytes per row: rows would overlap", i, pl.Stride, bytes)
		}
		if pl.Stride > MaxDim*16 || pl.Off > 1<<50 || pl.Off < -(1<<50) || int64(rows-1) > (1<<50)/pl.Stride {
			return errf(CodeTooLarge, "src", "plane %d spans more than 2^50 bytes", i)
		}
		spans = append(spans, [2]int64{pl.Off, pl.Off + int64(rows-1)*pl.Stride + int64(bytes)})
	}
	for i := range spans {
		for j := range i {
			if spans[i][0] < spans[j][1] && spans[j][0] < spans[i][1] {
				return errf(CodeBadShape, "src", "planes %d and %d overlap in memory", j, i)
			}
		}
	}
	return nil
}

// yuvPlaneSize is plane i's rows and bytes per row for an h x w image.
func yuvPlaneSize(g yuvGeom, i, h, w int) (rows, bytes int) {
	rows = h
	if i > 0 {
		rows = h / g.chromaRows
	}
	return rows, g.rowBytes2[i] * w / 2
}

// yuvCoef is the fixed-point conversion, 20 fractional bits (OpenCV's ITUR_BT_601_SHIFT):
// R = sat((max(Y-yoff, ylo)*cy + cr*V' + half) >> 20), G with cgu*U' + cgv*V', B with cb*U', where
// U' = U-128, V' = V-128. OpenCV's constants and its clamp of Y below 16 (ylo 0) for the opencv
// preset; otherwise the matrix's exact coefficients rounded to 2^-20 and no clamp, which is within
// 1 level of the float64 formula (the rounding error is below 2^-11 of a level).
type yuvCoef struct {
	cy, cr, cgu, cgv, cb int32
	yoff, ylo            int32
}

const yuvShift = 20

func newYUVCoef(y *YUVSpec) yuvCoef {
	if y.OpenCV { // modules/imgproc/src/color_yuv.simd.hpp: ITUR_BT_601_C*
		return yuvCoef{cy: 1220542, cr: 1673527, cgu: -409993, cgv: -852492, cb: 2116026, yoff: 16, ylo: 0}
	}
	m := yuvMatrices[y.Matrix]
	kr, kb := m[0], m[1]
	kg := 1 - kr - kb
	ys, cs, yoff := 1.0, 1.0, int32(0)
	if y.Range == "limited" {
		ys, cs, yoff = 255.0/219, 255.0/224, 16
	}
	fx := func(v float64) int32 { return int32(math.Round(v * (1 << yuvShift))) }
	return yuvCoef{
		cy: fx(ys), cr: fx(2 * (1 - kr) * cs), cb: fx(2 * (1 - kb) * cs),
		cgu: fx(-2 * kb * (1 - kb) / kg * cs), cgv: fx(-2 * kr * (1 - kr) / kg * cs),
		yoff: yoff, ylo: -255,
	}
}

// yuvFold is the SIMD converters' constants as integers: cy, ymin, cr, cb, cgu, cgv, kr, kg, kb.
// The scalar sums (max(Y-yoff, ylo)*cy + half + cr*(V-128)) etc. regrouped: the Y term as
// max(Y, ymin)*cy with ymin = yoff+ylo, and half - 128*c - yoff*cy folded into one constant per
// channel (kr, kg, kb); exact in int32 (yuvVecs, yuv_amd64.go, says why). Read by yuv_amd64.go,
// yuv_sparse_amd64.go and yuv_arm64.go.
func yuvFold(c *yuvCoef) [9]int32 {
	yk := c.yoff * c.cy
	const half = 1 << (yuvShift - 1)
	return [9]int32{c.cy, c.yoff + c.ylo, c.cr, c.cb, c.cgu, c.cgv,
		half - 128*c.cr - yk, half - 128*(c.cgu+c.cgv) - yk, half - 128*c.cb - yk}
}

// yuvPlan is a YUV plan's reading of its planes: element offsets from the image origin (Y, U, V of
// pixel (0, 0), the format's byte positions included), row strides, the chroma rows' shift, the
// columns to convert, and the layout of the worker's buffer of converted rows (worker.yuvBuf).
type yuvPlan struct {
	coef             yuvCoef
	kind             yuvKind
	yOff, uOff, vOff int // element offsets of pixel (0, 0)'s Y, U, V from the image origin
	yRow, uRow, vRow int // row strides
	yStep, cStep     int // bytes between consecutive Y samples, and between chroma samples
	// packed formats: the byte positions of (Y0, U, Y1, V) within a 4-byte pixel pair
	pk     [4]int
	cShift int // chroma row = row >> cShift
	// the source columns converted (yuv_sparse.go: setColumns): spans [x0, x1) ascending, x0 and
	// x1 even, through the dense converter; then pixel pairs (2q, 2q+1) ascending, outside the
	// spans, through yuvConvPairs, whose gathered chunks have the layout compact
	runs    [][2]int
	sparse  []int32
	compact *yuvPlan
	vblocks []yuvBlock // the VBMI sparse converter's steps and output windows (buildBlocks)
	vwins   []yuvWin
	// The buffer: ring slots of stride bytes, a slot's pixel 0 lead bytes into it; a row is kept in
	// slot idx % ring, idx its logical source row (axis.Src). lead and the slack after 3W bytes let
	// the SIMD row kernels load past a row's ends (into bytes no tap weighs) without leaving the
	// buffer, and the converter's 16-byte stores spill up to 8 bytes past a run.
	ring, stride, lead int
	// pairs: 4:2:0 with a view step of +-1: converting row r also converts its chroma partner r^1
	// when the plan reads it (need, a bitset of image rows), one pass over the chroma row for both
	pairs bool
	need  []uint64
	sy    int // the view's row step (+-1 where pairs)
}

// yuvKind is how a format's samples lie: yuvSemi (nv12/nv21: a Y plane and one plane of chroma
// pairs), yuvPlanar (i420: Y, U, V planes), yuvPacked (yuyv/uyvy: one plane of 4-byte pixel pairs).
type yuvKind uint8

const (
	yuvSemi yuvKind = iota
	yuvPlanar
	yuvPacked
)

// yuvRunGap: in the merged spans (setColumns' dense choice), columns merge across gaps narrower
// than this, so that taps a few columns apart become one span the vectorised converter sweeps,
// rather than many 2-pixel runs.
const yuvRunGap = 24

// newYUVPlan builds the plan's YUV tables; the columns are those of the plan's column taps (all of
// a vertical-first row's span, whose vertical pass reads it whole).
func newYUVPlan(p *Plan) *yuvPlan {
	s := &p.Spec
	y := s.In.YUV
	g := yuvFormats[y.Format]
	pl := y.Planes
	yp := &yuvPlan{
		coef: newYUVCoef(y),
		yOff: int(pl[0].Off) + g.yOff, uOff: int(pl[g.uP].Off) + g.uOff, vOff: int(pl[g.vP].Off) + g.vOff,
		yRow: int(pl[0].Stride), uRow: int(pl[g.uP].Stride), vRow: int(pl[g.vP].Stride),
		yStep: g.yStep, cStep: g.cStep, cShift: g.chromaRows - 1,
	}
	switch {
	case g.planes == 3:
		yp.kind = yuvPlanar
	case g.planes == 1:
		yp.kind = yuvPacked
		yp.pk = [4]int{g.yOff, g.uOff, g.yOff + 2, g.vOff}
	}
	yp.compact = yuvCompact(yp.coef, yp.kind == yuvSemi && yp.vOff < yp.uOff)
	yp.setColumns(yuvPlanCols(p), s.In.W, yuvSparseCostOf(p.kern), yuvAuto)
	// Rows live at once: a window of K consecutive logical rows (vfirstRowU8 holds them all), or the
	// fast antialias path's group, within 3 rows either side of a window (aaLookahead); a pair's
	// partner lies one row further. Slots are idx % ring, so a ring of K+10 never evicts a row its
	// caller still holds.
	yp.ring = (p.rows.Taps.K + 11) &^ 1
	yp.lead = 64
	yp.stride = (3*s.In.W + 2*yp.lead + 63) &^ 63
	yp.sy = s.Pre.SY
	if yp.pairs = yp.cShift == 1 && (s.Pre.SY == 1 || s.Pre.SY == -1); yp.pairs {
		yp.need = make([]uint64, (s.In.H+63)/64)
		for _, r := range p.rows.Off {
			yp.need[r/64] |= 1 << (r % 64)
		}
	}
	return yp
}

// yuvPlanCols are the source columns a plan's taps read, ascending and distinct: its column
// table's, or all of a vertical-first row's span (its vertical pass reads the span whole).
func yuvPlanCols(p *Plan) []int {
	var cols []int
	if p.vfirst {
		for x := p.vfLo / 3; x < (p.vfHi+2)/3; x++ {
			cols = append(cols, x)
		}
		return cols
	}
	for _, o := range p.cols.Off {
		cols = append(cols, o/3)
	}
	slices.Sort(cols)
	return slices.Compact(cols)
}

// yuvExtent is the extent of the elements a YUV source holds, relative to its data pointer, for all
// images and for one ([lo, lo+n) as extent returns).
func yuvExtent(in *InputSpec, n int) (lo, span, imgLo, imgN int) {
	g := yuvFormats[in.YUV.Format]
	first := true
	var a, b int64
	for i, pl := range in.YUV.Planes {
		rows, bytes := yuvPlaneSize(g, i, in.H, in.W)
		s, e := pl.Off, pl.Off+int64(rows-1)*pl.Stride+int64(bytes)
		if first || s < a {
			a = s
		}
		if first || e > b {
			b = e
		}
		first = false
	}
	imgLo, imgN = int(a), int(b-a)
	sn := int(in.Strides[0])
	lo, hi := imgLo+min(0, (n-1)*sn), imgLo+imgN+max(0, (n-1)*sn)
	return lo, hi - lo, imgLo, imgN
}

// checkYUVBounds proves that every sample the converter can read lies inside the source's extent:
// the row table holds image rows, the column table RGB offsets of image columns, and every plane of
// the first and last image lies in [minOff, minOff+spanElems).
func (p *Plan) checkYUVBounds() error {
	in := &p.Spec.In
	for _, r := range p.rows.Off {
		if r < 0 || r >= in.H {
			return errf(CodeInternal, "", "plan tables address rows outside the YUV image")
		}
	}
	for _, c := range p.cols.Off {
		if c < 0 || c%3 != 0 || c/3 >= in.W {
			return errf(CodeInternal, "", "plan tables address columns outside the YUV image")
		}
	}
	for _, img := range []int{0, p.N - 1} {
		if o := img * p.strideN; o+p.imgLo < p.minOff || o+p.imgLo+p.imgElems > p.minOff+p.spanElems {
			return errf(CodeInternal, "", "YUV planes lie outside the source extent")
		}
	}
	return nil
}

// yuvAt returns where source row table entry ri lies converted to interleaved RGB in w.yuvBuf:
// the offset of its pixel 0, indexed from there as the column table indexes a row (3 bytes a
// pixel; only the plan's runs of columns hold converted values, elsewhere stale bytes no tap
// weighs). A row is converted once per worker and image while its slot keeps it; a 4:2:0 row's
// chroma partner (the other row of its chroma row) is converted in the same pass when the plan
// reads it.
func (w *worker) yuvAt(p *Plan, src []uint8, base, ri int) int {
	yp := p.yuv
	idx, r := int(p.rows.Src[ri]), p.rows.Off[ri]
	s := idx % yp.ring
	at := yp.lead + s*yp.stride
	if w.yuvKeys[s] == int32(idx) {
		return at
	}
	w.yuvKeys[s] = int32(idx)
	n := 3*p.Spec.In.W + yp.lead // a row and the slack the converter's stores spill into
	d0 := w.yuvBuf[at : at+n]
	var d1 []uint8
	r1 := r ^ 1
	if yp.pairs && r1 < p.Spec.In.H && yp.need[r1/64]&(1<<(r1%64)) != 0 {
		idx1 := idx + (r1-r)*yp.sy
		s1 := idx1 % yp.ring
		if idx1 >= 0 && w.yuvKeys[s1] != int32(idx1) {
			w.yuvKeys[s1] = int32(idx1)
			at1 := yp.lead + s1*yp.stride
			d1 = w.yuvBuf[at1 : at1+n]
		}
	}
	if d1 == nil {
		r1 = r
	}
	cr := r >> yp.cShift
	ys0, ys1 := src[base+yp.yOff+r*yp.yRow:], src[base+yp.yOff+r1*yp.yRow:]
	us, vs := src[base+yp.uOff+cr*yp.uRow:], src[base+yp.vOff+cr*yp.vRow:]
	for _, run := range yp.runs {
		p.kern.yuvConv(d0, d1, ys0, ys1, us, vs, run[0], run[1], yp)
	}
	p.kern.yuvConvPairs(d0, d1, ys0, ys1, us, vs, yp.sparse, yp) // after the runs: see setColumns
	return at
}

// bufLen is the bytes of a worker's converted-row buffer for a YUV plan: ring slots, and a
// slot's worth of slack past the last for the row kernels' loads past a row's end.
func (yp *yuvPlan) bufLen() int { return (yp.ring + 1) * yp.stride }

// yuvConvScalar converts pixels [x0, x1) (x0, x1 even) of luma row ys0 into d0 and, when d1 is not
// nil, of luma row ys1 into d1, both rows sharing the chroma row us/vs (4:2:0; ys1 is ys0's
// partner): RGB at d[3x:3x+3] from Y at ys[yOff'+x*yStep] and chroma at us, vs[(x/2)*cStep] (the
// slices start at pixel 0's samples). The chroma products are computed once per pixel pair and
// both rows. The GPU kernels repeat this arithmetic per tap (kernels/resize.cuh: gp_ldr). Bounds are checked once up front, then
// the loop reads through pointers: with per-pixel bounds checks and a branchy clamp the 1080p
// ImageNet task spent 8 ns a pixel converting.
// Twin of kernelSet.yuvConv's SIMD loop (yuv_amd64.go): the same integers by construction.
func yuvConvScalar(d0, d1, ys0, ys1, us, vs []uint8, x0, x1 int, yp *yuvPlan) {
	if x1 <= x0 {
		return
	}
	const half = 1 << (yuvShift - 1)
	yStep, cStep := yp.yStep, yp.cStep
	last := ((x1 - 1) >> 1) * cStep
	_, _, _, _ = d0[3*x1-1], ys0[(x1-1)*yStep], us[last], vs[last]
	rows := 1
	if d1 != nil {
		_, _ = d1[3*x1-1], ys1[(x1-1)*yStep]
		rows = 2
	}
	dp0, dp1 := unsafe.Pointer(unsafe.SliceData(d0)), unsafe.Pointer(unsafe.SliceData(d1))
	yq0, yq1 := unsafe.Pointer(unsafe.SliceData(ys0)), unsafe.Pointer(unsafe.SliceData(ys1))
	up, vp := unsafe.Pointer(unsafe.SliceData(us)), unsafe.Pointer(unsafe.SliceData(vs))
	k := &yp.coef
	cy, cr, cgu, cgv, cb, yoff, ylo := k.cy, k.cr, k.cgu, k.cgv, k.cb, k.yoff, k.ylo
	sat := &yuvSat
	for x := x0; x < x1; x += 2 {
		c := (x >> 1) * cStep
		u, v := int32(*(*uint8)(unsafe.Add(up, c)))-128, int32(*(*uint8)(unsafe.Add(vp, c)))-128
		ruv, guv, buv := half+cr*v, half+cgu*u+cgv*v, half+cb*u
		ya := max(int32(*(*uint8)(unsafe.Add(yq0, x*yStep)))-yoff, ylo) * cy
		yb := max(int32(*(*uint8)(unsafe.Add(yq0, (x+1)*yStep)))-yoff, ylo) * cy
		d := (*[6]uint8)(unsafe.Add(dp0, 3*x))
		d[0], d[1], d[2] = sat[yuvSatIdx(ya+ruv)], sat[yuvSatIdx(ya+guv)], sat[yuvSatIdx(ya+buv)]
		d[3], d[4], d[5] = sat[yuvSatIdx(yb+ruv)], sat[yuvSatIdx(yb+guv)], sat[yuvSatIdx(yb+buv)]
		if rows == 2 {
			ya := max(int32(*(*uint8)(unsafe.Add(yq1, x*yStep)))-yoff, ylo) * cy
			yb := max(int32(*(*uint8)(unsafe.Add(yq1, (x+1)*yStep)))-yoff, ylo) * cy
			d := (*[6]uint8)(unsafe.Add(dp1, 3*x))
			d[0], d[1], d[2] = sat[yuvSatIdx(ya+ruv)], sat[yuvSatIdx(ya+guv)], sat[yuvSatIdx(ya+buv)]
			d[3], d[4], d[5] = sat[yuvSatIdx(yb+ruv)], sat[yuvSatIdx(yb+guv)], sat[yuvSatIdx(yb+buv)]
		}
	}
}

// yuvSat is saturate_cast<uchar> of v as a table at yuvSatIdx(v << yuvShift): a load in place of
// two compares and moves per channel. The converter's sums >> yuvShift lie in about [-330, 620]
// (|Y term| <= 255*1.17 or 16*1.17 below, |chroma term| <= 128*2.2 for every matrix), well inside
// the table's [-1024, 1024).
var yuvSat = func() (t [2048]uint8) {
	for i := range t {
		t[i] = uint8(min(max(i-1024, 0), 255))
	}
	return t
}()

// yuvSatIdx is the yuvSat index of a converter sum s: (s >> yuvShift) + 1024, masked so that the
// compiler drops the bounds check (sums never reach the mask; see yuvSat).
func yuvSatIdx(s int32) uint { return uint((s>>yuvShift)+1024) & 2047 }

// satU8 is saturate_cast<uchar>(int).
func satU8(v int32) uint8 {
	if uint32(v) <= 255 {
		return uint8(v)
	}
	if v < 0 {
		return 0
	}
	return 255
}
