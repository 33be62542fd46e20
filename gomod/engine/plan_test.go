package engine

import (
	"bytes"
	"errors"
	"math"
	"runtime"
	"sync"
	"testing"
	"unsafe"
)

func TestValidateRejects(t *testing.T) {
	cases := []struct {
		name string
		edit func(s *Spec)
		code Code
		arg  string
	}{
		{"dtype", func(s *Spec) { s.In.DType = "i16" }, CodeBadDType, "src"},
		{"channels", func(s *Spec) { s.In.C = 2 }, CodeBadShape, "src"},
		{"zero height", func(s *Spec) { s.In.H = 0 }, CodeBadShape, "src.height"},
		{"huge size", func(s *Spec) { s.Resize.H = 1 << 40 }, CodeTooLarge, "size.height"},
		{"crop outside", func(s *Spec) { s.Pre.H = 513 }, CodeBadShape, "crop"},
		{"negative crop", func(s *Spec) { s.Pre.Y0 = -1 }, CodeBadShape, "crop"},
		{"bad step", func(s *Spec) { s.Pre.SX = 2 }, CodeInvalidArgument, "crop"},
		{"interp", func(s *Spec) { s.Resize.Kind = "cubic" }, CodeInvalidArgument, "interpolation"},
		{"canvas", func(s *Spec) { s.Canvas.Top = 1 }, CodeBadShape, "size"},
		{"cmap", func(s *Spec) { s.CMap = []int{0, 1, 5} }, CodeBadShape, "code"},
		{"mean length", func(s *Spec) { s.Norm.Mean = s.Norm.Mean[:2] }, CodeInvalidArgument, "mean"},
		{"std length", func(s *Spec) { s.Norm.Std = nil }, CodeInvalidArgument, "std"},
		{"norm dtype", func(s *Spec) { s.Norm.DType = U8 }, CodeInvalidArgument, "dtype"},
		{"layout", func(s *Spec) { s.Norm.Layout = "NCHW" }, CodeInvalidArgument, "layout"},
		{"pad", func(s *Spec) { s.Canvas.Pad = PadValues{300} }, CodeInvalidArgument, "pad_value"},
		{"stride", func(s *Spec) { s.In.DType = F32; s.In.Strides[2] = 6 }, CodeInvalidArgument, "src"},
		{"span", func(s *Spec) { s.In.Strides[1] = 1 << 42 }, CodeTooLarge, "src"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := imagenetSpec(0, 512, 512)
			c.edit(s)
			_, err := NewPlan(s)
			var e *Error
			if !errors.As(err, &e) || e.Code != c.code || e.Arg != c.arg {
				t.Fatalf("got %v, want code %s arg %s", err, c.code, c.arg)
			}
		})
	}
	if _, err := ParseSpec(`{"in":{},"bogus":1}`); err == nil {
		t.Fatal("unknown field accepted")
	}
}

// runGuarded executes a plan into an output surrounded by guard bytes and fails if any guard changed:
// an out-of-bounds write anywhere in the engine shows up here.
func runGuarded(t *testing.T, p *Plan, src unsafe.Pointer, threads int) []byte {
	t.Helper()
	const guard = 4096
	n := p.OutBytes()
	buf := make([]byte, n+2*guard)
	for i := range buf {
		buf[i] = 0xA5
	}
	if err := runCPU([]Job{{Plan: p, Src: src, Out: unsafe.Pointer(&buf[guard])}}, threads, nil); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < guard; i++ {
		if buf[i] != 0xA5 || buf[guard+n+i] != 0xA5 {
			t.Fatalf("write outside the output at guard offset %d", i)
		}
	}
	return buf[guard : guard+n]
}

func rgbSpec(h, w int, kind string, aa bool, oh, ow int) *Spec {
	return &Spec{
		In:     InputSpec{DType: U8, H: h, W: w, C: 3, Strides: [4]int64{0, int64(3 * w), 3, 1}},
		Pre:    View{0, 0, 1, 1, h, w},
		Resize: ResizeSpec{Kind: kind, Antialias: aa, H: oh, W: ow},
		Canvas: CanvasSpec{H: oh, W: ow},
		Post:   View{0, 0, 1, 1, oh, ow},
		CMap:   []int{0, 1, 2},
	}
}

// forceThreads makes every call in the test take the threaded path, however small.
func forceThreads(t *testing.T) {
	old := inlineElems
	inlineElems = 0
	t.Cleanup(func() { inlineElems = old })
}

func TestGuardedOutputsAllModes(t *testing.T) {
	forceThreads(t)
	h, w := 61, 47
	src := make([]uint8, h*w*3)
	for i := range src {
		src[i] = uint8(i*31 + i/7)
	}
	letter := rgbSpec(h, w, "bilinear", false, 20, 15)
	letter.Canvas = CanvasSpec{H: 32, W: 32, Top: 6, Left: 8, Pad: PadValues{114}}
	letter.Post = View{31, 0, -1, 1, 32, 32}
	norm := rgbSpec(h, w, "bilinear", true, 16, 16)
	norm.Norm = &NormSpec{Mean: []float64{1, 2, 3}, Std: []float64{4, 5, 6}, Scale: 1, DType: F16, Layout: "HWC"}
	specs := map[string]*Spec{
		"bilinear-down": rgbSpec(h, w, "bilinear", false, 13, 9),
		"bilinear-up":   rgbSpec(h, w, "bilinear", false, 130, 99),
		"antialias":     rgbSpec(h, w, "bilinear", true, 7, 11),
		"nearest":       rgbSpec(h, w, "nearest", false, 100, 3),
		"none":          rgbSpec(h, w, "none", false, h, w),
		"letterbox":     letter,
		"norm-f16":      norm,
	}
	for name, s := range specs {
		t.Run(name, func(t *testing.T) {
			p, err := NewPlan(s)
			if err != nil {
				t.Fatal(err)
			}
			a := runGuarded(t, p, unsafe.Pointer(&src[0]), 1)
			b := runGuarded(t, p, unsafe.Pointer(&src[0]), 3)
			if string(a) != string(b) {
				t.Fatal("threaded result differs from single-threaded")
			}
		})
	}
}

// A flipped view read through negative strides equals resizing an explicitly flipped copy.
func TestNegativeStridesEqualCopy(t *testing.T) {
	h, w := 40, 30
	src := make([]uint8, h*w*3)
	flipped := make([]uint8, len(src))
	for i := range src {
		src[i] = uint8(i*13 + 5)
	}
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			copy(flipped[(y*w+x)*3:(y*w+x)*3+3], src[(y*w+(w-1-x))*3:(y*w+(w-1-x))*3+3])
		}
	}
	view := rgbSpec(h, w, "bilinear", false, 17, 23)
	view.In.Strides = [4]int64{0, int64(3 * w), -3, 1}
	p1, err := NewPlan(view)
	if err != nil {
		t.Fatal(err)
	}
	p2, _ := NewPlan(rgbSpec(h, w, "bilinear", false, 17, 23))
	last := unsafe.Pointer(&src[(w-1)*3]) // NumPy's data pointer of src[:, ::-1]
	a := runGuarded(t, p1, last, 2)
	b := runGuarded(t, p2, unsafe.Pointer(&flipped[0]), 2)
	if string(a) != string(b) {
		t.Fatal("negative-stride view and copy differ")
	}
}

func TestConcurrentCallsAgree(t *testing.T) {
	forceThreads(t)
	p, err := NewPlan(imagenetSpec(2, 300, 400))
	if err != nil {
		t.Fatal(err)
	}
	src := make([]uint8, 2*300*400*3)
	for i := range src {
		src[i] = uint8(i ^ (i >> 9))
	}
	want := make([]float32, p.N*p.OutImageElems())
	if err := runCPU([]Job{{Plan: p, Src: unsafe.Pointer(&src[0]), Out: unsafe.Pointer(&want[0])}}, 1, nil); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got := make([]float32, len(want))
			if err := (CPU{}).Run([]Job{{Plan: p, Src: unsafe.Pointer(&src[0]), Out: unsafe.Pointer(&got[0])}}); err != nil {
				t.Error(err)
				return
			}
			for i := range got {
				if got[i] != want[i] {
					t.Errorf("goroutine result differs at %d", i)
					return
				}
			}
		}()
	}
	wg.Wait()
}

func TestPanicBecomesInternalError(t *testing.T) {
	p, _ := NewPlan(rgbSpec(4, 4, "none", false, 4, 4))
	err := (CPU{}).Run([]Job{{Plan: p, Src: nil, Out: nil}})
	var e *Error
	if !errors.As(err, &e) || e.Code != CodeInvalidArgument {
		t.Fatalf("nil buffers: got %v", err)
	}
	bad := *p
	bad.rows.Off = nil // corrupt tables must panic inside the engine and come back as an error
	src := make([]uint8, 48)
	out := make([]uint8, 48)
	err = (CPU{}).Run([]Job{{Plan: &bad, Src: unsafe.Pointer(&src[0]), Out: unsafe.Pointer(&out[0])}})
	if !errors.As(err, &e) || e.Code != CodeInternal {
		t.Fatalf("corrupt plan: got %v", err)
	}
}

// Recycled workers must not serve rows cached from another call's source memory.
func TestWorkerCacheDoesNotLeakAcrossCalls(t *testing.T) {
	p, err := NewPlan(rgbSpec(8, 8, "bilinear", false, 16, 16))
	if err != nil {
		t.Fatal(err)
	}
	a, b := make([]uint8, 8*8*3), make([]uint8, 8*8*3)
	for i := range b {
		b[i] = 200
	}
	runGuarded(t, p, unsafe.Pointer(&a[0]), 1)
	got := runGuarded(t, p, unsafe.Pointer(&b[0]), 1)
	for i, v := range got {
		if v != 200 {
			t.Fatalf("value %d is %d: stale cached row from the previous call", i, v)
		}
	}
}

// Gigabyte strides (a transposed view of a large array) must not be wrapped into 32-bit offsets:
// the tables keep the true offsets and such plans leave the fast path.
func TestHugeStridesKeepFullOffsets(t *testing.T) {
	s := rgbSpec(2, 3, "bilinear", false, 2, 6)
	s.In.Strides = [4]int64{0, 3, 1610612736, 1}
	p, err := NewPlan(s)
	if err != nil {
		t.Fatal(err)
	}
	for i, tp := range p.cols.lin {
		if tp.o0 != p.cols.Off[2*i] || tp.o1 != p.cols.Off[2*i+1] {
			t.Fatalf("column %d: packed offsets %d/%d differ from %d/%d", i, tp.o0, tp.o1, p.cols.Off[2*i], p.cols.Off[2*i+1])
		}
	}
	s.Norm = &NormSpec{Mean: []float64{0, 0, 0}, Std: []float64{1, 1, 1}, Scale: 1, DType: F32, Layout: "CHW"}
	if p, _ := NewPlan(s); p.fast != nil {
		t.Fatal("a plan with gigabyte offsets took the fast path")
	}
}

// Two jobs sharing one plan (a list of same-shaped images) must not share cached rows.
func TestJobsSharingAPlanDoNotShareRows(t *testing.T) {
	p, err := NewPlan(rgbSpec(2, 8, "bilinear", false, 16, 16))
	if err != nil {
		t.Fatal(err)
	}
	a, b := make([]uint8, 2*8*3), make([]uint8, 2*8*3)
	for i := range b {
		b[i] = 200
	}
	n := p.OutBytes()
	out := make([]uint8, 2*n)
	if err := runCPU([]Job{{Plan: p, Src: unsafe.Pointer(&a[0]), Out: unsafe.Pointer(&out[0])}, {Plan: p, Src: unsafe.Pointer(&b[0]), Out: unsafe.Pointer(&out[n])}}, 1, nil); err != nil {
		t.Fatal(err)
	}
	for i, v := range out[n:] {
		if v != 200 {
			t.Fatalf("second job value %d is %d: rows cached from the first job", i, v)
		}
	}
}

// allocated reports the bytes f allocates on the Go heap.
func allocated(f func()) int64 {
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return int64(b.TotalAlloc - a.TotalAlloc)
}

func TestEstimatePlanBoundsAllocation(t *testing.T) {
	wide := rgbSpec(4, 4, "bilinear", false, 1, 200_000)
	tall := rgbSpec(3000, 5, "bilinear", true, 2, 7) // antialias: ~3000 vertical taps per output row
	letter := rgbSpec(61, 47, "bilinear", false, 20, 15)
	letter.Canvas = CanvasSpec{H: 32, W: 32, Top: 6, Left: 8, Pad: PadValues{114}}
	letter.Post = View{31, 0, -1, 1, 32, 32}
	f32 := rgbSpec(40, 30, "bilinear", false, 64, 2000)
	f32.In.DType, f32.In.Strides = F32, [4]int64{0, 30 * 12, 12, 4}
	f32.Norm = &NormSpec{Mean: []float64{1, 2, 3}, Std: []float64{4, 5, 6}, Scale: 1, DType: F16, Layout: "CHW"}
	aaFast := imagenetSpec(0, 1080, 1920) // the fast antialias path (uint8 RGB -> normalised CHW)
	aaFast.Resize.Antialias, aaFast.Post = true, View{0, 0, 1, 1, 224, 224}
	cubicAAFast := imagenetSpec(0, 1080, 1920)
	cubicAAFast.Resize.Kind, cubicAAFast.Resize.Antialias, cubicAAFast.Post = "bicubic", true, View{0, 0, 1, 1, 224, 224}
	lanczosAAFast := imagenetSpec(0, 1080, 1920)
	lanczosAAFast.Resize.Kind, lanczosAAFast.Resize.Antialias, lanczosAAFast.Post = "lanczos", true, View{0, 0, 1, 1, 224, 224}
	torchPlain := imagenetSpec(0, 1080, 1920) // PyTorch's uint8 bicubic without antialias, fast path
	torchPlain.Resize.Kind, torchPlain.Resize.TorchU8, torchPlain.Post = "bicubic", true, View{0, 0, 1, 1, 224, 224}
	patchU8 := patchCase{dt: U8, h: 540, w: 960, kind: "bicubic", aa: true, oh: 560, ow: 980, cmap: []int{0, 1, 2}, size: 14, merge: 2, temporal: 2}.spec(true)
	patchF32 := patchCase{dt: F32, h: 50, w: 60, kind: "bilinear", oh: 56, ow: 28, cmap: []int{0}, size: 14, merge: 2, temporal: 2}.spec(true)
	specs := map[string]*Spec{
		"patch-u8": patchU8, "patch-f32": patchF32, // the patch layout's planar row and tables (normalize_patch.go)
		"vfirst":      rgbSpec(2000, 800, "bicubic", true, 224, 224), // Pillow's vertical-first order, ~36 taps per row
		"torch-plain": torchPlain, "wide": wide, "tall-antialias": tall, "letterbox": letter, "f32-norm": f32,
		"nearest":       rgbSpec(9, 9, "nearest", false, 3, 50_000),
		"nearest-exact": rgbSpec(9, 9, "nearest-exact", false, 3, 50_000),
		"nearest-pil":   rgbSpec(9, 9, "nearest-pil", false, 50_000, 3),
		"fast":          imagenetSpec(0, 512, 512),
		"aa-fast":       aaFast,
		"bicubic-aa":    cubicAAFast,
		"bicubic-up":    rgbSpec(30, 20, "bicubic", false, 300, 2000),
		"bicubic-down":  rgbSpec(3000, 2000, "bicubic", true, 7, 3),
		"lanczos-down":  rgbSpec(3000, 2000, "lanczos", true, 7, 3), // ~860 taps per row
		"lanczos-up":    rgbSpec(30, 20, "lanczos", true, 300, 2000),
		"lanczos-aa":    lanczosAAFast,
		"area-down":     rgbSpec(3000, 2000, "area", false, 7, 3),
		"area-int":      rgbSpec(300, 200, "area", false, 100, 50),
		"area-up":       rgbSpec(30, 20, "area", false, 300, 2000),
	}
	for name, s := range specs {
		t.Run(name, func(t *testing.T) {
			est := EstimatePlan(s)
			var p *Plan
			tables := allocated(func() {
				var err error
				if p, err = NewPlan(s); err != nil {
					t.Fatal(err)
				}
			})
			if tables > est.Tables {
				t.Fatalf("NewPlan allocated %d bytes, estimate %d", tables, est.Tables)
			}
			src := make([]byte, p.spanElems*s.In.DType.Size())
			out := make([]byte, p.OutBytes())
			w := &worker{}
			scratch := allocated(func() {
				b := newJobBufs(&Job{Plan: p, Src: unsafe.Pointer(&src[0]), Out: unsafe.Pointer(&out[0])})
				w.run(&Job{Plan: p, Src: unsafe.Pointer(&src[0]), Out: unsafe.Pointer(&out[0])}, &b, task{0, 0, 0, p.OutH})
			})
			if scratch > est.Scratch {
				t.Fatalf("a worker allocated %d bytes, estimate %d", scratch, est.Scratch)
			}
			t.Logf("tables %d <= %d, scratch %d <= %d", tables, est.Tables, scratch, est.Scratch)
		})
	}
}

func TestHugePlanRefusedBeforeAllocating(t *testing.T) {
	s := rgbSpec(4, 4, "bilinear", false, 1, 100_000_000) // the review's RLIMIT_AS abort
	var err error
	n := allocated(func() { _, err = NewPlan(s) })
	var e *Error
	if !errors.As(err, &e) || e.Code != CodeTooLarge || e.Arg != "size" {
		t.Fatalf("got %v, want too_large", err)
	}
	if n > 1<<20 {
		t.Fatalf("refusing allocated %d bytes", n)
	}
	// antialias taps grow with the downscale factor: bounded too
	aa := rgbSpec(1<<30, 1, "bilinear", true, 1, 1<<20)
	aa.In.Strides = [4]int64{0, 3, 3, 1}
	if _, err := NewPlan(aa); !errors.As(err, &e) || e.Code != CodeTooLarge {
		t.Fatalf("antialias: got %v, want too_large", err)
	}
}

func TestSizeOneAxisAnyStride(t *testing.T) {
	s := rgbSpec(1, 5, "bilinear", false, 3, 4)
	s.In.Strides = [4]int64{1 << 62, 1<<62 + 3, 3, 1} // NumPy allows any stride on a size-1 axis
	s.In.N = 1
	p, err := NewPlan(s)
	if err != nil {
		t.Fatal(err)
	}
	src := make([]uint8, 15)
	for i := range src {
		src[i] = uint8(10 * i)
	}
	got := runGuarded(t, p, unsafe.Pointer(&src[0]), 1)
	ref, _ := NewPlan(rgbSpec(1, 5, "bilinear", false, 3, 4))
	want := runGuarded(t, ref, unsafe.Pointer(&src[0]), 1)
	if string(got) != string(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// A frame (a pad after a post-resize crop) equals the unframed output placed on a frame filled with
// the per-channel pad values: crop -> resize -> crop -> pad in one pass, checked against two steps.
func TestFrameAndPerChannelPad(t *testing.T) {
	h, w := 41, 37
	src := make([]uint8, h*w*3)
	for i := range src {
		src[i] = uint8(i*29 + i/5)
	}
	inner := rgbSpec(h, w, "bilinear", false, 30, 26)
	inner.Pre = View{3, 2, 1, 1, 35, 33}
	inner.Post = View{4, 25, 1, -1, 20, 22} // a flipped crop of the resized image
	inner.CMap = []int{2, 1, 0}
	framed := *inner
	framed.Frame = &FrameSpec{H: 27, W: 31, Top: 5, Left: 2}
	framed.Canvas.Pad = PadValues{10, 20, 30}
	pi, err := NewPlan(inner)
	if err != nil {
		t.Fatal(err)
	}
	pf, err := NewPlan(&framed)
	if err != nil {
		t.Fatal(err)
	}
	if pf.OutH != 27 || pf.OutW != 31 || !gpuOK(pf) || !gpuOK(pi) {
		t.Fatalf("framed plan: %dx%d, GPUSupported %v/%v", pf.OutH, pf.OutW, gpuOK(pf), gpuOK(pi))
	}
	a := runGuarded(t, pi, unsafe.Pointer(&src[0]), 1)
	b := runGuarded(t, pf, unsafe.Pointer(&src[0]), 2)
	// (the GPU kernels take the per-channel pad values too: package gpu's TestFramedPlanOnGPU)
	for y := 0; y < 27; y++ {
		for x := 0; x < 31; x++ {
			for c := 0; c < 3; c++ {
				want := uint8(10 * (c + 1))
				if iy, ix := y-5, x-2; iy >= 0 && iy < 20 && ix >= 0 && ix < 22 {
					want = a[(iy*22+ix)*3+c]
				}
				if got := b[(y*31+x)*3+c]; got != want {
					t.Fatalf("(%d, %d, %d): got %d, want %d", y, x, c, got, want)
				}
			}
		}
	}
	framed.Frame = &FrameSpec{H: 27, W: 31, Top: 8, Left: 2}
	if _, err := NewPlan(&framed); err == nil {
		t.Fatal("a view that leaves the frame was accepted")
	}
	framed.Frame, framed.Canvas.Pad = nil, PadValues{1, 2}
	if _, err := NewPlan(&framed); err == nil {
		t.Fatal("two pad values for three channels were accepted")
	}
	if s, err := ParseSpec(`{"canvas":{"pad":7}}`); err != nil || len(s.Canvas.Pad) != 1 || s.Canvas.Pad[0] != 7 {
		t.Fatalf("a scalar pad: %v %v", s, err)
	}
}

func gpuOK(p *Plan) bool { ok, _ := p.GPUSupported(); return ok }

// TestSourceWindowIsAllThePlanReads: a plan run on a source whose pixels outside its SourceWindow are
// scrambled gives the same output as on the intact source, over resize kinds, crops before and after
// the resize, and flips: the decoder may skip everything outside the window.
func TestSourceWindowIsAllThePlanReads(t *testing.T) {
	const h, w = 90, 140
	edits := map[string]func(s *Spec){
		"resize then crop": func(s *Spec) {
			s.Resize = ResizeSpec{Kind: "bilinear", H: 64, W: 100}
			s.Canvas = CanvasSpec{H: 64, W: 100}
			s.Post = View{8, 30, 1, 1, 48, 40}
		},
		"antialias then crop": func(s *Spec) {
			s.Resize = ResizeSpec{Kind: "bilinear", Antialias: true, H: 40, W: 60}
			s.Canvas = CanvasSpec{H: 40, W: 60}
			s.Post = View{5, 10, 1, 1, 30, 40}
		},
		"bicubic flipped crop": func(s *Spec) {
			s.Resize = ResizeSpec{Kind: "bicubic", H: 70, W: 120}
			s.Canvas = CanvasSpec{H: 70, W: 120}
			s.Post = View{60, 100, -1, -1, 50, 70}
		},
		"crop then area": func(s *Spec) {
			s.Pre = View{10, 20, 1, 1, 60, 80}
			s.Resize = ResizeSpec{Kind: "area", H: 30, W: 40}
			s.Canvas = CanvasSpec{H: 30, W: 40}
			s.Post = View{0, 0, 1, 1, 30, 40}
		},
	}
	for name, edit := range edits {
		t.Run(name, func(t *testing.T) {
			s := imagenetSpec(0, h, w)
			edit(s)
			p, err := NewPlan(s)
			if err != nil {
				t.Fatal(err)
			}
			y0, y1, x0, x1, ok := p.SourceWindow()
			if !ok || y1-y0 >= h && x1-x0 >= w {
				t.Fatalf("window %d..%d x %d..%d (ok %v) is not smaller than the image", y0, y1, x0, x1, ok)
			}
			src := make([]uint8, h*w*3)
			for i := range src {
				src[i] = uint8(i*7 + i/5)
			}
			want := runGuarded(t, p, unsafe.Pointer(&src[0]), 1)
			for y := 0; y < h; y++ {
				for x := 0; x < w; x++ {
					if y < y0 || y >= y1 || x < x0 || x >= x1 {
						for c := 0; c < 3; c++ {
							src[(y*w+x)*3+c] ^= 0x5A
						}
					}
				}
			}
			got := runGuarded(t, p, unsafe.Pointer(&src[0]), 1)
			if string(got) != string(want) {
				t.Fatalf("the output changed with pixels outside the window %d..%d x %d..%d scrambled", y0, y1, x0, x1)
			}
		})
	}
	if _, _, _, _, ok := mustNewPlan(t, imagenetSpec(2, h, w)).SourceWindow(); ok {
		t.Fatal("a batch has no single window")
	}
}

func mustNewPlan(t *testing.T, s *Spec) *Plan {
	t.Helper()
	p, err := NewPlan(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// NewPlanLike shares its template's normalisation tables only where NewPlan would build the same ones
// (0.0 and -0.0 differ, and so do the output type and the source's), and its plan computes what
// NewPlan's does, bit for bit.
func TestNewPlanLikeSharesOnlyTheSameNorm(t *testing.T) {
	norm := func(s *Spec, mean0 float64, dt DType) *Spec {
		s.Norm = &NormSpec{Mean: []float64{mean0, 0.4, 0.3}, Std: []float64{0.2, 0.2, 0.2}, Scale: 1.0 / 255, DType: dt, Layout: "CHW"}
		return s
	}
	tmpl := mustNewPlan(t, norm(rgbSpec(40, 50, "bilinear", true, 12, 12), 0, F32))
	src := make([]uint8, 31*27*3)
	for i := range src {
		src[i] = uint8(i * 37)
	}
	for _, c := range []struct {
		mean0  float64
		dt     DType
		shared bool
	}{{0, F32, true}, {math.Copysign(0, -1), F32, false}, {0.5, F32, false}, {0, F16, false}} {
		s := norm(rgbSpec(31, 27, "bilinear", true, 12, 12), c.mean0, c.dt)
		s.Pre = View{2, 3, 1, 1, 25, 20}
		p, err := NewPlanLike(s, tmpl)
		if err != nil {
			t.Fatal(err)
		}
		if (p.norm == tmpl.norm) != c.shared {
			t.Errorf("mean %v %s: shared %v, want %v", c.mean0, c.dt, p.norm == tmpl.norm, c.shared)
		}
		got := runGuarded(t, p, unsafe.Pointer(&src[0]), 1)
		if want := runGuarded(t, mustNewPlan(t, s), unsafe.Pointer(&src[0]), 1); !bytes.Equal(got, want) {
			t.Errorf("mean %v %s: NewPlanLike's plan differs from NewPlan's", c.mean0, c.dt)
		}
	}
	// a float32 source normalises through other tables: not shared
	f := norm(rgbSpec(31, 27, "bilinear", true, 12, 12), 0, F32)
	f.In.DType, f.In.Strides = F32, [4]int64{0, 27 * 3 * 4, 3 * 4, 4}
	if p, err := NewPlanLike(f, tmpl); err != nil || p.norm == tmpl.norm {
		t.Errorf("float32 source: %v, shared %v", err, err == nil && p.norm == tmpl.norm)
	}
}
