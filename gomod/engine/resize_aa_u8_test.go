package engine

import (
	"fmt"
	"math/rand"
	"testing"
	"unsafe"
)

// randomU8Spec is a random uint8-output antialias-arithmetic spec (Pillow's or PyTorch's weights,
// bilinear or bicubic, antialiased or PyTorch's plain kernel, down- and upscales) on an RGB, gray or
// planar RGB source, with a random padded canvas, flip, channel map and, sometimes, a normalisation
// to HWC float32 (emitU8's other outputs).
func randomU8Spec(rng *rand.Rand) (*Spec, string) {
	h, w := 1+rng.Intn(160), 1+rng.Intn(500)
	c, layout := 3, []string{"rgb", "rgb", "gray", "planar"}[rng.Intn(4)]
	st := [4]int64{0, int64(3 * w), 3, 1}
	switch layout {
	case "gray":
		c, st = 1, [4]int64{0, int64(w), 1, 1}
	case "planar":
		st = [4]int64{0, int64(w), 1, int64(h * w)}
	}
	oh, ow := 1+rng.Intn(h), 1+rng.Intn(w)
	if rng.Intn(4) == 0 {
		oh, ow = 1+rng.Intn(2*h), 1+rng.Intn(2*w)
	}
	if rng.Intn(6) == 0 {
		ow = w // the width not resized: identityCols
	}
	s := &Spec{
		In:     InputSpec{DType: U8, H: h, W: w, C: c, Strides: st},
		Pre:    View{0, 0, 1, 1, h, w},
		Resize: ResizeSpec{Kind: []string{"bilinear", "bicubic"}[rng.Intn(2)], Antialias: true, TorchU8: rng.Intn(3) > 0, H: oh, W: ow},
		Canvas: CanvasSpec{H: oh, W: ow},
		Post:   View{0, 0, 1, 1, oh, ow},
		CMap:   []int{0, 1, 2}[:c],
	}
	if s.Resize.TorchU8 && rng.Intn(4) == 0 {
		s.Resize.Antialias = false // PyTorch's plain 2- / 4-tap kernel (torchU8PlainTaps)
	}
	if rng.Intn(3) == 0 { // a padded canvas: the content is a window of the output row
		top, left := rng.Intn(9), rng.Intn(9)
		s.Canvas = CanvasSpec{H: oh + top + rng.Intn(9), W: ow + left + rng.Intn(9), Top: top, Left: left, Pad: PadValues{7}}
		s.Post = View{0, 0, 1, 1, s.Canvas.H, s.Canvas.W}
	}
	if rng.Intn(4) == 0 {
		s.Post = View{0, s.Canvas.W - 1, 1, -1, s.Canvas.H, s.Canvas.W}
	}
	if c == 3 && rng.Intn(4) == 0 {
		s.CMap = []int{2, 1, 0}
	}
	if rng.Intn(5) == 0 {
		s.Norm = &NormSpec{Mean: []float64{0.5, 0.4, 0.3}[:c], Std: []float64{0.2, 0.3, 0.25}[:c], Scale: 1.0 / 255, DType: F32, Layout: "HWC"}
	}
	return s, layout
}

// fillExtremes fills src with random bytes and runs of 0 and 255 (the clamps, and sums at the
// rounding boundaries).
func fillExtremes(rng *rand.Rand, src []uint8) {
	for i := range src {
		src[i] = uint8(rng.Intn(256))
	}
	for i := 0; i < len(src); i += 1 + rng.Intn(64) {
		v := uint8(255 * rng.Intn(2))
		for k := i; k < min(i+rng.Intn(48), len(src)); k++ {
			src[k] = v
		}
	}
}

// The uint8 antialias rows (Plan.aaU8: aaRowU8, its SIMD horizontal and vertical kernels) give
// exactly the general kernels' output (hresizeAAU8, vresizeAAU8) over random specs and sources with
// runs of 0 and 255 (the clamps and rounding boundaries), under every kernel set the CPU has (the
// assembly column loops aaHRowsZ and aaHRowsY, aaHRows4W's archsimd loop, the pure-Go kernels), on 1
// and 2 threads, the source against a guard page (the last rows' loads must not pass it). A vertical
// pass that drops the low halves of Pillow's weights must be caught.
func TestAAU8EqualsGeneral(t *testing.T) {
	forceThreads(t)
	rng := rand.New(rand.NewSource(41))
	sets := []kernelOverrides{{}, {NoZ: true}, {NoZ: true, NoY: true}, {NoSIMD: true}}
	counts := map[string]int{}
	caught, brokenRuns := 0, 0
	for it := 0; it < 250; it++ {
		s, layout := randomU8Spec(rng)
		p, err := NewPlan(s)
		if err != nil {
			t.Fatalf("spec %d %+v: %v", it, s, err)
		}
		if p.aaU8 == nil {
			if p.aa != nil || p.vfirst {
				continue // the fused CHW path or the vertical-first rows: their own tests
			}
			t.Fatalf("spec %d (%s) %+v: a kPillow uint8 plan without the uint8 antialias rows", it, layout, s.Resize)
		}
		ident := s.Resize.W == s.In.W && layout != "planar" && s.Post.SX == 1
		if p.aaU8.hid != ident {
			t.Fatalf("spec %d (%s) %+v: identity columns %v, want %v", it, layout, s.Resize, p.aaU8.hid, ident)
		}
		if !ident && (!p.aaU8.u8h || (p.aaU8.pl != nil) != (layout != "rgb")) {
			t.Fatalf("spec %d (%s): horizontal tables u8h=%v planar tables %v", it, layout, p.aaU8.u8h, p.aaU8.pl != nil)
		}
		counts[layout]++
		if ident {
			counts["identity columns"]++
		}
		src := guarded(t, s.In.H*s.In.W*s.In.C, true)
		fillExtremes(rng, src)
		ptr := unsafe.Pointer(unsafe.SliceData(src))
		general := *p
		general.aaU8 = nil
		want := runGuarded(t, &general, ptr, 1)
		for _, o := range sets {
			q := *p
			q.kern = chooseKernels(cpu, o)
			for _, threads := range []int{1, 2} {
				if got := runGuarded(t, &q, ptr, threads); string(got) != string(want) {
					t.Fatalf("spec %d (%s) %+v, kernels %+v, %d threads: uint8 antialias rows differ from the general kernels (simd=%v)",
						it, layout, s.Resize, o, threads, simdEnabled)
				}
			}
		}
		if simdEnabled && !p.aaU8.vs.lo0 && cpu.AVX2 {
			// the vertical pass with its low-halves test off (every result taken from the high halves)
			broken := *p
			ba := *p.aaU8
			ba.vh = append([]aaVHead(nil), p.aaU8.vh...)
			for r := range ba.vh {
				ba.vh[r].thr = 1 << pilPrecisionBits
			}
			broken.aaU8 = &ba
			brokenRuns++
			if string(runGuarded(t, &broken, ptr, 1)) != string(want) {
				caught++
			}
		}
	}
	if counts["rgb"] < 20 || counts["gray"] < 10 || counts["planar"] < 10 || counts["identity columns"] < 10 {
		t.Fatalf("too few specs per layout: %v", counts)
	}
	if simdEnabled && cpu.AVX2 && caught == 0 {
		t.Fatalf("a vertical pass without the low halves went uncaught over %d specs", brokenRuns)
	}
	t.Logf("specs per layout %v; broken vertical pass caught on %d of %d", counts, caught, brokenRuns)
}

// The case the path was built for: 1080p -> 384 x 384 bicubic with PyTorch's uint8 numerics (and
// Pillow's), uint8 HWC out, equal to the general kernels.
func TestAAU8Photo(t *testing.T) {
	h, w := 1080, 1920
	src := make([]uint8, h*w*3)
	rng := rand.New(rand.NewSource(3))
	for i := range src {
		src[i] = uint8(rng.Intn(256))
	}
	for _, torch := range []bool{true, false} {
		for _, kind := range []string{"bicubic", "bilinear"} {
			t.Run(fmt.Sprintf("%s torch=%v", kind, torch), func(t *testing.T) {
				s := rgbSpec(h, w, kind, true, 384, 384)
				s.Resize.TorchU8 = torch
				p, err := NewPlan(s)
				if err != nil || p.aaU8 == nil || !p.aaU8.u8h {
					t.Fatalf("plan: %v (aaU8 %v)", err, p != nil && p.aaU8 != nil)
				}
				if torch != p.aaU8.hs.lo0 {
					t.Fatalf("weight split %+v", p.aaU8.hs)
				}
				general := *p
				general.aaU8 = nil
				ptr := unsafe.Pointer(&src[0])
				if string(runGuarded(t, p, ptr, 1)) != string(runGuarded(t, &general, ptr, 1)) {
					t.Fatal("uint8 antialias rows differ from the general kernels")
				}
			})
		}
	}
}

// aaHGray (AVX2) gives aaHGrayScalar's bytes on every row of random gray specs, the source against a
// guard page (the rows whose loads would pass it take the scalar kernel), runs of 0 and 255 included.
func TestAAHGrayEqualsScalar(t *testing.T) {
	rng := rand.New(rand.NewSource(43))
	ks := chooseKernels(cpu, kernelOverrides{})
	simdRows := 0
	for it := 0; it < 120; it++ {
		h, w := 1+rng.Intn(40), 1+rng.Intn(700)
		s := rgbSpec(h, w, []string{"bilinear", "bicubic"}[rng.Intn(2)], true, 1+rng.Intn(h), 1+rng.Intn(2*w))
		s.In.C, s.In.Strides, s.CMap = 1, [4]int64{0, int64(w), 1, 1}, []int{0}
		s.Resize.TorchU8 = rng.Intn(2) == 0
		p, err := NewPlan(s)
		if err == nil && (p.vfirst || p.aaU8 != nil && p.aaU8.hid) {
			continue // Pillow's vertical-first rows, or no horizontal pass: not this kernel
		}
		if err != nil || p.aaU8 == nil || p.aaU8.pl == nil {
			t.Fatalf("spec %d %+v: plan %v, aaU8 %v", it, s.Resize, err, p != nil && p.aaU8 != nil)
		}
		a := p.aaU8
		src := guarded(t, h*w, true)
		for i := range src {
			src[i] = uint8(rng.Intn(256))
			if rng.Intn(8) == 0 {
				src[i] = uint8(255 * rng.Intn(2))
			}
		}
		n := len(a.cols)
		got, want := make([]uint8, n), make([]uint8, n)
		for y := 0; y < h; y++ {
			aaHGrayScalar(want, src, y*w, a, p)
			ks.aaHGray(got, src, y*w, a, p)
			if string(got) != string(want) {
				t.Fatalf("spec %d %+v row %d: aaHGray differs from aaHGrayScalar", it, s.Resize, y)
			}
			if r := y*w + a.minOff; n >= 8 && r+a.pl.winEnd <= len(src) {
				simdRows++
			}
		}
	}
	if simdEnabled && cpu.AVX2 && simdRows == 0 {
		t.Fatal("no row took the SIMD kernel")
	}
	t.Logf("%d rows in reach of the SIMD kernel", simdRows)
}

// BenchmarkAAU8Photo times 1080p -> 384 x 384 bicubic, PyTorch's uint8 numerics, uint8 HWC out, on
// 1 thread: the uint8 antialias rows ("new") against the general kernels ("general").
func BenchmarkAAU8Photo(b *testing.B) {
	for _, mode := range []string{"new", "general"} {
		b.Run(mode, func(b *testing.B) {
			s := rgbSpec(1080, 1920, "bicubic", true, 384, 384)
			s.Resize.TorchU8 = true
			benchPlanEdit(b, s, 1, func(p *Plan) {
				if mode == "general" {
					p.aaU8 = nil
				}
			})
		})
	}
}
