package engine

import (
	"errors"
	"math"
	"math/rand"
	"testing"
	"unsafe"
)

// Lanczos-3 at known points: 1 at 0, 0 at the other integers (to float64's sin of a multiple of pi),
// 0 outside [-3, 3), and L(0.5) = sinc(1/2)*sinc(1/6) = (2/pi)*(3/pi) = 6/pi^2 (sin(pi/6) = 1/2).
func TestLanczosFilterValues(t *testing.T) {
	if lanczosFilter(0) != 1 {
		t.Fatalf("L(0) = %v", lanczosFilter(0))
	}
	for _, x := range []float64{-2, -1, 1, 2, -3} {
		if v := lanczosFilter(x); math.Abs(v) > 1e-15 {
			t.Fatalf("L(%v) = %v, want ~0", x, v)
		}
	}
	for _, x := range []float64{3, 3.5, -3.0001, 100} {
		if v := lanczosFilter(x); v != 0 {
			t.Fatalf("L(%v) = %v, want 0 outside [-3, 3)", x, v)
		}
	}
	for _, x := range []float64{0.5, -0.5} {
		if v, want := lanczosFilter(x), 6/(math.Pi*math.Pi); math.Abs(v-want) > 1e-15 {
			t.Fatalf("L(%v) = %v, want %v", x, v, want)
		}
	}
	if v := lanczosFilter(1.5); v >= 0 { // the first negative lobe
		t.Fatalf("L(1.5) = %v, want < 0", v)
	}
}

// Every output's weights sum to 1 (float) and to 2^22 within rounding (Pillow's fixed point), read only
// inside the image, and never more taps than tapsPerOutput's bound; an equal size is the identity.
func TestLanczosTapsNormalised(t *testing.T) {
	for _, c := range []struct{ in, out int }{{512, 224}, {1000, 37}, {10, 10}, {5, 17}, {3, 1}, {1, 9}, {7, 1}, {1920, 3}} {
		tp := resizeTaps(ResizeSpec{Kind: "lanczos", Antialias: true}, U8, c.in, c.out, false, areaNone)
		if bound := tapsPerOutput("lanczos", true, c.in, c.out); float64(tp.K) > bound {
			t.Fatalf("%v: %d taps over tapsPerOutput's %v", c, tp.K, bound)
		}
		checkTapsNormalised(t, c, tp, c.in, c.out)
		for o := 0; o < c.out && c.in == c.out; o++ { // equal sizes: the identity
			for k := 0; k < int(tp.Cnt[o]); k++ {
				want := int32(0)
				if int(tp.Idx[o*tp.K+k]) == o {
					want = 1 << pilPrecisionBits
				}
				if tp.WI[o*tp.K+k] != want {
					t.Fatalf("%v: equal sizes are not the identity at output %d: %v", c, o, tp.WI[o*tp.K:o*tp.K+tp.K])
				}
			}
		}
	}
}

// A lanczos spec is the antialiased filter only; PyTorch's plain kernel has no Lanczos form.
func TestLanczosSpecNeedsAntialias(t *testing.T) {
	for name, edit := range map[string]func(s *Spec){
		"no antialias":    func(s *Spec) { s.Resize.Antialias = false },
		"torch plain":     func(s *Spec) { s.Resize.Antialias, s.Resize.TorchU8 = false, true },
		"torch on floats": func(s *Spec) { s.Resize.TorchU8 = true; s.In.DType = F32; s.In.Strides = [4]int64{0, 12 * 16, 12, 4} },
	} {
		s := rgbSpec(16, 16, "lanczos", true, 8, 8)
		edit(s)
		_, err := NewPlan(s)
		var e *Error
		if !errors.As(err, &e) || e.Code != CodeInvalidArgument || e.Arg != "antialias" {
			t.Fatalf("%s: got %v, want invalid_argument naming antialias", name, err)
		}
	}
	for _, torch := range []bool{false, true} {
		s := rgbSpec(16, 16, "lanczos", true, 8, 8)
		s.Resize.TorchU8 = torch
		if _, err := NewPlan(s); err != nil {
			t.Fatalf("torch=%v: %v", torch, err)
		}
	}
}

// A 1-pixel source row through Lanczos is that pixel at every output (the weights are normalised
// over the one tap), and a constant image stays constant on every size: checks each pass's rounding
// and the tap tables at the borders, on both pass orders (Pillow's vertical-first where it applies).
func TestLanczosConstantImage(t *testing.T) {
	rng := rand.New(rand.NewSource(9))
	for i := 0; i < 40; i++ {
		h, w := 1+rng.Intn(60), 1+rng.Intn(60)
		oh, ow := 1+rng.Intn(90), 1+rng.Intn(90)
		s := rgbSpec(h, w, "lanczos", true, oh, ow)
		s.Resize.TorchU8 = i%3 == 0
		p, err := NewPlan(s)
		if err != nil {
			t.Fatal(err)
		}
		v := uint8(rng.Intn(256))
		src := make([]uint8, h*w*3)
		for j := range src {
			src[j] = v
		}
		for _, threads := range []int{1, 3} {
			out := runGuarded(t, p, unsafe.Pointer(&src[0]), threads)
			for j, got := range out {
				if got != v {
					t.Fatalf("%dx%d -> %dx%d (torch=%v, vfirst=%v, threads %d): element %d = %d, want %d",
						h, w, oh, ow, s.Resize.TorchU8, p.vfirst, threads, j, got, v)
				}
			}
		}
	}
}
