package engine

import (
	"math"
	"math/rand"
	"testing"
)

// The NEON normalisation kernels (normalize_arm64.s) against their pure-Go twins, in one arm64
// binary. Run under qemu-aarch64: scripts/test_arm64.sh -test.run 'Norm'.

// normCHW3 and normHWC3 with NEON equal their pure-Go twins bit for bit: random lengths (tails of
// every length), values from everywhere (randSpecial) and normalisations (scales, means and stds of
// either sign, tiny and huge, std 0).
func TestNormNEONEqualsScalar(t *testing.T) {
	neon := kernelSet{NEON: true}
	rng := rand.New(rand.NewSource(41))
	for it := 0; it < 400; it++ {
		n, vals := randNormRow(rng, it%2 == 1, 100)
		m := len(vals) / 3
		var got, want [3][]float32
		for c := range got {
			got[c], want[c] = make([]float32, m), make([]float32, m)
		}
		neon.normCHW3(got[0], got[1], got[2], vals, n)
		normCHW3Scalar(want[0], want[1], want[2], vals, n, 0)
		for c := range got {
			for x := range got[c] {
				if math.Float32bits(got[c][x]) != math.Float32bits(want[c][x]) {
					t.Fatalf("it %d m=%d CHW channel %d pixel %d (%v): neon %v (%#x), scalar %v (%#x)", it, m, c, x, vals[3*x+c],
						got[c][x], math.Float32bits(got[c][x]), want[c][x], math.Float32bits(want[c][x]))
				}
			}
		}
		g, w := make([]float32, 3*m), make([]float32, 3*m)
		neon.normHWC3(g, vals, n)
		normHWC3Scalar(w, vals, n, 0)
		for i := range g {
			if math.Float32bits(g[i]) != math.Float32bits(w[i]) {
				t.Fatalf("it %d m=%d HWC value %d (%v): neon %v, scalar %v", it, m, i, vals[i], g[i], w[i])
			}
		}
	}
}

// A float32 RGB source at its own size (the resize passes values unchanged) comes out normalised by
// the rounded formula, channel-mapped (emitF32's gather) or not (its shortcut), in CHW and HWC, with
// the NEON kernels and without.
func TestFloatSourceNormalisedNEON(t *testing.T) {
	rng := rand.New(rand.NewSource(43))
	for _, o := range []kernelOverrides{{}, {NoSIMD: true}} {
		withKernels(t, o)
		for _, layout := range []string{"CHW", "HWC", "CHW identity", "HWC identity"} {
			h, w := 7, 8+rng.Intn(70) // at least two NEON blocks a row
			src := randF32(rng, h*w*3)
			s := &Spec{
				In:     InputSpec{DType: F32, H: h, W: w, C: 3, Strides: [4]int64{0, int64(12 * w), 12, 4}},
				Pre:    View{0, 0, 1, 1, h, w},
				Resize: ResizeSpec{Kind: "bilinear", H: h, W: w},
				Canvas: CanvasSpec{H: h, W: w},
				Post:   View{0, 0, 1, 1, h, w},
				CMap:   []int{2, 0, 1},
				Norm:   &NormSpec{Mean: []float64{0.485, 0.456, 0.406}, Std: []float64{0.229, 0.224, 0.225}, Scale: 1.0 / 255, DType: F32, Layout: layout[:3]},
			}
			if len(layout) > 3 {
				s.CMap = []int{0, 1, 2}
			}
			p, got := runF32(t, s, src, h*w*3)
			if p.kern.NEON == o.NoSIMD {
				t.Fatalf("%+v: plan kernels %+v", o, p.kern)
			}
			for y := 0; y < h; y++ {
				for x := 0; x < w; x++ {
					for c := 0; c < 3; c++ {
						v := src[(y*w+x)*3+s.CMap[c]]
						want := float32(float32(v*float32(1.0/255))-float32(s.Norm.Mean[c])) / float32(s.Norm.Std[c])
						i := (y*w+x)*3 + c
						if layout[:3] == "CHW" {
							i = c*h*w + y*w + x
						}
						if math.Float32bits(got[i]) != math.Float32bits(want) {
							t.Fatalf("%+v %s pixel (%d, %d) channel %d: %v, want %v", o, layout, y, x, c, got[i], want)
						}
					}
				}
			}
		}
	}
}
