//go:build goexperiment.simd && amd64

package engine

import "testing"

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

// hresizeAVX2 must write exactly hresizeScalar's integers (checkHresizeEqualsScalar).
func TestHresizeAVX2EqualsScalar(t *testing.T) {
	if !cpu.AVX2 {
		t.Skip("CPU lacks AVX2")
	}
	checkHresizeEqualsScalar(t, "avx2", hresizeAVX2)
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
