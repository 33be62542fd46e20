package engine

import (
	"math"
	"math/rand"
	"testing"
	"unsafe"

	"gonum.org/v1/gonum/floats"
)

// boxMatrix is exact area averaging: output o covers source [o*s, (o+1)*s), s = in/out.
func boxMatrix(in, out int) [][]float64 {
	m := make([][]float64, out)
	s := float64(in) / float64(out)
	for o := range m {
		m[o] = make([]float64, in)
		lo, hi := float64(o)*s, float64(o+1)*s
		for i := 0; i < in; i++ {
			if ov := math.Min(hi, float64(i+1)) - math.Max(lo, float64(i)); ov > 0 {
				m[o][i] = ov / s
			}
		}
	}
	return m
}

func TestAreaF32DownscaleIsBoxAverage(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for _, c := range []struct{ h, w, oh, ow int }{{37, 53, 20, 31}, {64, 64, 32, 16}, {300, 200, 17, 33}, {9, 9, 3, 9}, {8, 8, 8, 8}} {
		src := make([]float32, c.h*c.w)
		ref := make([]float64, len(src))
		for i := range src {
			src[i] = rng.Float32() * 100
			ref[i] = float64(src[i])
		}
		p, err := NewPlan(grayF32Spec(c.h, c.w, c.oh, c.ow, "area"))
		if err != nil {
			t.Fatal(err)
		}
		out := make([]float32, c.oh*c.ow)
		if err := runCPU([]Job{{Plan: p, Src: unsafe.Pointer(&src[0]), Out: unsafe.Pointer(&out[0])}}, 1, nil); err != nil {
			t.Fatal(err)
		}
		got := make([]float64, len(out))
		for i, v := range out {
			got[i] = float64(v)
		}
		want := refSeparable(ref, c.h, c.w, boxMatrix(c.h, c.oh), boxMatrix(c.w, c.ow))
		// OpenCV drops partial cells under 1e-3 of a pixel, so the box average holds to ~1e-3 relative
		if d := floats.Distance(got, want, math.Inf(1)); d > 1e-3*100 {
			t.Errorf("%v: max abs error %g", c, d)
		}
	}
}

func TestAreaRules(t *testing.T) {
	for _, c := range []struct {
		h, w, oh, ow int
		want         areaRule
	}{
		{512, 512, 256, 256, areaFast}, {512, 512, 224, 224, areaTable}, {512, 512, 512, 256, areaFast},
		{100, 100, 200, 50, areaLinear}, {100, 100, 200, 200, areaLinear}, {30, 30, 10, 15, areaFast},
	} {
		if got, _ := planArea(ResizeSpec{Kind: "area", H: c.oh, W: c.ow}, c.h, c.w); got != c.want {
			t.Errorf("%v: rule %d, want %d", c, got, c.want)
		}
	}
}
