package engine

import "math"

// normTables holds per-output-channel constants. For uint8 sources every possible input value is
// normalised once into a 256-entry table, so the fused pass spends one load per output value instead
// of a multiply, subtract and divide (and the float16 cast).
type normTables struct {
	scale, mean, std []float32 // per output channel (scale repeated)
	f16              bool
	lutF32           [][256]float32 // uint8 sources only
	lutF16           [][256]uint16
	// lanes holds the channel-last kernels' constants when the channel count divides 24 (else nil):
	// lanes[k][j][l] is scale (k=0), mean (1) or std (2) of channel (8j+l)%c (normU8HWC's vectors).
	lanes *[3][3][8]float32
}

func newNormTables(n *NormSpec, in DType) *normTables {
	c := len(n.Mean)
	t := &normTables{f16: n.DType == F16}
	for i := 0; i < c; i++ {
		t.scale = append(t.scale, float32(n.Scale))
		t.mean = append(t.mean, float32(n.Mean[i]))
		t.std = append(t.std, float32(n.Std[i]))
	}
	if c > 0 && 24%c == 0 {
		t.lanes = new([3][3][8]float32)
		for j := 0; j < 3; j++ {
			for l := 0; l < 8; l++ {
				ch := (8*j + l) % c
				t.lanes[0][j][l], t.lanes[1][j][l], t.lanes[2][j][l] = t.scale[ch], t.mean[ch], t.std[ch]
			}
		}
	}
	if in == U8 {
		t.lutF32 = make([][256]float32, c)
		t.lutF16 = make([][256]uint16, c)
		for ch := 0; ch < c; ch++ {
			for v := 0; v < 256; v++ {
				f := t.apply(ch, float32(v))
				t.lutF32[ch][v] = f
				t.lutF16[ch][v] = Float32ToFloat16(f)
			}
		}
	}
	return t
}

// apply is the normalisation formula, in float32 with each step rounded as NumPy's float32 arithmetic
// rounds it. The explicit float32 conversions stop the compiler from fusing a multiply-add, which would
// change the last bit on platforms with FMA.
func (t *normTables) apply(ch int, x float32) float32 {
	return float32(float32(x*t.scale[ch])-t.mean[ch]) / t.std[ch]
}

// Float32ToFloat16 converts with round-to-nearest-even, overflow to infinity and subnormal results,
// the same as NumPy's float32 -> float16 cast.
func Float32ToFloat16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23) & 0xff
	man := b & 0x7fffff
	switch {
	case exp == 0xff: // Inf or NaN: keep NaN quiet and non-zero
		if man != 0 {
			return sign | 0x7e00 | uint16(man>>13)
		}
		return sign | 0x7c00
	case exp > 142: // >= 2^16 after rounding region: overflow
		return sign | 0x7c00
	case exp >= 113: // normal half
		he := uint32(exp-112) << 10
		hm := man >> 13
		rest := man & 0x1fff
		h := he | hm
		if rest > 0x1000 || (rest == 0x1000 && h&1 == 1) {
			h++ // may carry into the exponent, up to infinity: correct
		}
		return sign | uint16(h)
	case exp >= 102: // subnormal half
		m := man | 0x800000
		shift := uint32(126 - exp) // 14..24
		hm := m >> shift
		rest := m & (1<<shift - 1)
		half := uint32(1) << (shift - 1)
		if rest > half || (rest == half && hm&1 == 1) {
			hm++
		}
		return sign | uint16(hm)
	default: // underflows to signed zero
		return sign
	}
}
