//go:build goexperiment.simd && amd64

package engine

import (
	"math/rand"
	"testing"
)

// On AVX-512 machines the AVX2 kernels only see row tails; run the fast-path tests again with the
// AVX-512 kernels switched off so the AVX2-only code path (CPUs without VBMI) is tested whole.
func TestFastPathWithoutAVX512(t *testing.T) {
	if !cpu.AVX2 {
		t.Skip("CPU lacks AVX2: only the pure-Go kernels can run here")
	}
	withKernels(t, kernelOverrides{NoVBMI: true})
	TestFastPathEqualsGeneral(t)
	TestStrongDownscaleEqualsGeneral(t)
	TestFusedDownscaleEqualsGeneral(t)
}

// hresizeAVX2 must write exactly hresizeScalar's integers, for random widths (tails of every length),
// up- and downscales, flips, crops and rows ending right at the end of the array (the 8-byte loads
// of the last columns must fall back to the scalar loop there).
func TestHresizeAVX2EqualsScalar(t *testing.T) {
	if !cpu.AVX2 {
		t.Skip("CPU lacks AVX2")
	}
	rng := rand.New(rand.NewSource(11))
	tested, simdCols := 0, 0
	for it := 0; it < 400; it++ {
		h, w := 1+rng.Intn(4), 1+rng.Intn(300)
		if it%4 == 0 {
			w = 1 + rng.Intn(20)
		}
		s := imagenetSpec(0, h, w)
		ow := 1 + rng.Intn(400)
		s.Resize.W, s.Canvas.W, s.Post.W = ow, ow, ow
		s.Post.X0, s.Post.SX = 0, 1
		if rng.Intn(2) == 0 {
			s.Post.X0, s.Post.SX = ow-1, -1
		}
		if cx := rng.Intn(w); rng.Intn(3) == 0 {
			cw := 1 + rng.Intn(w-cx)
			s.Pre = View{0, cx, 1, 1, h, cw}
		}
		start := 0
		if rng.Intn(3) == 0 {
			s.In.Strides[2], start = -3, (w-1)*3
		}
		p, err := NewPlan(s)
		if err != nil || p.fast == nil {
			continue
		}
		f := p.fast
		n := len(f.taps)
		src := make([]uint8, h*w*3) // the last row ends at the end of the array
		for i := range src {
			src[i] = uint8(rng.Intn(256))
		}
		a, b := make([]int16, 3*n), make([]int16, 3*n)
		for _, off := range p.rows.Off {
			rb := start + off
			for i := range a {
				a[i], b[i] = -1, -2
			}
			hresizeAVX2(a, src, rb, f)
			hresizeScalar(b, src, rb, f, 0, n)
			for i := range a {
				if a[i] != b[i] {
					t.Fatalf("it %d (w=%d ow=%d spec %+v %+v): column %d channel %d: avx2 %d, scalar %d", it, w, ow,
						s.Pre, s.Post, i%n, i/n, a[i], b[i])
				}
			}
		}
		tested++
		simdCols += 8 * len(f.octEnd)
	}
	if tested < 200 || simdCols == 0 {
		t.Fatalf("only %d random plans took the fast path (%d SIMD columns)", tested, simdCols)
	}
}

// BenchmarkHresizeAVX2 times the horizontal pass of BenchmarkImagenet512's plan (512 source rows
// -> 224 columns): hresizeAVX2 and hresizeScalar.
func BenchmarkHresizeAVX2(b *testing.B) {
	if !cpu.AVX2 {
		b.Skip("CPU lacks AVX2")
	}
	p, err := NewPlan(imagenetSpec(0, 512, 512))
	if err != nil || p.fast == nil {
		b.Fatal("no fast plan", err)
	}
	src := make([]uint8, 512*512*3)
	for i := range src {
		src[i] = uint8(i * 7)
	}
	d := make([]int16, 3*len(p.fast.taps))
	for _, v := range []struct {
		name string
		run  func(rb int)
	}{
		{"avx2", func(rb int) { hresizeAVX2(d, src, rb, p.fast) }},
		{"scalar", func(rb int) { hresizeScalar(d, src, rb, p.fast, 0, len(p.fast.taps)) }},
	} {
		b.Run(v.name, func(b *testing.B) {
			for range b.N {
				for r := 0; r < 512; r++ {
					v.run(r * 512 * 3)
				}
			}
		})
	}
}
