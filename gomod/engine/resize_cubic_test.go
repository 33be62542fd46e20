package engine

import (
	"math"
	"math/rand"
	"testing"
	"unsafe"

	"gonum.org/v1/gonum/floats"
)

// refSeparable applies one float64 weight matrix per axis (wy: oh x h, wx: ow x w) to a one-channel
// image: the float64 evaluation that float32 results are held to.
func refSeparable(src []float64, h, w int, wy, wx [][]float64) []float64 {
	oh, ow := len(wy), len(wx)
	out := make([]float64, oh*ow)
	for y := 0; y < oh; y++ {
		for x := 0; x < ow; x++ {
			var s float64
			for i := 0; i < h; i++ {
				if wy[y][i] == 0 {
					continue
				}
				for j := 0; j < w; j++ {
					s += float64(wy[y][i] * wx[x][j] * src[i*w+j])
				}
			}
			out[y*ow+x] = s
		}
	}
	return out
}

// torchCubicMatrix is PyTorch's bicubic (A = -0.75, clamped indices) written out independently.
func torchCubicMatrix(in, out int) [][]float64 {
	m := make([][]float64, out)
	const A = -0.75
	cc1 := func(x float64) float64 { return float64((float64((A+2)*x)-(A+3))*x*x) + 1 }
	cc2 := func(x float64) float64 { return float64((float64((float64(A*x)-5*A)*x)+8*A)*x) - 4*A }
	for o := range m {
		m[o] = make([]float64, in)
		real := float64(float64(in)/float64(out)*(float64(o)+0.5)) - 0.5
		f := math.Floor(real)
		t := real - f
		for k, wt := range []float64{cc2(t + 1), cc1(t), cc1(1 - t), cc2(2 - t)} {
			m[o][min(max(int(f)-1+k, 0), in-1)] += wt
		}
	}
	return m
}

// aaCubicMatrix is PyTorch's / Pillow's antialiased bicubic (a = -0.5, support 2*max(scale, 1)).
func aaCubicMatrix(in, out int) [][]float64 {
	m := make([][]float64, out)
	scale := float64(in) / float64(out)
	fs := math.Max(scale, 1)
	for o := range m {
		m[o] = make([]float64, in)
		center := float64((float64(o) + 0.5) * scale)
		var sum float64
		for i := 0; i < in; i++ {
			x := math.Abs((float64(i) + 0.5 - center) / fs)
			var v float64
			switch {
			case x < 1:
				v = float64((float64(1.5*x)-2.5)*x*x) + 1
			case x < 2:
				v = float64((float64((float64(-0.5*x)+2.5)*x)-4)*x) + 2
			}
			m[o][i] = v
			sum += v
		}
		for i := range m[o] {
			m[o][i] /= sum
		}
	}
	return m
}

func TestBicubicF32MatchesFloat64Reference(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	for _, aa := range []bool{false, true} {
		for _, c := range []struct{ h, w, oh, ow int }{{37, 53, 20, 91}, {64, 64, 224, 224}, {300, 200, 17, 33}, {1, 9, 4, 4}, {5, 5, 5, 5}} {
			src := make([]float32, c.h*c.w)
			ref := make([]float64, len(src))
			for i := range src {
				src[i] = float32(rng.Float32()*200) - 100
				ref[i] = float64(src[i])
			}
			s := grayF32Spec(c.h, c.w, c.oh, c.ow, "bicubic")
			s.Resize.Antialias = aa
			p, err := NewPlan(s)
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
			mat := torchCubicMatrix
			if aa {
				mat = aaCubicMatrix
			}
			want := refSeparable(ref, c.h, c.w, mat(c.h, c.oh), mat(c.w, c.ow))
			if d := floats.Distance(got, want, math.Inf(1)); d > 1e-5*200 {
				t.Errorf("antialias=%v %v: max abs error %g exceeds 1e-5 of the data range", aa, c, d)
			}
		}
	}
}

func TestCubicTapsSumToOne(t *testing.T) {
	for _, c := range []struct{ in, out int }{{512, 224}, {224, 512}, {7, 3}, {3, 7}, {1, 5}, {1920, 224}} {
		for name, tp := range map[string]taps{"cv": cubicTapsCV(c.in, c.out), "torch": cubicTapsTorch(c.in, c.out)} {
			for o := 0; o < c.out; o++ {
				var s float64
				for k := 0; k < 4; k++ {
					s += float64(tp.WF[4*o+k])
					if i := tp.Idx[4*o+k]; i < 0 || int(i) >= c.in {
						t.Fatalf("%s %v: index %d out of range", name, c, i)
					}
				}
				if math.Abs(s-1) > 1e-6 {
					t.Fatalf("%s %v: output %d weights sum to %v", name, c, o, s)
				}
			}
		}
		pt := pillowTaps(c.in, c.out, pillowCubic, 2)
		for o := 0; o < c.out; o++ {
			var si int64
			for k := 0; k < pt.K; k++ {
				si += int64(pt.WI[o*pt.K+k])
			}
			if d := si - 1<<pilPrecisionBits; d > int64(pt.K) || d < -int64(pt.K) {
				t.Fatalf("pillow %v: output %d fixed-point weights sum to %d", c, o, si)
			}
		}
	}
}

// Pillow rounds negative fixed-point weights away from zero: (int)(-0.5 + w * 2^22).
func TestPillowCubicRoundsNegativeWeightsAwayFromZero(t *testing.T) {
	tp := pillowTaps(10, 7, pillowCubic, 2)
	neg := 0
	for i, w := range tp.WF {
		if w < 0 {
			neg++
			if want := int32(-0.5 + float64(float64(w)*(1<<pilPrecisionBits))); math.Abs(float64(tp.WI[i]-want)) > 1 {
				t.Fatalf("weight %d: %d, want about %d", i, tp.WI[i], want)
			}
		}
	}
	if neg == 0 {
		t.Fatal("a bicubic downscale has negative lobes")
	}
}

// A constant uint8 image stays constant through every bicubic variant and area (weights sum to one;
// the rounding rules must not drift).
func TestConstantImageStaysConstant(t *testing.T) {
	for _, kind := range []string{"bicubic", "area"} {
		for _, aa := range []bool{false, true} {
			if kind == "area" && aa {
				continue
			}
			for _, c := range []struct{ h, w, oh, ow int }{{60, 90, 24, 24}, {24, 24, 61, 37}, {64, 64, 32, 32}, {90, 60, 45, 20}} {
				src := make([]uint8, c.h*c.w*3)
				for i := range src {
					src[i] = 200
				}
				s := &Spec{
					In:     InputSpec{DType: U8, H: c.h, W: c.w, C: 3, Strides: [4]int64{0, int64(3 * c.w), 3, 1}},
					Pre:    View{0, 0, 1, 1, c.h, c.w},
					Resize: ResizeSpec{Kind: kind, Antialias: aa, H: c.oh, W: c.ow},
					Canvas: CanvasSpec{H: c.oh, W: c.ow},
					Post:   View{0, 0, 1, 1, c.oh, c.ow},
					CMap:   []int{0, 1, 2},
				}
				p, err := NewPlan(s)
				if err != nil {
					t.Fatal(err)
				}
				out := make([]uint8, c.oh*c.ow*3)
				if err := runCPU([]Job{{Plan: p, Src: unsafe.Pointer(&src[0]), Out: unsafe.Pointer(&out[0])}}, 1, nil); err != nil {
					t.Fatal(err)
				}
				for i, v := range out {
					if v != 200 {
						t.Fatalf("%s aa=%v %v: value %d at %d", kind, aa, c, v, i)
					}
				}
			}
		}
	}
}
