package engine

import (
	"math"
	"testing"
)

// torchvision's float32 HSV hue on uint8 and float32 pixels, worked by hand: red (h 0, s 1, v 1)
// turned by 1/3 is h6 = float32(1/3)*6, which rounds to 2.0: sector 2 with fraction 0, (p, v, t) =
// (0, 1, 0), pure green; by -1/3 sector 4, blue (float32(-1/3) + 1 rounds, leaving a fraction of
// 2^-22 in G: 0 after the uint8 truncation, 2.4e-7 in float); a gray pixel (s 0) stays as it is;
// a 1-channel image is left alone.
func TestColorTensorHue(t *testing.T) {
	for _, v2 := range []bool{false, true} {
		for _, tc := range []struct {
			px     []uint8
			factor float64
			want   []uint8
		}{
			{[]uint8{255, 0, 0}, 1.0 / 3, []uint8{0, 255, 0}},
			{[]uint8{255, 0, 0}, -1.0 / 3, []uint8{0, 0, 255}},
			{[]uint8{90, 90, 90}, 0.25, []uint8{90, 90, 90}},
			{[]uint8{0, 0, 0}, 0.5, []uint8{0, 0, 0}},
		} {
			img := append([]uint8(nil), tc.px...)
			if err := ColorTensor(img, 1, 1, 3, v2, []ColorStep{{ColorHue, tc.factor}}); err != nil {
				t.Fatal(err)
			}
			f := []float32{float32(tc.px[0]) / 255, float32(tc.px[1]) / 255, float32(tc.px[2]) / 255}
			if err := ColorTensorF32(f, 1, 1, 3, v2, []ColorStep{{ColorHue, tc.factor}}); err != nil {
				t.Fatal(err)
			}
			for i := range img {
				if img[i] != tc.want[i] || math.Abs(float64(f[i]-float32(tc.want[i])/255)) > 3e-7 {
					t.Errorf("v2 %v hue %v of %v: uint8 %v, float %v, want %v", v2, tc.factor, tc.px, img, f, tc.want)
					break
				}
			}
		}
		one := []uint8{7, 200}
		if err := ColorTensor(one, 1, 2, 1, v2, []ColorStep{{ColorHue, 0.3}}); err != nil || one[0] != 7 || one[1] != 200 {
			t.Errorf("1-channel hue: %v %v", one, err)
		}
	}
}

// The hue round trip with no turn gives every uint8 colour back (v1 and v2: x/255 to HSV and back,
// times 255.999, truncated), on a sample of colours around the cube.
func TestColorTensorHueIdentity(t *testing.T) {
	for _, v2 := range []bool{false, true} {
		img := make([]uint8, 0, 3*4096)
		for k := range 4096 {
			img = append(img, uint8(k*37), uint8(k*101>>2), uint8(k*7+k>>4))
		}
		want := append([]uint8(nil), img...)
		if err := ColorTensor(img, 1, len(img)/3, 3, v2, []ColorStep{{ColorHue, 0}}); err != nil {
			t.Fatal(err)
		}
		for i := range img {
			if img[i] != want[i] {
				t.Fatalf("v2 %v: byte %d: %d, want %d", v2, i, img[i], want[i])
			}
		}
	}
}

// Float32 blends, worked by hand on values exact in float32: brightness 0.5 of 0.5 is 0.25 (v2
// x*f; v1 0.5*x + 0.5*0); contrast 0 of a 1-channel [0.25, 0.75] is its mean 0.5; saturation 0 and
// grayscale of pure green are its luma 0.587 (float32); brightness 3 clamps to 1.
func TestColorTensorF32Values(t *testing.T) {
	g := float32(0.587)
	for _, v2 := range []bool{false, true} {
		for _, tc := range []struct {
			px   []float32
			c    int
			step ColorStep
			want []float32
		}{
			{[]float32{0.5, 0.5, 0.5}, 3, ColorStep{ColorBrightness, 0.5}, []float32{0.25, 0.25, 0.25}},
			{[]float32{0.5, 0.25, 0}, 3, ColorStep{ColorBrightness, 3}, []float32{1, 0.75, 0}},
			{[]float32{0.25, 0.75}, 1, ColorStep{ColorContrast, 0}, []float32{0.5, 0.5}},
			{[]float32{0, 1, 0}, 3, ColorStep{ColorSaturation, 0}, []float32{g, g, g}},
			{[]float32{0, 1, 0}, 3, ColorStep{ColorGray, 0}, []float32{g, g, g}},
			{[]float32{0.1, 0.2}, 1, ColorStep{ColorGray, 0}, []float32{0.1, 0.2}},
		} {
			img := append([]float32(nil), tc.px...)
			if err := ColorTensorF32(img, 1, len(img)/tc.c, tc.c, v2, []ColorStep{tc.step}); err != nil {
				t.Fatal(err)
			}
			for i := range img {
				if img[i] != tc.want[i] {
					t.Errorf("v2 %v %v of %v: got %v, want %v", v2, tc.step, tc.px, img, tc.want)
					break
				}
			}
		}
	}
	if err := ColorTensorF32(make([]float32, 5), 2, 1, 3, false, nil); err == nil {
		t.Error("short buffer: no error")
	}
	if err := ColorTensorF32(make([]float32, 3), 1, 1, 3, true, []ColorStep{{ColorHue, math.Inf(1)}}); err == nil {
		t.Error("infinite factor: no error")
	}
	nanPx := []float32{float32(math.NaN()), 0.5, 0.2}
	if err := ColorTensorF32(nanPx, 1, 1, 3, true, []ColorStep{{ColorHue, 0.2}, {ColorContrast, 0.5}}); err != nil {
		t.Errorf("a NaN pixel: %v", err) // no panic, no error: NaN in, NaN out
	}
}

// numpySum is NumPy's pairwise order: on values whose float64 sums round, it differs from a plain
// running sum exactly as NumPy's does (checked here against the sums worked out in its order),
// and on exact values it is the sum.
func TestNumpySum(t *testing.T) {
	a := make([]float32, 1000)
	for i := range a {
		a[i] = 0.25
	}
	if s := numpySum(a); s != 250 {
		t.Errorf("1000 x 0.25: %v", s)
	}
	// 8 lanes: lane 0 gets 1 then seven 2^-53 values, each lost against 1 in a running sum of the
	// lane, but kept where the lanes are combined pairwise with each other first.
	b := make([]float32, 16)
	b[0] = 1
	tiny := float32(math.Ldexp(1, -53))
	for i := 1; i < 16; i++ {
		b[i] = tiny
	}
	// lanes: r0 = 1 + tiny (rounds to 1), r1..r7 = 2 tiny; ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
	r0, r := 1.0+float64(tiny), 2*float64(tiny)
	want := ((r0 + r) + (r + r)) + ((r + r) + (r + r))
	if s := numpySum(b); s != want {
		t.Errorf("pairwise lanes: %v, want %v", s, want)
	}
	run := 0.0
	for _, x := range b {
		run += float64(x)
	}
	if run == want {
		t.Error("the case does not tell the pairwise order from a running sum")
	}
}
