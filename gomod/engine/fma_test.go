package engine

import (
	"math"
	"math/rand"
	"testing"
	"unsafe"
)

// The float32 paths (normalize, the bilinear lerp, the tap sums) must round every product before it
// is added: Go may fuse x*y + z into one FMA (one rounding) on arm64, ppc64le, s390x, riscv64 and
// amd64 v3 unless the product is explicitly rounded (float32(x*y) + z), and a fused result differs in
// the last bit from NumPy, PyTorch, OpenCV on x86-64 and goprep's GPU kernels (--fmad=false).
// These tests run the engine on inputs where fusing changes the result (they count them: the fused
// model must differ from the rounded one on many outputs, or the test could not tell) and compare
// with values computed here with each product rounded explicitly. On amd64 (no fusion by default)
// they pass trivially; under qemu-aarch64 (scripts/test_arm64.sh) they fail if a guard is removed.
// scripts/check_fma.sh is the static half: no fused instruction in the compiled engine at all.

// fma32 is the fused result x*y + z in float32 (one rounding, up to float64's double rounding).
func fma32(x, y, z float32) float32 { return float32(math.FMA(float64(x), float64(y), float64(z))) }

// lerpRounded is the engine's lerp a + w*(b-a) with each step rounded; lerpFused fuses the product.
func lerpRounded(a, b, w float32) float32 { return a + float32(w*float32(b-a)) }
func lerpFused(a, b, w float32) float32   { return fma32(w, float32(b-a), a) }

func randF32(rng *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(rng.Float32()*200) - 100
	}
	return s
}

func runF32(t *testing.T, s *Spec, src []float32, n int) (*Plan, []float32) {
	t.Helper()
	p, err := NewPlan(s)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]float32, n)
	if err := runCPU([]Job{{Plan: p, Src: unsafe.Pointer(&src[0]), Out: unsafe.Pointer(&out[0])}}, 2, nil); err != nil {
		t.Fatal(err)
	}
	return p, out
}

// checkFMA compares got with the rounded model, and needs the fused model to differ somewhere.
func checkFMA(t *testing.T, what string, got, rounded, fused []float32) {
	t.Helper()
	differ := 0
	for i := range got {
		if math.Float32bits(rounded[i]) != math.Float32bits(fused[i]) {
			differ++
		}
	}
	if differ < len(got)/20 {
		t.Fatalf("%s: the fused model differs on only %d of %d outputs: the inputs cannot tell", what, differ, len(got))
	}
	for i := range got {
		if math.Float32bits(got[i]) != math.Float32bits(rounded[i]) {
			f := ""
			if got[i] == fused[i] {
				f = " (= the fused multiply-add: a product was not rounded)"
			}
			t.Fatalf("%s: output %d = %v, want %v with each product rounded%s (%d outputs differ between the models)",
				what, i, got[i], rounded[i], f, differ)
		}
	}
}

func TestNoFMANormalizeF32(t *testing.T) {
	rng := rand.New(rand.NewSource(29))
	h, w := 16, 64
	src := randF32(rng, h*w)
	s := grayF32Spec(h, w, h, w, "bilinear") // same size: the lerp weights are 0, the values pass unchanged
	s.Norm = &NormSpec{Mean: []float64{0.485}, Std: []float64{0.229}, Scale: 1.0 / 255, DType: F32, Layout: "CHW"}
	_, got := runF32(t, s, src, h*w)
	scale, mean, std := float32(1.0/255), float32(0.485), float32(0.229)
	rounded, fused := make([]float32, len(src)), make([]float32, len(src))
	for i, x := range src {
		rounded[i] = float32(float32(x*scale)-mean) / std
		fused[i] = fma32(x, scale, -mean) / std
	}
	checkFMA(t, "normalize f32", got, rounded, fused)
}

func TestNoFMABilinearF32(t *testing.T) {
	rng := rand.New(rand.NewSource(30))
	h, w, oh, ow := 23, 37, 61, 89
	src := randF32(rng, h*w)
	p, got := runF32(t, grayF32Spec(h, w, oh, ow, "bilinear"), src, oh*ow)
	rt, ct := &p.rows.Taps, &p.cols.Taps
	rounded, fused := make([]float32, oh*ow), make([]float32, oh*ow)
	for y := 0; y < oh; y++ {
		y0, y1, wy := int(rt.Idx[2*y]), int(rt.Idx[2*y+1]), rt.WF[2*y+1]
		for x := 0; x < ow; x++ {
			x0, x1, wx := int(ct.Idx[2*x]), int(ct.Idx[2*x+1]), ct.WF[2*x+1]
			h0 := lerpRounded(src[y0*w+x0], src[y0*w+x1], wx)
			h1 := lerpRounded(src[y1*w+x0], src[y1*w+x1], wx)
			rounded[y*ow+x] = lerpRounded(h0, h1, wy)
			f0 := lerpFused(src[y0*w+x0], src[y0*w+x1], wx)
			f1 := lerpFused(src[y1*w+x0], src[y1*w+x1], wx)
			fused[y*ow+x] = lerpFused(f0, f1, wy)
		}
	}
	checkFMA(t, "bilinear f32", got, rounded, fused)
}

func TestNoFMABicubicF32(t *testing.T) {
	rng := rand.New(rand.NewSource(31))
	h, w, oh, ow := 29, 31, 47, 53
	src := randF32(rng, h*w)
	p, got := runF32(t, grayF32Spec(h, w, oh, ow, "bicubic"), src, oh*ow)
	rt, ct := &p.rows.Taps, &p.cols.Taps
	kr, kc := rt.K, ct.K
	// sum is the engine's tap sum from 0, in tap order, each product rounded (or fused).
	sum := func(ws []float32, v func(t int) float32, fuse bool) float32 {
		var s float32
		for t, wt := range ws {
			if fuse {
				s = fma32(wt, v(t), s)
			} else {
				s = s + float32(wt*v(t))
			}
		}
		return s
	}
	rounded, fused := make([]float32, oh*ow), make([]float32, oh*ow)
	for y := 0; y < oh; y++ {
		for x := 0; x < ow; x++ {
			for _, fuse := range []bool{false, true} {
				hrow := func(t int) float32 {
					r := int(rt.Idx[y*kr+t])
					return sum(ct.WF[x*kc:x*kc+kc], func(u int) float32 { return src[r*w+int(ct.Idx[x*kc+u])] }, fuse)
				}
				v := sum(rt.WF[y*kr:y*kr+kr], hrow, fuse)
				if fuse {
					fused[y*ow+x] = v
				} else {
					rounded[y*ow+x] = v
				}
			}
		}
	}
	checkFMA(t, "bicubic f32", got, rounded, fused)
}
