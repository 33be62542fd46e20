package engine

import (
	"math"
	"math/rand"
	"strings"
	"testing"
	"unsafe"

	"gonum.org/v1/gonum/floats"
)

func TestLinearTapsCVWeightsSumToOne(t *testing.T) {
	for _, c := range []struct{ in, out int }{{512, 224}, {224, 512}, {7, 3}, {3, 7}, {1, 5}, {5, 1}, {100, 100}, {1920, 224}} {
		tp := linearTapsCV(c.in, c.out, c.in%2 == 0)
		for o := 0; o < c.out; o++ {
			if s := tp.WI[2*o] + tp.WI[2*o+1]; s != cvCoefScale {
				t.Fatalf("%v: output %d weights sum to %d", c, o, s)
			}
			for k := 0; k < 2; k++ {
				if i := tp.Idx[2*o+k]; i < 0 || int(i) >= c.in {
					t.Fatalf("%v: output %d tap %d index %d out of range", c, o, k, i)
				}
			}
		}
	}
}

func TestNearestTaps(t *testing.T) {
	cases := []struct {
		in, out int
		want    []int32
	}{
		{4, 4, []int32{0, 1, 2, 3}},
		{4, 2, []int32{0, 2}},
		{2, 4, []int32{0, 0, 1, 1}},
		{3, 5, []int32{0, 0, 1, 1, 2}},
	}
	for _, c := range cases {
		got := nearestTaps(c.in, c.out).Idx
		for i := range c.want {
			if got[i] != c.want[i] {
				t.Errorf("nearest %d->%d: got %v want %v", c.in, c.out, got, c.want)
				break
			}
		}
	}
}

// checkTapsNormalised fails t unless every output of tp (in -> out pixels) reads only inside the
// image and its weights sum to 1 (float) and to 2^22 within rounding (Pillow's fixed point); c names
// the case in the message.
func checkTapsNormalised(t *testing.T, c any, tp taps, in, out int) {
	t.Helper()
	for o := 0; o < out; o++ {
		var si int32
		var sf float64
		for k := 0; k < tp.K; k++ {
			si += tp.WI[o*tp.K+k]
			sf += float64(tp.WF[o*tp.K+k])
			if i := tp.Idx[o*tp.K+k]; i < 0 || int(i) >= in {
				t.Fatalf("%v: tap index %d out of range", c, i)
			}
		}
		if math.Abs(sf-1) > 1e-5 || math.Abs(float64(si-(1<<pilPrecisionBits))) > float64(tp.K) {
			t.Fatalf("%v: output %d weights sum to %v / %d", c, o, sf, si)
		}
	}
}

func TestAntialiasTapsNormalised(t *testing.T) {
	for _, c := range []struct{ in, out int }{{512, 224}, {1000, 37}, {10, 10}, {5, 17}, {3, 1}} {
		checkTapsNormalised(t, c, antialiasTaps(c.in, c.out), c.in, c.out)
	}
}

// PyTorch's uint8 weights: the largest precision p with every weight in int16 (max < 2^15 <= max at
// p+1, within rounding), each weight a multiple of 2^(22-p), the sums 2^p within rounding.
func TestTorchU8TapsPrecision(t *testing.T) {
	for _, c := range []struct{ in, out int }{{512, 224}, {1000, 37}, {10, 10}, {5, 17}, {480, 384}, {1, 7}, {3, 1}} {
		for _, f := range []struct {
			name string
			tp   taps
		}{
			{"bilinear", torchU8Taps(c.in, c.out, triangleFilter, 1)}, {"bicubic", torchU8Taps(c.in, c.out, pillowCubic, 2)},
			{"plain bilinear", torchU8PlainTaps(c.in, c.out, false)}, {"plain bicubic", torchU8PlainTaps(c.in, c.out, true)},
		} {
			tp := f.tp
			var wmax int32
			for _, v := range tp.WI {
				wmax = max(wmax, v)
			}
			// wmax = m << (22-p) with m < 2^15 <= 2m (+1 for rounding): the shift is 22-p. The plain
			// kernels' folded border weights can pass 1 (a negative cubic lobe folded away) and
			// PyTorch takes its precision from the largest partial sum: m may sit a little lower.
			shift := 0
			for wmax>>shift >= 1<<15 {
				shift++
			}
			m := wmax >> shift
			if m >= 1<<15 || 2*m+1 < 1<<15 && !strings.HasPrefix(f.name, "plain") || 3*m < 1<<15 {
				t.Fatalf("%v %s: max weight %d is not at full int16 precision", c, f.name, wmax)
			}
			p := pilPrecisionBits - shift
			for o := 0; o < c.out; o++ {
				var sum int32
				for k := 0; k < tp.K; k++ {
					v := tp.WI[o*tp.K+k]
					if v%(1<<shift) != 0 {
						t.Fatalf("%v %s: weight %d is not a multiple of 2^%d", c, f.name, v, shift)
					}
					idx := int(tp.Idx[o*tp.K+k])
					if idx < 0 || idx >= c.in || tp.Cnt != nil && k >= int(tp.Cnt[o]) && v != 0 {
						t.Fatalf("%v %s: output %d tap %d reads %d with weight %d", c, f.name, o, k, idx, v)
					}
					sum += v >> shift
				}
				if d := sum - 1<<p; d < -int32(tp.K) || d > int32(tp.K) {
					t.Fatalf("%v %s: output %d weights sum to %d, want 2^%d", c, f.name, o, sum, p)
				}
			}
		}
	}
	// PyTorch's plain kernel at scale 1 is the identity; at 2x upscale output 0 folds the taps left
	// of the image into pixel 0 (lambda 0.75 from -0.25 floored to -1).
	if tp := torchU8PlainTaps(9, 9, true); tp.Idx[4*3+1] != 3 || tp.WI[4*3+1] != 1<<22 {
		t.Fatalf("scale 1: %v %v", tp.Idx[12:16], tp.WI[12:16])
	}
	if tp := torchU8PlainTaps(4, 8, true); tp.Cnt[0] != 2 || tp.Idx[0] != 0 || tp.Idx[1] != 1 {
		t.Fatalf("left border: cnt %d idx %v", tp.Cnt[0], tp.Idx[:4])
	}
	for _, bad := range []func(s *Spec){
		func(s *Spec) { s.Resize.Kind = "nearest" },
		func(s *Spec) { s.Resize.Kind = "area" },
		func(s *Spec) { s.In.DType, s.In.Strides = F32, [4]int64{0, 64 * 12, 12, 4} },
	} {
		s := imagenetSpec(0, 64, 64)
		s.Resize.Kind, s.Resize.TorchU8 = "bilinear", true
		if err := s.Validate(); err != nil {
			t.Fatalf("PyTorch's plain uint8 bilinear was refused: %v", err)
		}
		bad(s)
		if err := s.Validate(); err == nil || !strings.Contains(err.Error(), "PyTorch's uint8 weights") {
			t.Fatalf("TorchU8 for %s %v: %v", s.Resize.Kind, s.In.DType, err)
		}
	}
}

// float64 reference of PyTorch's bilinear (align_corners=False) on one channel.
func refBilinear(src []float64, h, w, oh, ow int) []float64 {
	idx := func(o, in, out int) (int, int, float64) {
		s := math.Max(float64((float64(o)+0.5)*float64(in)/float64(out))-0.5, 0)
		i0 := int(math.Floor(s))
		i1 := min(i0+1, in-1)
		return i0, i1, s - float64(i0)
	}
	out := make([]float64, oh*ow)
	for y := 0; y < oh; y++ {
		y0, y1, ly := idx(y, h, oh)
		for x := 0; x < ow; x++ {
			x0, x1, lx := idx(x, w, ow)
			top := float64(src[y0*w+x0]*(1-lx)) + float64(src[y0*w+x1]*lx)
			bot := float64(src[y1*w+x0]*(1-lx)) + float64(src[y1*w+x1]*lx)
			out[y*ow+x] = float64(top*(1-ly)) + float64(bot*ly)
		}
	}
	return out
}

func grayF32Spec(h, w, oh, ow int, kind string) *Spec {
	return &Spec{
		In:     InputSpec{DType: F32, H: h, W: w, C: 1, Strides: [4]int64{0, int64(4 * w), 4, 4}},
		Pre:    View{0, 0, 1, 1, h, w},
		Resize: ResizeSpec{Kind: kind, H: oh, W: ow},
		Canvas: CanvasSpec{H: oh, W: ow},
		Post:   View{0, 0, 1, 1, oh, ow},
		CMap:   []int{0},
	}
}

func TestBilinearF32MatchesFloat64Reference(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for _, c := range []struct{ h, w, oh, ow int }{{37, 53, 20, 91}, {64, 64, 224, 224}, {300, 200, 17, 33}, {1, 9, 4, 4}} {
		src := make([]float32, c.h*c.w)
		ref := make([]float64, len(src))
		for i := range src {
			src[i] = float32(rng.Float32()*200) - 100
			ref[i] = float64(src[i])
		}
		p, err := NewPlan(grayF32Spec(c.h, c.w, c.oh, c.ow, "bilinear"))
		if err != nil {
			t.Fatal(err)
		}
		out := make([]float32, c.oh*c.ow)
		if err := runCPU([]Job{{Plan: p, Src: unsafe.Pointer(&src[0]), Out: unsafe.Pointer(&out[0])}}, 2, nil); err != nil {
			t.Fatal(err)
		}
		got := make([]float64, len(out))
		for i, v := range out {
			got[i] = float64(v)
		}
		want := refBilinear(ref, c.h, c.w, c.oh, c.ow)
		if d := floats.Distance(got, want, math.Inf(1)); d > 1e-5*200 {
			t.Errorf("%v: max abs error %g exceeds 1e-5 of the data range", c, d)
		}
	}
}

// Pillow 13's pass order: where the height shrinks by more than twice what the width does, the
// vertical pass runs first (pillowVerticalFirst), each pass rounding to uint8. The plan's output must equal that
// two-pass model computed here from its own taps, byte for byte, for interleaved, channel-reversed,
// planar and flipped sources, both orders. The
// model with the passes swapped must differ on some spec, or this test could not tell the orders.
func TestPillowVerticalFirst(t *testing.T) {
	rng := rand.New(rand.NewSource(13))
	// twoPass is Pillow's resize of the source (h, w, 3; element (y, x, ch) at at(y, x, ch)) with the
	// plan's taps, vertical pass first or not
	twoPass := func(p *Plan, at func(y, x, ch int) uint8, h, w int, vfirst bool) []uint8 {
		rt, ct := &p.rows.Taps, &p.cols.Taps
		oh, ow := len(rt.Cnt), len(ct.Cnt)
		sum := func(ws []int32, v func(i int) int32) uint8 {
			s := int32(1 << (pilPrecisionBits - 1))
			for i, wt := range ws {
				s += wt * v(i)
			}
			return clampU8(s >> pilPrecisionBits)
		}
		out := make([]uint8, oh*ow*3)
		if vfirst {
			mid := make([]uint8, oh*w*3) // (oh, w, 3)
			for y := 0; y < oh; y++ {
				ws := rt.WI[y*rt.K : y*rt.K+int(rt.Cnt[y])]
				for x := 0; x < w; x++ {
					for ch := 0; ch < 3; ch++ {
						mid[(y*w+x)*3+ch] = sum(ws, func(i int) int32 { return int32(at(int(rt.Idx[y*rt.K+i]), x, ch)) })
					}
				}
			}
			for y := 0; y < oh; y++ {
				for j := 0; j < ow; j++ {
					ws := ct.WI[j*ct.K : j*ct.K+int(ct.Cnt[j])]
					for ch := 0; ch < 3; ch++ {
						out[(y*ow+j)*3+ch] = sum(ws, func(i int) int32 { return int32(mid[(y*w+int(ct.Idx[j*ct.K+i]))*3+ch]) })
					}
				}
			}
			return out
		}
		mid := make([]uint8, h*ow*3) // (h, ow, 3)
		for y := 0; y < h; y++ {
			for j := 0; j < ow; j++ {
				ws := ct.WI[j*ct.K : j*ct.K+int(ct.Cnt[j])]
				for ch := 0; ch < 3; ch++ {
					mid[(y*ow+j)*3+ch] = sum(ws, func(i int) int32 { return int32(at(y, int(ct.Idx[j*ct.K+i]), ch)) })
				}
			}
		}
		for y := 0; y < oh; y++ {
			ws := rt.WI[y*rt.K : y*rt.K+int(rt.Cnt[y])]
			for j := 0; j < ow; j++ {
				for ch := 0; ch < 3; ch++ {
					out[(y*ow+j)*3+ch] = sum(ws, func(i int) int32 { return int32(mid[(int(rt.Idx[y*rt.K+i])*ow+j)*3+ch]) })
				}
			}
		}
		return out
	}
	layouts := []struct {
		name    string
		strides func(h, w int) [4]int64
		at      func(img []uint8, h, w int) func(y, x, ch int) uint8
		start   func(h, w int) int
	}{
		{"interleaved", func(h, w int) [4]int64 { return [4]int64{0, int64(3 * w), 3, 1} },
			func(img []uint8, h, w int) func(y, x, ch int) uint8 {
				return func(y, x, ch int) uint8 { return img[(y*w+x)*3+ch] }
			}, func(h, w int) int { return 0 }},
		{"channels reversed", func(h, w int) [4]int64 { return [4]int64{0, int64(3 * w), 3, -1} },
			func(img []uint8, h, w int) func(y, x, ch int) uint8 {
				return func(y, x, ch int) uint8 { return img[(y*w+x)*3+2-ch] }
			}, func(h, w int) int { return 2 }},
		{"planar", func(h, w int) [4]int64 { return [4]int64{0, int64(w), 1, int64(h * w)} },
			func(img []uint8, h, w int) func(y, x, ch int) uint8 {
				return func(y, x, ch int) uint8 { return img[ch*h*w+y*w+x] }
			}, func(h, w int) int { return 0 }},
		{"columns flipped", func(h, w int) [4]int64 { return [4]int64{0, int64(3 * w), -3, 1} },
			func(img []uint8, h, w int) func(y, x, ch int) uint8 {
				return func(y, x, ch int) uint8 { return img[(y*w+w-1-x)*3+ch] }
			}, func(h, w int) int { return 3 * (w - 1) }},
	}
	differs, vf, hf, vfH := 0, 0, 0, 0
	for it := 0; it < 120; it++ {
		h, w := 2+rng.Intn(60), 1+rng.Intn(40)
		oh, ow := 1+rng.Intn(h), w+rng.Intn(40) // height shrinks (or stays), width grows (or stays)
		if it%3 == 2 {
			ow = 1 + rng.Intn(w) // both shrink: either order
		}
		kind := []string{"bilinear", "bicubic"}[it%2]
		lay := layouts[it%len(layouts)]
		img := make([]uint8, 3*h*w)
		for i := range img {
			img[i] = uint8(rng.Intn(256))
			if rng.Intn(8) == 0 {
				img[i] = uint8(255 * rng.Intn(2))
			}
		}
		s := rgbSpec(h, w, kind, true, oh, ow)
		s.In.Strides = lay.strides(h, w)
		p, err := NewPlan(s)
		if err != nil {
			t.Fatalf("spec %d: %v", it, err)
		}
		// Pillow 13.0's rule; an unchanged width: the identity horizontal pass, either order
		want := h-oh > 0 && h-oh > 2*(w-ow) && ow != w
		if p.vfirst != want {
			t.Fatalf("spec %d (%dx%d -> %dx%d): vfirst %v, want %v", it, h, w, oh, ow, p.vfirst, want)
		}
		if want {
			vf++
			if p.vfH != nil {
				vfH++ // interleaved RGB: the horizontal pass on aaHRows (vfirstRowU8)
			}
			if p.aa != nil {
				t.Fatalf("spec %d: the fast antialias path took a vertical-first plan", it)
			}
			if ok, _ := p.GPUSupported(); ok {
				t.Fatalf("spec %d: the GPU kernels claim a vertical-first plan", it)
			}
		} else {
			hf++
		}
		at := lay.at(img, h, w)
		got := runGuarded(t, p, unsafe.Pointer(&img[lay.start(h, w)]), 1+it%2)
		if exp := twoPass(p, at, h, w, p.vfirst); string(got) != string(exp) {
			t.Fatalf("spec %d %s %s (%dx%d -> %dx%d, vfirst %v): the plan differs from Pillow's two passes", it, lay.name, kind, h, w, oh, ow, p.vfirst)
		}
		if string(got) != string(twoPass(p, at, h, w, !p.vfirst)) {
			differs++
		}
	}
	if differs == 0 || vf == 0 || hf == 0 || vfH == 0 {
		t.Fatalf("the pass order never showed (%d specs differ with the passes swapped; %d vertical-first (%d on aaHRows), %d horizontal-first)", differs, vf, vfH, hf)
	}
	t.Logf("%d vertical-first (%d on aaHRows) and %d horizontal-first specs; %d differ with the passes swapped", vf, vfH, hf, differs)
}
