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
// only at the columns its taps read, into an RGB row (worker.yuvRow), which every row kernel then
// reads as it reads an RGB image. No full-resolution RGB image is ever made, and the results equal
// converting first and resizing after, bit for bit, for every resize rule.
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

// yuvPlan is a YUV plan's reading of its planes: element offsets from the image origin (Y, U, V of
// pixel (0, 0), the format's byte positions included), row strides, sample steps, the chroma rows'
// shift, the columns to convert, and the ring of converted rows a worker keeps.
type yuvPlan struct {
	coef             yuvCoef
	yOff, uOff, vOff int
	yRow, uRow, vRow int // row strides
	yStep, cStep     int
	cShift           int      // chroma row = row >> cShift
	runs             [][2]int // the source columns converted, [x0, x1) ascending
	ring             int      // converted rows a worker keeps: the vertical taps one output row reads
}

// newYUVPlan builds the plan's YUV tables; the columns are those of the plan's column taps (all of
// a vertical-first row's span, whose vertical pass reads it whole).
func newYUVPlan(p *Plan) *yuvPlan {
	y := p.Spec.In.YUV
	g := yuvFormats[y.Format]
	pl := y.Planes
	yp := &yuvPlan{
		coef: newYUVCoef(y),
		yOff: int(pl[0].Off) + g.yOff, uOff: int(pl[g.uP].Off) + g.uOff, vOff: int(pl[g.vP].Off) + g.vOff,
		yRow: int(pl[0].Stride), uRow: int(pl[g.uP].Stride), vRow: int(pl[g.vP].Stride),
		yStep: g.yStep, cStep: g.cStep, cShift: g.chromaRows - 1, ring: 1,
	}
	if p.vfirst {
		lo, hi := p.vfLo/3, (p.vfHi+2)/3
		yp.runs = [][2]int{{lo, hi}}
		yp.ring = p.rows.Taps.K + 1
		return yp
	}
	var cols []int
	for _, o := range p.cols.Off {
		cols = append(cols, o/3)
	}
	slices.Sort(cols)
	cols = slices.Compact(cols)
	for _, x := range cols {
		if n := len(yp.runs); n > 0 && yp.runs[n-1][1] == x {
			yp.runs[n-1][1]++
		} else {
			yp.runs = append(yp.runs, [2]int{x, x + 1})
		}
	}
	return yp
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

// yuvRow returns source row r of the worker's image converted to interleaved RGB at the plan's
// columns (elsewhere the row holds stale values that no tap reads), indexed as the column table
// indexes a row. Rows are kept in a ring keyed by row, so a row read by several output rows is
// converted once per worker and image.
func (w *worker) yuvRow(p *Plan, src []uint8, base, r int) []uint8 {
	yp := p.yuv
	s := r % yp.ring
	if w.yuvKeys[s] == int32(r) {
		return w.yuvRows[s]
	}
	w.yuvKeys[s] = int32(r)
	d := w.yuvRows[s]
	cr := r >> yp.cShift
	ys := src[base+yp.yOff+r*yp.yRow:]
	us := src[base+yp.uOff+cr*yp.uRow:]
	vs := src[base+yp.vOff+cr*yp.vRow:]
	for _, run := range yp.runs {
		yuvToRGB(d, ys, us, vs, run[0], run[1], yp.yStep, yp.cStep, &yp.coef)
	}
	return d
}

// yuvToRGB converts pixels [x0, x1) of one row: Y at ys[x*yStep], chroma at us, vs[(x/2)*cStep], to
// RGB at d[3x:3x+3]. kernels/yuv.cuh would repeat this arithmetic. The last index of each slice is
// checked once up front, then the loop reads through pointers: with per-pixel bounds checks and a
// branchy clamp the 1080p ImageNet task spent 7 ms converting (8 ns a pixel); this is ~2 ns.
func yuvToRGB(d, ys, us, vs []uint8, x0, x1, yStep, cStep int, k *yuvCoef) {
	if x1 <= x0 {
		return
	}
	const half = 1 << (yuvShift - 1)
	_, _ = d[3*x1-1], ys[(x1-1)*yStep]
	last := ((x1 - 1) >> 1) * cStep
	_, _ = us[last], vs[last]
	dp, yp := unsafe.Pointer(unsafe.SliceData(d)), unsafe.Pointer(unsafe.SliceData(ys))
	up, vp := unsafe.Pointer(unsafe.SliceData(us)), unsafe.Pointer(unsafe.SliceData(vs))
	cy, cr, cgu, cgv, cb, yoff, ylo := k.cy, k.cr, k.cgu, k.cgv, k.cb, k.yoff, k.ylo
	for x := x0; x < x1; {
		c := (x >> 1) * cStep
		u, v := int32(*(*uint8)(unsafe.Add(up, c)))-128, int32(*(*uint8)(unsafe.Add(vp, c)))-128
		ruv, guv, buv := half+cr*v, half+cgu*u+cgv*v, half+cb*u
		end := min(x|1, x1-1) // the pixels sharing this chroma sample
		for ; x <= end; x++ {
			yy := max(int32(*(*uint8)(unsafe.Add(yp, x*yStep)))-yoff, ylo) * cy
			dd := (*[3]uint8)(unsafe.Add(dp, 3*x))
			dd[0] = uint8(min(max((yy+ruv)>>yuvShift, 0), 255))
			dd[1] = uint8(min(max((yy+guv)>>yuvShift, 0), 255))
			dd[2] = uint8(min(max((yy+buv)>>yuvShift, 0), 255))
		}
	}
}

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
