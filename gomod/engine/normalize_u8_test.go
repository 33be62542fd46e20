package engine

import (
	"fmt"
	"math"
	"math/rand"
	"testing"
)

// The uint8 normalisation kernels (normalize_u8_amd64.go with AVX2; elsewhere the scalar twins
// themselves) against the tables they replace.

// normU8Specs are the constants the kernels are proved on: ImageNet's, scale 1/255 and 1, odd stds,
// negative and huge means, a tiny std (overflow to infinity), std 0 (infinities and NaN), a negative
// scale and subnormal results.
var normU8Specs = []NormSpec{
	{Scale: 1.0 / 255, Mean: []float64{0.485, 0.456, 0.406}, Std: []float64{0.229, 0.224, 0.225}},
	{Scale: 1.0 / 255, Mean: []float64{0.5, 0.5, 0.5}, Std: []float64{0.5, 0.5, 0.5}},
	{Scale: 1.0 / 255, Mean: []float64{0.48145466, 0.4578275, 0.40821073}, Std: []float64{0.26862954, 0.26130258, 0.27577711}},
	{Scale: 1, Mean: []float64{123.675, 116.28, 103.53}, Std: []float64{58.395, 57.12, 57.375}},
	{Scale: 1, Mean: []float64{127.5, 0, -3}, Std: []float64{127.5, 1, 0.3}},
	{Scale: 1.0 / 255, Mean: []float64{-1e30, 3e38, -7.25}, Std: []float64{0.8473, 1.7e-3, 3.3333}},
	{Scale: 0.017, Mean: []float64{1e-40, -2.5, 1e20}, Std: []float64{1e-38, 1e38, 0}},
	{Scale: -1.0 / 3, Mean: []float64{0, 0.1, -0.1}, Std: []float64{-0.7, 1e-30, 6.02e23}},
	{Scale: math.Ldexp(1, -120), Mean: []float64{0, 0, 0}, Std: []float64{math.Ldexp(1, 20), 3, 1}},
}

// normU8Spec is normU8Specs[i] with oc channels (its constants repeated).
func normU8Spec(i, oc int) *NormSpec {
	s := normU8Specs[i]
	spec := &NormSpec{Scale: s.Scale, DType: F32}
	for c := 0; c < oc; c++ {
		spec.Mean = append(spec.Mean, s.Mean[(c+i)%3])
		spec.Std = append(spec.Std, s.Std[(c*2+i)%3])
	}
	return spec
}

// avx2Kernels is the kernel set with the AVX2 loops where the build and CPU have them.
func avx2Kernels() kernelSet { return chooseKernels(cpu, kernelOverrides{}) }

// Every byte under every constant: the kernels' float32 multiply, subtract and divide give the table's
// value bit for bit (NaNs included), in the three-plane and the channel-last kernels.
func TestNormU8AVX2EqualsTable(t *testing.T) {
	k := avx2Kernels()
	for i := range normU8Specs {
		for _, oc := range []int{1, 2, 3, 4, 6} {
			n := newNormTables(normU8Spec(i, oc), U8)
			vals := make([]uint8, 256*oc) // pixel v: channel c holds byte (v + 37c) % 256
			for v := 0; v < 256; v++ {
				for c := 0; c < oc; c++ {
					vals[v*oc+c] = uint8(v + 37*c)
				}
			}
			out := make([]float32, len(vals))
			k.normU8HWC(out, vals, n, oc)
			for j, v := range vals {
				if math.Float32bits(out[j]) != math.Float32bits(n.lutF32[j%oc][v]) {
					t.Fatalf("spec %d oc %d HWC byte %d channel %d: %v, table %v", i, oc, v, j%oc, out[j], n.lutF32[j%oc][v])
				}
			}
			if oc != 3 {
				continue
			}
			p := [3][]float32{make([]float32, 256), make([]float32, 256), make([]float32, 256)}
			k.normU8CHW3(p[0], p[1], p[2], vals, n)
			for j, v := range vals {
				if got := p[j%3][j/3]; math.Float32bits(got) != math.Float32bits(n.lutF32[j%3][v]) {
					t.Fatalf("spec %d CHW byte %d channel %d: %v, table %v", i, v, j%3, got, n.lutF32[j%3][v])
				}
			}
		}
	}
}

// Random rows of every width 1-67 and 224, 384, 1920 pixels (every tail length), all constants:
// normU8CHW3 and normU8HWC equal their scalar twins bit for bit and write nothing past the row.
func TestNormU8KernelsEqualScalar(t *testing.T) {
	k := avx2Kernels()
	rng := rand.New(rand.NewSource(53))
	widths := []int{224, 384, 1920}
	for w := 1; w <= 67; w++ {
		widths = append(widths, w)
	}
	const guard = 9
	for _, oc := range []int{1, 2, 3, 4, 5, 6} {
		for _, w := range widths {
			n := newNormTables(normU8Spec(rng.Intn(len(normU8Specs)), oc), U8)
			vals := make([]uint8, w*oc)
			for i := range vals {
				vals[i] = uint8(rng.Intn(256))
			}
			name := fmt.Sprintf("oc %d w %d", oc, w)
			got, want := make([]float32, w*oc+guard), make([]float32, w*oc+guard)
			k.normU8HWC(got[:w*oc], vals, n, oc)
			normU8HWCScalar(want[:w*oc], vals, n, oc, 0)
			eqBits(t, name+" HWC", got, want)
			if oc != 3 {
				continue
			}
			var g, s [3][]float32
			for c := range g {
				g[c], s[c] = make([]float32, w+guard), make([]float32, w+guard)
			}
			k.normU8CHW3(g[0][:w], g[1][:w], g[2][:w], vals, n)
			normU8CHW3Scalar(s[0][:w], s[1][:w], s[2][:w], vals, n, 0)
			for c := range g {
				eqBits(t, fmt.Sprintf("%s CHW plane %d", name, c), g[c], s[c])
			}
		}
	}
}

// eqBits fails t unless got and want hold the same bits.
func eqBits(t *testing.T, name string, got, want []float32) {
	t.Helper()
	for i := range got {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("%s: value %d = %v (%#x), want %v (%#x)", name, i, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
		}
	}
}

// BenchmarkNormU8 is the emit's conversion of one image's rows with the process's kernels (-bench with
// GOEXPERIMENT=simd for the AVX2 loops): a 384x384 CHW tile (LLaVA-OneVision's), a 224x224 CHW image
// (ImageNet eval, training batches) and a 384x384 HWC tile.
func BenchmarkNormU8(b *testing.B) {
	n := newNormTables(normU8Spec(0, 3), U8)
	for _, c := range []struct {
		name string
		w    int
		chw  bool
	}{{"CHW384", 384, true}, {"CHW224", 224, true}, {"HWC384", 384, false}} {
		b.Run(c.name, func(b *testing.B) {
			k := currentKernels()
			w := c.w
			src := make([]uint8, 3*w*w)
			for i := range src {
				src[i] = uint8(i * 7)
			}
			out := make([]float32, 3*w*w)
			b.SetBytes(int64(4 * len(out)))
			for b.Loop() {
				for y := 0; y < w; y++ {
					row := src[3*w*y : 3*w*(y+1)]
					if c.chw {
						o := y * w
						k.normU8CHW3(out[o:o+w], out[w*w+o:w*w+o+w], out[2*w*w+o:2*w*w+o+w], row, n)
					} else {
						k.normU8HWC(out[3*w*y:3*w*(y+1)], row, n, 3)
					}
				}
			}
		})
	}
}

// emitF32's kernels (normCHW3, normHWC3: AVX2 on amd64's SIMD build, NEON on arm64) equal their pure-Go
// twins bit for bit: random lengths (tails of every length, and 224, 384, 1920 pixels), values from
// everywhere (randSpecial: NaN payloads, infinities, subnormals) and normalisations of every kind.
func TestNormF32KernelsEqualScalar(t *testing.T) {
	k := avx2Kernels()
	rng := rand.New(rand.NewSource(59))
	for it := 0; it < 600; it++ {
		n, vals := randNormRow(rng, it%2 == 1, 100)
		if it%50 == 0 {
			n, vals = randNormRow(rng, it%4 == 2, 1)
			vals = make([]float32, 3*[]int{224, 384, 1920}[it/50%3])
			for i := range vals {
				vals[i] = randSpecial(rng)
			}
		}
		m := len(vals) / 3
		var got, want [3][]float32
		for c := range got {
			got[c], want[c] = make([]float32, m+5), make([]float32, m+5)
		}
		k.normCHW3(got[0][:m], got[1][:m], got[2][:m], vals, n)
		normCHW3Scalar(want[0][:m], want[1][:m], want[2][:m], vals, n, 0)
		for c := range got {
			eqBits(t, fmt.Sprintf("it %d m=%d CHW plane %d", it, m, c), got[c], want[c])
		}
		g, w := make([]float32, 3*m+5), make([]float32, 3*m+5)
		k.normHWC3(g[:3*m], vals, n)
		normHWC3Scalar(w[:3*m], vals, n, 0)
		eqBits(t, fmt.Sprintf("it %d m=%d HWC", it, m), g, w)
	}
}

// BenchmarkNormF32CHW384 is emitF32's normalisation of a 384x384 float32 RGB tile into planes with the
// process's kernels (AVX2 with GOEXPERIMENT=simd).
func BenchmarkNormF32CHW384(b *testing.B) {
	n := newNormTables(normU8Spec(0, 3), F32)
	k, w := currentKernels(), 384
	src, out := make([]float32, 3*w*w), make([]float32, 3*w*w)
	for i := range src {
		src[i] = float32(i % 251)
	}
	b.SetBytes(int64(4 * len(out)))
	for b.Loop() {
		for y := 0; y < w; y++ {
			o := y * w
			k.normCHW3(out[o:o+w], out[w*w+o:w*w+o+w], out[2*w*w+o:2*w*w+o+w], src[3*w*y:3*w*(y+1)], n)
		}
	}
}
