package engine

import (
	"math/rand"
	"testing"
	"unsafe"
)

// The fast antialias path must produce exactly the general path's output (Pillow's arithmetic), for
// both filters and every layout it accepts; with SIMD this also proves the split-weight kernels.
func TestAntialiasFastPathEqualsGeneral(t *testing.T) {
	forceThreads(t)
	rng := rand.New(rand.NewSource(5))
	h, w := 197, 263
	src := make([]uint8, 2*h*w*3+64)
	for i := range src {
		src[i] = uint8(rng.Intn(256))
	}
	type variant struct {
		name string
		edit func(s *Spec)
	}
	variants := []variant{
		{"plain", func(s *Spec) {}},
		{"upscale", func(s *Spec) {
			s.Resize.H, s.Resize.W, s.Canvas.H, s.Canvas.W, s.Post.H, s.Post.W, s.Post.X0 = 300, 350, 300, 350, 300, 350, 349
		}},
		{"wide", func(s *Spec) { s.Resize.H, s.Canvas.H, s.Post.H = 37, 37, 37 }},
		// ~100 (bilinear) and ~200 (bicubic) vertical taps: the paired VPMADDWD vertical pass and,
		// past aaVPairBuf, the VPMULLD one
		{"tall window", func(s *Spec) { s.Resize.H, s.Canvas.H, s.Post.H = 2, 2, 2 }},
		{"strong", func(s *Spec) {
			s.Resize.H, s.Resize.W, s.Canvas.H, s.Canvas.W, s.Post.H, s.Post.W, s.Post.X0 = 20, 9, 20, 9, 20, 9, 8
		}},
		{"bgr", func(s *Spec) { s.CMap = []int{2, 1, 0} }},
		{"torch weights", func(s *Spec) { s.Resize.TorchU8 = true }},
		{"torch weights upscale", func(s *Spec) {
			s.Resize.TorchU8 = true
			s.Resize.H, s.Resize.W, s.Canvas.H, s.Canvas.W, s.Post.H, s.Post.W, s.Post.X0 = 300, 350, 300, 350, 300, 350, 349
		}},
		{"no flip", func(s *Spec) { s.Post = View{0, 0, 1, 1, 224, 224} }},
		{"vflip crop", func(s *Spec) { s.Post = View{200, 0, -1, 1, 190, 224} }},
		{"source rows flipped", func(s *Spec) { s.In.Strides[1] = -int64(w * 3) }},
		{"planar", func(s *Spec) { s.In.Strides = [4]int64{int64(3 * h * w), int64(w), 1, int64(h * w)} }},
		{"letterbox rows", func(s *Spec) {
			s.Resize.H = 150
			s.Canvas = CanvasSpec{H: 224, W: 224, Top: 37, Pad: PadValues{114}}
		}},
	}
	for _, kind := range []string{"bilinear", "bicubic"} {
		for _, v := range variants {
			for _, n := range []int{0, 2} {
				s := imagenetSpec(n, h, w)
				s.Resize.Kind, s.Resize.Antialias = kind, true
				v.edit(s)
				start := 0
				if s.In.Strides[1] < 0 {
					start = (h - 1) * w * 3
				}
				p, err := NewPlan(s)
				if err != nil {
					t.Fatalf("%s: %v", v.name, err)
				}
				if p.aa == nil {
					t.Fatalf("%s %s: plan does not take the fast antialias path", kind, v.name)
				}
				general := *p
				general.aa = nil
				ptr := unsafe.Pointer(&src[start])
				a := runGuarded(t, p, ptr, 2)
				b := runGuarded(t, &general, ptr, 1)
				if string(a) != string(b) {
					t.Fatalf("%s %s (n=%d): fast antialias path differs from the general path (simd=%v)", kind, v.name, n, simdEnabled)
				}
			}
		}
	}
}

// The last rows of an array: the SIMD loads read past the last tap, so rows whose window reaches the
// end of the array must take the pure-Go kernel (Plan.checkBounds-style guard), with equal results.
func TestAntialiasFastPathAtArrayEnd(t *testing.T) {
	h, w := 40, 64
	src := make([]uint8, h*w*3) // exactly the image: nothing to read past
	for i := range src {
		src[i] = uint8(i * 13)
	}
	s := imagenetSpec(0, h, w)
	s.Resize.Antialias = true
	s.Resize.H, s.Resize.W, s.Canvas.H, s.Canvas.W, s.Post.H, s.Post.W, s.Post.X0 = 17, 23, 17, 23, 17, 23, 22
	p, err := NewPlan(s)
	if err != nil || p.aa == nil {
		t.Fatalf("plan: %v, aa=%v", err, p != nil && p.aa != nil)
	}
	general := *p
	general.aa = nil
	if string(runGuarded(t, p, unsafe.Pointer(&src[0]), 1)) != string(runGuarded(t, &general, unsafe.Pointer(&src[0]), 1)) {
		t.Fatal("fast antialias path differs from the general path at the end of the array")
	}
}

func TestAntialiasFastPathDeclines(t *testing.T) {
	for name, edit := range map[string]func(s *Spec){
		"source flipped": func(s *Spec) { s.In.Strides[2] = -3 },
		"hwc":            func(s *Spec) { s.Norm.Layout = "HWC" },
		"no norm":        func(s *Spec) { s.Norm = nil },
		"no antialias":   func(s *Spec) { s.Resize.Antialias = false },
		"column pad":     func(s *Spec) { s.Resize.W = 200; s.Canvas.Left = 10 },
	} {
		s := imagenetSpec(0, 100, 120)
		s.Resize.Antialias = true
		edit(s)
		start := 0
		_ = start
		p, err := NewPlan(s)
		if err != nil {
			continue // an edit the validator rejects cannot reach the fast path either
		}
		if p.aa != nil {
			t.Errorf("%s: took the fast antialias path", name)
		}
	}
}
