package engine

import (
	"math"
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
