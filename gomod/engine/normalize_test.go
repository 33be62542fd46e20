package engine

import (
	"math"
	"math/rand"
	"testing"
)

func TestFloat32ToFloat16(t *testing.T) {
	cases := []struct {
		in   float32
		want uint16
	}{
		{0, 0x0000},
		{float32(math.Copysign(0, -1)), 0x8000},
		{1, 0x3c00},
		{-2, 0xc000},
		{65504, 0x7bff},                                    // largest half
		{65519.99, 0x7bff},                                 // rounds down to it
		{65520, 0x7c00},                                    // ties to even: overflows to +Inf
		{1e9, 0x7c00},                                      // overflow
		{float32(math.Inf(-1)), 0xfc00},                    // -Inf
		{float32(math.Pow(2, -24)), 0x0001},                // smallest subnormal
		{float32(math.Pow(2, -25)), 0x0000},                // tie to even: zero
		{float32(math.Pow(2, -25) * 1.5), 0x0001},          // above the tie
		{float32(math.Pow(2, -14)), 0x0400},                // smallest normal
		{1 + float32(math.Pow(2, -11)), 0x3c00},            // tie, even stays
		{1 + float32(3*float32(math.Pow(2, -11))), 0x3c02}, // tie, odd rounds up
		{0.1, 0x2e66},
	}
	for _, c := range cases {
		if got := Float32ToFloat16(c.in); got != c.want {
			t.Errorf("Float32ToFloat16(%g) = %#04x, want %#04x", c.in, got, c.want)
		}
	}
	if got := Float32ToFloat16(float32(math.NaN())); got&0x7c00 != 0x7c00 || got&0x3ff == 0 {
		t.Errorf("NaN converted to %#04x, not a NaN", got)
	}
}

func TestNormTablesMatchFormula(t *testing.T) {
	n := newNormTables(&NormSpec{Mean: []float64{0.485, 0.456, 0.406}, Std: []float64{0.229, 0.224, 0.225}, Scale: 1.0 / 255, DType: F32, Layout: "CHW"}, U8)
	for c := 0; c < 3; c++ {
		for v := 0; v < 256; v++ {
			want := (float32(float32(v)*float32(1.0/255)) - float32(n.mean[c])) / n.std[c] // explicit rounding: no FMA (arm64 fused it)
			if n.lutF32[c][v] != want {
				t.Fatalf("channel %d value %d: table %v, formula %v", c, v, n.lutF32[c][v], want)
			}
		}
	}
}

// normCHW3Scalar and normHWC3Scalar (emitF32's kernels, the NEON kernels' twins) equal
// normTables.apply bit for bit, on values from everywhere (randSpecial) and random normalisations.
func TestNormScalarTwinsEqualApply(t *testing.T) {
	rng := rand.New(rand.NewSource(47))
	for it := 0; it < 200; it++ {
		n, vals := randNormRow(rng, it%2 == 1, 50)
		m := len(vals) / 3
		o := [3][]float32{make([]float32, m), make([]float32, m), make([]float32, m)}
		hwc := make([]float32, 3*m)
		normCHW3Scalar(o[0], o[1], o[2], vals, n, 0)
		normHWC3Scalar(hwc, vals, n, 0)
		for i, v := range vals {
			want := math.Float32bits(n.apply(i%3, v))
			if math.Float32bits(o[i%3][i/3]) != want || math.Float32bits(hwc[i]) != want {
				t.Fatalf("it %d value %d (%v): CHW %v, HWC %v, apply %v", it, i, v, o[i%3][i/3], hwc[i], n.apply(i%3, v))
			}
		}
	}
}

// randSpecial is a float32 from everywhere: ordinary values, signed zeros, subnormals, huge values,
// infinities and NaNs with payloads.
func randSpecial(rng *rand.Rand) float32 {
	switch rng.Intn(12) {
	case 0:
		return math.Float32frombits(rng.Uint32()) // any bit pattern: NaN payloads included
	case 1:
		return float32(math.Copysign(0, float64(rng.Intn(2)*2-1)))
	case 2:
		return math.Float32frombits(rng.Uint32() & 0x807fffff) // subnormal
	case 3:
		return float32(math.Inf(rng.Intn(2)*2 - 1))
	case 4:
		return float32(rng.NormFloat64() * 1e38)
	}
	return float32(rng.NormFloat64() * 100)
}

// randNormRow is a random case for the three-channel float normalisation kernels: ImageNet's
// normalisation, or (odd) a scale, means and stds from everywhere (randSpecial: either sign, tiny,
// huge, zero), and an interleaved row of fewer than maxPix pixels whose values come from everywhere.
func randNormRow(rng *rand.Rand, odd bool, maxPix int) (*normTables, []float32) {
	spec := &NormSpec{Scale: 1.0 / 255, Mean: []float64{0.485, 0.456, 0.406}, Std: []float64{0.229, 0.224, 0.225}}
	if odd {
		for c := 0; c < 3; c++ {
			spec.Mean[c], spec.Std[c] = float64(randSpecial(rng)), float64(randSpecial(rng))
		}
		spec.Scale = float64(randSpecial(rng))
	}
	vals := make([]float32, 3*rng.Intn(maxPix))
	for i := range vals {
		vals[i] = randSpecial(rng)
	}
	return newNormTables(spec, F32), vals
}

// randNormSpec1 is a random one-channel normalisation for the row kernels' tests, by it%5: a random
// mean and std, (1, 127.5, 127.5), arbitrary signs and sizes, subnormal results, std 0 (infinities
// and NaN).
func randNormSpec1(rng *rand.Rand, it int) *NormSpec {
	spec := &NormSpec{Scale: 1.0 / 255, Mean: []float64{rng.Float64()}, Std: []float64{0.1 + float64(rng.Float64())}} // float64(): an explicit rounding, no FMA (check_fma.sh)
	switch it % 5 {
	case 1:
		spec.Scale, spec.Mean[0], spec.Std[0] = 1, 127.5, 127.5
	case 2:
		spec.Scale, spec.Mean[0], spec.Std[0] = rng.NormFloat64(), rng.NormFloat64()*100, -rng.Float64()*1e-3
	case 3:
		spec.Scale, spec.Mean[0], spec.Std[0] = math.Ldexp(1, -120), 0, math.Ldexp(1, 20) // subnormal results
	case 4:
		spec.Std[0] = 0 // infinities and NaN
	}
	return spec
}
