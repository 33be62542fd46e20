package engine

import (
	"errors"
	"math"
	"math/rand"
	"strings"
	"testing"
	"unsafe"
)

// yuvFrame is a batch of n YUV images of h x w in one allocation: planes in the format's order with
// pad bytes after each row and gap bytes between planes (the chroma planes first when swap), batch
// images bstride bytes apart. origin is the index of image 0's Y (0, 0) in buf.
type yuvFrame struct {
	buf     []uint8
	origin  int
	planes  []YUVPlane
	bstride int64
}

func newYUVFrame(rng *rand.Rand, format string, n, h, w, pad, gap int, swap bool) yuvFrame {
	g := yuvFormats[format]
	type pl struct{ rows, bytes, stride int }
	var ps []pl
	for i := 0; i < g.planes; i++ {
		r, b := yuvPlaneSize(g, i, h, w)
		ps = append(ps, pl{r, b, b + pad})
	}
	order := make([]int, g.planes)
	for i := range order {
		order[i] = i
	}
	if swap && g.planes > 1 {
		order = append(order[1:], 0)
	}
	offs := make([]int, g.planes)
	at := 0
	for _, i := range order {
		offs[i] = at
		at += ps[i].rows*ps[i].stride + gap
	}
	img := at
	f := yuvFrame{buf: make([]uint8, img*max(n, 1)), origin: offs[0], bstride: int64(img)}
	for i := range f.buf {
		f.buf[i] = uint8(rng.Intn(256))
	}
	for i := range ps {
		f.planes = append(f.planes, YUVPlane{Off: int64(offs[i] - offs[0]), Stride: int64(ps[i].stride)})
	}
	return f
}

// yuvRefRGB converts image img of a frame to interleaved RGB with the plan's coefficients, pixel by
// pixel from the format's definition (independent of yuvPlan's tables).
func yuvRefRGB(f yuvFrame, y *YUVSpec, img, h, w int) []uint8 {
	k := newYUVCoef(y)
	at := func(pl, r, c int) int32 {
		p := f.planes[pl]
		return int32(f.buf[f.origin+img*int(f.bstride)+int(p.Off)+r*int(p.Stride)+c])
	}
	out := make([]uint8, h*w*3)
	for r := 0; r < h; r++ {
		for x := 0; x < w; x++ {
			var Y, U, V int32
			switch y.Format {
			case "nv12", "nv21":
				Y, U, V = at(0, r, x), at(1, r/2, x&^1), at(1, r/2, x|1)
				if y.Format == "nv21" {
					U, V = V, U
				}
			case "i420":
				Y, U, V = at(0, r, x), at(1, r/2, x/2), at(2, r/2, x/2)
			case "yuyv":
				Y, U, V = at(0, r, 2*x), at(0, r, 4*(x/2)+1), at(0, r, 4*(x/2)+3)
			case "uyvy":
				Y, U, V = at(0, r, 2*x+1), at(0, r, 4*(x/2)), at(0, r, 4*(x/2)+2)
			}
			yy := max(Y-k.yoff, k.ylo) * k.cy
			u, v := U-128, V-128
			const half = 1 << 19
			out[3*(r*w+x)] = satU8((yy + half + k.cr*v) >> 20)
			out[3*(r*w+x)+1] = satU8((yy + half + k.cgu*u + k.cgv*v) >> 20)
			out[3*(r*w+x)+2] = satU8((yy + half + k.cb*u) >> 20)
		}
	}
	return out
}

// TestYUVEqualsConvertThenResize: a YUV plan equals converting the whole frame to RGB and running the
// same spec on the RGB image, for every format, resize rule (fast paths of the RGB plan included),
// view, flip, batch and plane layout, on 1 and 3 threads; and so does the same plan with its
// columns forced to merged spans (the dense conversion) and to exact sparse pairs.
func TestYUVEqualsConvertThenResize(t *testing.T) {
	forceThreads(t)
	rng := rand.New(rand.NewSource(1))
	kinds := []struct {
		kind  string
		aa    bool
		torch bool
	}{{"none", false, false}, {"nearest", false, false}, {"nearest-exact", false, false}, {"bilinear", false, false},
		{"bilinear", true, false}, {"bicubic", false, false}, {"bicubic", true, false}, {"area", false, false},
		{"bilinear", true, true}, {"nearest-pil", false, false}, {"nearest-torch", false, false}}
	formats := []string{"nv12", "nv21", "i420", "yuyv", "uyvy"}
	vf, fast, fused, aa, sparse := 0, 0, 0, 0, 0
	defer func() {
		t.Logf("%d vertical-first plans, %d on the fast row pass (%d fused), %d on the antialias fast path, %d with 8+ sparse pairs",
			vf, fast, fused, aa, sparse)
		if fused == 0 || aa == 0 || vf == 0 || sparse == 0 {
			t.Error("a converted-row route went untested")
		}
	}()
	for it := 0; it < 400; it++ {
		format := formats[it%len(formats)]
		k := kinds[(it/len(formats))%len(kinds)]
		h, w := 2*(1+rng.Intn(20)), 2*(1+rng.Intn(20))
		if it%4 == 3 { // wide enough for the SIMD converter's 16-pixel steps and the fast paths' blocks
			h, w = 2*(1+rng.Intn(40)), 2*(8+rng.Intn(60))
		}
		if format == "yuyv" || format == "uyvy" {
			h = 1 + rng.Intn(40)
		}
		n := rng.Intn(3)
		f := newYUVFrame(rng, format, n, h, w, rng.Intn(3), rng.Intn(5), rng.Intn(2) == 0)
		y := &YUVSpec{Format: format, Matrix: []string{"bt601", "bt709", "bt2020"}[rng.Intn(3)], Range: []string{"limited", "full"}[rng.Intn(2)]}
		if rng.Intn(3) == 0 {
			y.Matrix, y.Range, y.OpenCV = "bt601", "limited", true
		}
		y.Planes = f.planes
		oh, ow := 1+rng.Intn(30), 1+rng.Intn(30)
		if rng.Intn(4) == 0 { // a vertical-first Pillow shape
			oh, ow = 1+rng.Intn(max(1, h/4)), w-rng.Intn(2)
		}
		s := rgbSpec(h, w, k.kind, k.aa, oh, ow)
		s.Resize.TorchU8 = k.torch
		s.Pre = View{0, 0, 1, 1, h, w}
		if rng.Intn(2) == 0 { // a crop, maybe flipped
			s.Pre = View{rng.Intn(h), rng.Intn(w), 1, 1, 0, 0}
			s.Pre.H, s.Pre.W = 1+rng.Intn(h-s.Pre.Y0), 1+rng.Intn(w-s.Pre.X0)
			if rng.Intn(2) == 0 {
				s.Pre.Y0, s.Pre.SY = s.Pre.Y0+s.Pre.H-1, -1
			}
			if rng.Intn(2) == 0 {
				s.Pre.X0, s.Pre.SX = s.Pre.X0+s.Pre.W-1, -1
			}
		}
		if k.kind == "none" {
			s.Resize.H, s.Resize.W = s.Pre.H, s.Pre.W
		}
		s.Canvas = CanvasSpec{H: s.Resize.H + 2, W: s.Resize.W + 1, Top: 1, Left: 1, Pad: PadValues{7}}
		s.Post = View{0, 0, 1, 1, s.Canvas.H, s.Canvas.W}
		if rng.Intn(2) == 0 { // no padding, CHW float32: the bilinear fast path's row pass
			s.Canvas = CanvasSpec{H: s.Resize.H, W: s.Resize.W}
			s.Post = View{0, 0, 1, 1, s.Canvas.H, s.Canvas.W}
			s.Norm = &NormSpec{Mean: []float64{0.4, 0.5, 0.6}, Std: []float64{0.2, 0.3, 0.25}, Scale: 1.0 / 255, DType: F32, Layout: "CHW"}
		} else if rng.Intn(2) == 0 {
			s.Post = View{s.Canvas.H - 1, 0, -1, 1, s.Canvas.H, s.Canvas.W}
			s.CMap = []int{2, 1, 0}
			s.Norm = &NormSpec{Mean: []float64{0.4, 0.5, 0.6}, Std: []float64{0.2, 0.3, 0.25}, Scale: 1.0 / 255, DType: F32, Layout: "CHW"}
		}
		s.In.N = n
		ys := *s
		ys.In = InputSpec{DType: U8, N: n, H: h, W: w, C: 3, Strides: [4]int64{f.bstride, 0, 0, 0}, YUV: y}
		yp, err := NewPlan(&ys)
		if err != nil {
			t.Fatalf("%s %+v: %v", format, k, err)
		}
		rgb := make([]uint8, 0, max(n, 1)*h*w*3)
		for img := 0; img < max(n, 1); img++ {
			rgb = append(rgb, yuvRefRGB(f, y, img, h, w)...)
		}
		s.In.Strides = [4]int64{int64(h * w * 3), int64(w * 3), 3, 1}
		rp, err := NewPlan(s)
		if err != nil {
			t.Fatal(err)
		}
		want := runGuarded(t, rp, unsafe.Pointer(&rgb[0]), 1)
		if yp.vfirst {
			vf++
		}
		if yp.fast != nil {
			fast++
			if yp.fast.fused {
				fused++
			}
		}
		if yp.aa != nil {
			aa++
		}
		for _, threads := range []int{1, 3} {
			got := runGuarded(t, yp, unsafe.Pointer(&f.buf[f.origin]), threads)
			if string(got) != string(want) {
				t.Fatalf("iteration %d: %s %+v %dx%d -> %dx%d (vfirst %v) on %d threads differs from convert-then-resize",
					it, format, k, h, w, oh, ow, yp.vfirst, threads)
			}
		}
		// the same plan with its columns converted as merged spans, and as exact pairs (yuv_sparse.go)
		for _, mode := range []yuvColMode{yuvDense, yuvSparse} {
			mp := yuvPlanMode(yp, mode)
			if len(mp.yuv.sparse) >= 8 {
				sparse++
			}
			for _, threads := range []int{1, 3} {
				got := runGuarded(t, mp, unsafe.Pointer(&f.buf[f.origin]), threads)
				if string(got) != string(want) {
					t.Fatalf("iteration %d: %s %+v %dx%d -> %dx%d (vfirst %v, columns mode %d: %d runs, %d pairs) on %d threads differs from convert-then-resize",
						it, format, k, h, w, oh, ow, yp.vfirst, mode, len(mp.yuv.runs), len(mp.yuv.sparse), threads)
				}
			}
		}
	}
}

// TestYUVCoefWithinOneLevel: the exact-matrix coefficients are within 1 level of the float64 formula
// for every (Y, U, V), each matrix and range.
func TestYUVCoefWithinOneLevel(t *testing.T) {
	for m, kk := range yuvMatrices {
		for _, rg := range []string{"limited", "full"} {
			k := newYUVCoef(&YUVSpec{Matrix: m, Range: rg})
			kr, kb := kk[0], kk[1]
			kg := 1 - kr - kb
			ys, cs, yo := 1.0, 1.0, 0.0
			if rg == "limited" {
				ys, cs, yo = 255.0/219, 255.0/224, 16
			}
			for Y := 0; Y < 256; Y += 3 {
				for U := 0; U < 256; U += 5 {
					for V := 0; V < 256; V += 7 {
						yf, u, v := float64(ys*(float64(Y)-yo)), cs*float64(U-128), cs*float64(V-128)
						// each product rounded (float64(...)): the reference must not depend on FMA contraction
						ref := [3]float64{yf + float64(2*(1-kr)*v), yf - float64(2*kb*(1-kb)/kg*u) - float64(2*kr*(1-kr)/kg*v), yf + float64(2*(1-kb)*u)}
						yy := max(int32(Y)-k.yoff, k.ylo) * k.cy
						uu, vv := int32(U)-128, int32(V)-128
						got := [3]uint8{satU8((yy + 1<<19 + k.cr*vv) >> 20), satU8((yy + 1<<19 + k.cgu*uu + k.cgv*vv) >> 20), satU8((yy + 1<<19 + k.cb*uu) >> 20)}
						for c := range 3 {
							if d := math.Abs(float64(got[c]) - math.Min(255, math.Max(0, ref[c]))); d > 1 {
								t.Fatalf("%s %s YUV(%d,%d,%d) channel %d: %d vs %.3f", m, rg, Y, U, V, c, got[c], ref[c])
							}
						}
					}
				}
			}
		}
	}
}

// TestYUVValidate: bad YUV layouts are refused with a typed error naming the argument.
func TestYUVValidate(t *testing.T) {
	base := func() *Spec {
		s := rgbSpec(4, 6, "bilinear", false, 2, 3)
		s.In.Strides = [4]int64{}
		s.In.YUV = &YUVSpec{Format: "nv12", Matrix: "bt601", Range: "limited", Planes: []YUVPlane{{0, 6}, {24, 6}}}
		return s
	}
	if _, err := NewPlan(base()); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		edit func(s *Spec)
		code Code
		arg  string
	}{
		{"format", func(s *Spec) { s.In.YUV.Format = "nv16" }, CodeInvalidArgument, "format"},
		{"matrix", func(s *Spec) { s.In.YUV.Matrix = "bt470" }, CodeInvalidArgument, "matrix"},
		{"range", func(s *Spec) { s.In.YUV.Range = "tv" }, CodeInvalidArgument, "range"},
		{"opencv", func(s *Spec) { s.In.YUV.OpenCV, s.In.YUV.Matrix = true, "bt709" }, CodeInvalidArgument, "preset"},
		{"odd width", func(s *Spec) { s.In.W, s.Pre.W = 5, 5 }, CodeBadShape, "src"},
		{"odd height", func(s *Spec) { s.In.H, s.Pre.H = 3, 3 }, CodeBadShape, "src"},
		{"planes", func(s *Spec) { s.In.YUV.Planes = s.In.YUV.Planes[:1] }, CodeBadShape, "src"},
		{"short stride", func(s *Spec) { s.In.YUV.Planes[1].Stride = 5 }, CodeBadShape, "src"},
		{"overlap", func(s *Spec) { s.In.YUV.Planes[1].Off = 20 }, CodeBadShape, "src"},
		{"overlap before", func(s *Spec) { s.In.YUV.Planes[1].Off = -8 }, CodeBadShape, "src"},
		{"huge offset", func(s *Spec) { s.In.YUV.Planes[1].Off = 1 << 60 }, CodeTooLarge, "src"},
		{"pixel strides", func(s *Spec) { s.In.Strides[2] = 3 }, CodeInvalidArgument, "src"},
		{"channels", func(s *Spec) { s.In.C, s.CMap = 1, []int{0} }, CodeBadDType, "src"},
		{"dtype", func(s *Spec) { s.In.DType = F32 }, CodeBadDType, "src"},
	}
	for _, c := range cases {
		s := base()
		c.edit(s)
		_, err := NewPlan(s)
		var e *Error
		if !errors.As(err, &e) || e.Code != c.code || e.Arg != c.arg {
			t.Errorf("%s: got %v, want %s %s", c.name, err, c.code, c.arg)
		}
	}
}

// TestYUVGPUAccepted: YUV plans run on the GPU's yuv kernels (gpu_yuv.go; gomod/engine/gpu's
// TestYUVOnGPU proves their bytes), and their span is the planes'.
func TestYUVGPUAccepted(t *testing.T) {
	s := rgbSpec(4, 6, "bilinear", false, 2, 3)
	s.In.Strides = [4]int64{}
	s.In.YUV = &YUVSpec{Format: "yuyv", Matrix: "bt709", Range: "full", Planes: []YUVPlane{{0, 12}}}
	p, err := NewPlan(s)
	if err != nil {
		t.Fatal(err)
	}
	if ok, why := p.GPUSupported(); !ok || p.GPUKernel() != "goprep_preprocess_yuv_c3" {
		t.Fatalf("GPUSupported = %v %q, kernel %s", ok, why, p.GPUKernel())
	}
	if lo, n := p.ImageSpan(); lo != 0 || n != 48 {
		t.Fatalf("ImageSpan = %d, %d", lo, n)
	}
}

// nv12Imagenet is the benchmark task on a 1080p NV12 frame: shorter side 256 (antialias as
// torchvision's preset, or not), centre crop 224, ImageNet normalize CHW float32.
func nv12Imagenet(aa bool) *Spec {
	h, w := 1080, 1920
	s := rgbSpec(h, w, "bilinear", aa, 256, 455)
	s.In.Strides = [4]int64{}
	s.In.YUV = &YUVSpec{Format: "nv12", Matrix: "bt601", Range: "limited", OpenCV: true, Planes: []YUVPlane{{0, 1920}, {1080 * 1920, 1920}}}
	s.Post = View{16, 116, 1, 1, 224, 224}
	s.Norm = &NormSpec{Mean: []float64{0.485, 0.456, 0.406}, Std: []float64{0.229, 0.224, 0.225}, Scale: 1.0 / 255, DType: F32, Layout: "CHW"}
	return s
}

// nv12Squash224 is nv12Imagenet's frame squashed to 224x224 (bilinear, no antialias): the task
// whose taps read the fewest columns, the sparse converter's case.
func nv12Squash224() *Spec {
	s := nv12Imagenet(false)
	s.Resize.H, s.Resize.W = 224, 224
	s.Canvas = CanvasSpec{H: 224, W: 224}
	s.Post = View{0, 0, 1, 1, 224, 224}
	return s
}

// patternFrame is n bytes of a fixed pattern (byte i = i*mul), the benchmarks' frame content.
func patternFrame(n int, mul int) []uint8 {
	src := make([]uint8, n)
	for i := range src {
		src[i] = uint8(i * mul)
	}
	return src
}

// benchOn times plan p (one image) on src, runCPU on 1 thread: the body every 1080p NV12 / RGB
// benchmark shares.
func benchOn(b *testing.B, p *Plan, src []uint8) {
	out := make([]float32, p.OutImageElems())
	b.ResetTimer()
	for range b.N {
		if err := runCPU([]Job{{Plan: p, Src: unsafe.Pointer(&src[0]), Out: unsafe.Pointer(&out[0])}}, 1, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// benchNV12 times plan p (a 1080p NV12 plan: nv12Imagenet or nv12Squash224, any column mode) on a
// patterned 1080p NV12 frame.
func benchNV12(b *testing.B, p *Plan) { benchOn(b, p, patternFrame(1080*1920*3/2, 7)) }

// mustPlan is NewPlan(s), failing the benchmark on an error.
func mustPlan(b *testing.B, s *Spec) *Plan {
	p, err := NewPlan(s)
	if err != nil {
		b.Fatal(err)
	}
	return p
}

func BenchmarkNV12ImagenetAA(b *testing.B)   { benchNV12(b, mustPlan(b, nv12Imagenet(true))) }
func BenchmarkNV12ImagenetNoAA(b *testing.B) { benchNV12(b, mustPlan(b, nv12Imagenet(false))) }

// benchRGB1080 is the same task on a 1080p interleaved RGB frame (what cvtColor would hand goprep):
// the NV12 benchmarks' yardstick within one run.
func benchRGB1080(b *testing.B, aa bool) {
	s := nv12Imagenet(aa)
	s.In.YUV = nil
	s.In.Strides = [4]int64{0, 1920 * 3, 3, 1}
	benchOn(b, mustPlan(b, s), patternFrame(1080*1920*3, 7))
}

func BenchmarkRGB1080ImagenetAA(b *testing.B)   { benchRGB1080(b, true) }
func BenchmarkRGB1080ImagenetNoAA(b *testing.B) { benchRGB1080(b, false) }

// TestYUVConvSIMDEqualsScalar: the process's converter (the SIMD loop where the CPU has AVX2; NEON on
// arm64, which TestYUVConvNEONEqualsScalar tests harder) equals yuvConvScalar bit for bit, for every
// format, preset and matrix, one row and two rows sharing chroma, runs of any even bounds, and
// leaves the bytes before x0 untouched.
func TestYUVConvSIMDEqualsScalar(t *testing.T) {
	k := currentKernels()
	if !k.yuvSIMD() {
		t.Log("no SIMD converter in this build or on this CPU: the kernel is yuvConvScalar itself")
	}
	rng := rand.New(rand.NewSource(3))
	formats := []string{"nv12", "nv21", "i420", "yuyv", "uyvy"}
	for it := 0; it < 2000; it++ {
		format := formats[it%len(formats)]
		w := 2 * (1 + rng.Intn(120))
		p, f := randYUVRowPlan(t, rng, format, w)
		yp := p.yuv
		src := f.buf
		base := f.origin
		cr := 0
		ys0, ys1 := src[base+yp.yOff:], src[base+yp.yOff+yp.yRow:]
		if yp.cShift == 0 {
			ys1 = ys0
		}
		us, vs := src[base+yp.uOff+cr*yp.uRow:], src[base+yp.vOff+cr*yp.vRow:]
		x0 := 2 * rng.Intn(w/2)
		x1 := x0 + 2*rng.Intn((w-x0)/2+1)
		two := rng.Intn(2) == 0 && yp.cShift == 1 // pairs: 4:2:0 only
		mk := func() (d0, d1 []uint8) {
			d0 = make([]uint8, 3*w+64)
			for i := range d0 {
				d0[i] = 0xa5
			}
			if two {
				d1 = append([]uint8(nil), d0...)
			}
			return d0, d1
		}
		g0, g1 := mk()
		w0, w1 := mk()
		k.yuvConv(g0, g1, ys0, ys1, us, vs, x0, x1, yp)
		yuvConvScalar(w0, w1, ys0, ys1, us, vs, x0, x1, yp)
		if string(g0[:3*x1]) != string(w0[:3*x1]) || two && string(g1[:3*x1]) != string(w1[:3*x1]) {
			t.Fatalf("%s %+v w %d [%d, %d) two %v: SIMD differs from scalar", format, *p.Spec.In.YUV, w, x0, x1, two)
		}
	}
}

// BenchmarkYUVConv: the converter alone on a 1920-pixel NV12 row pair (ns/op over 2x1920 pixels).
func BenchmarkYUVConv(b *testing.B) {
	for _, c := range []string{"one", "pair", "one-scalar", "pair-scalar"} {
		two, name := strings.HasPrefix(c, "pair"), c
		b.Run(name, func(b *testing.B) {
			p := mustPlan(b, nv12Imagenet(true))
			src := patternFrame(1080*1920*3/2, 7)
			yp := p.yuv
			d0, d1 := make([]uint8, 3*1920+64), make([]uint8, 3*1920+64)
			if !two {
				d1 = nil
			}
			k := currentKernels()
			if strings.HasSuffix(b.Name(), "scalar") {
				k = kernelSet{}
			}
			for range b.N {
				k.yuvConv(d0, d1, src[yp.yOff:], src[yp.yOff+yp.yRow:], src[yp.uOff:], src[yp.vOff:], 0, 1920, yp)
			}
		})
	}
}

// randYUVRowPlan is a 2 x w frame of the format with a random matrix and range (OpenCV's arithmetic one
// time in three) and random plane padding, and the identity bilinear plan reading it: what the row
// converters' tests compare kernels on.
func randYUVRowPlan(t *testing.T, rng *rand.Rand, format string, w int) (*Plan, yuvFrame) {
	t.Helper()
	ys := &YUVSpec{Format: format, Matrix: []string{"bt601", "bt709", "bt2020"}[rng.Intn(3)], Range: []string{"limited", "full"}[rng.Intn(2)]}
	if rng.Intn(3) == 0 {
		ys.Matrix, ys.Range, ys.OpenCV = "bt601", "limited", true
	}
	f := newYUVFrame(rng, format, 0, 2, w, rng.Intn(3), rng.Intn(5), rng.Intn(2) == 0)
	ys.Planes = f.planes
	s := rgbSpec(2, w, "bilinear", false, 2, w)
	s.In.Strides = [4]int64{}
	s.In.YUV = ys
	p, err := NewPlan(s)
	if err != nil {
		t.Fatal(err)
	}
	return p, f
}
