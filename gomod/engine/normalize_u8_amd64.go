//go:build goexperiment.simd && amd64

package engine

import "simd/archsimd"

// The uint8 normalisation's row kernels with AVX2: each byte zero-extended (VPMOVZXBD), converted
// (VCVTDQ2PS, exact for 0..255) and normalised by VMULPS, VSUBPS, VDIVPS: the three IEEE float32
// operations of normTables.apply, each rounded, none fused, so every value equals the table's entry
// (TestNormU8AVX2EqualsTable: all 256 bytes under several constants). No gather: archsimd has none.

// normU8Shuf takes, from the 16 bytes at 3x (lo) and the 16 at 3x+8 (hi) of eight interleaved pixels,
// one channel's eight bytes to lanes 0-7: channel c's lo indices, then its hi indices (bytes 16-23 of
// the group lie at 8-15 of hi); -1 zeroes a lane (the two results are ORed).
var normU8Shuf = func() (s [3][2][16]int8) {
	for c := 0; c < 3; c++ {
		for l := 0; l < 16; l++ {
			s[c][0][l], s[c][1][l] = -1, -1
		}
		for k := 0; k < 8; k++ {
			if p := 3*k + c; p < 16 {
				s[c][0][k] = int8(p)
			} else {
				s[c][1][k] = int8(p - 8)
			}
		}
	}
	return s
}()

// normU8Hi8 takes bytes 8-15 to lanes 0-7.
var normU8Hi8 = [16]int8{8, 9, 10, 11, 12, 13, 14, 15, -1, -1, -1, -1, -1, -1, -1, -1}

// normU8F32 is normTables.apply on eight bytes' lanes 0-7 of b: float32(float32(x*s) - m) / d.
func normU8F32(b archsimd.Uint8x16, s, m, d archsimd.Float32x8) archsimd.Float32x8 {
	return b.ExtendLo8ToUint32().AsInt32x8().ConvertToFloat32().Mul(s).Sub(m).Div(d)
}

// normU8CHW3 looks an interleaved three-channel uint8 row up into three plane rows, as
// normU8CHW3Scalar: with k.AVX2 eight pixels a step (two 16-byte loads at 3x and 3x+8, a VPSHUFB pair
// and an OR per channel, normU8F32, one 32-byte store per plane), the row's last len(o0)%8 pixels in
// normU8CHW3Scalar.
// Invariants: as normU8CHW3Scalar's; the loads stay inside vals[:3*len(o0)] (x+8 <= len(o0)).
// Twin: normU8CHW3Scalar; proved by TestNormU8KernelsEqualScalar.
// Why: the scalar lookup ran at ~0.68 ns a value, 4.5-6 ms of a 1080p LLaVA-OneVision image's ~9.8 ms.
func (k *kernelSet) normU8CHW3(o0, o1, o2 []float32, vals []uint8, n *normTables) {
	m := len(o0)
	if !k.AVX2 || m < 8 {
		normU8CHW3Scalar(o0, o1, o2, vals, n, 0)
		return
	}
	o1, o2, vals = o1[:m], o2[:m], vals[:3*m]
	var sh [3][2]archsimd.Int8x16
	var s, mu, d [3]archsimd.Float32x8
	for c := 0; c < 3; c++ {
		sh[c][0] = archsimd.LoadInt8x16(&normU8Shuf[c][0])
		sh[c][1] = archsimd.LoadInt8x16(&normU8Shuf[c][1])
		s[c] = archsimd.BroadcastFloat32x8(n.scale[c])
		mu[c] = archsimd.BroadcastFloat32x8(n.mean[c])
		d[c] = archsimd.BroadcastFloat32x8(n.std[c])
	}
	x := 0
	for ; x+8 <= m; x += 8 {
		lo := archsimd.LoadUint8x16((*[16]uint8)(vals[3*x : 3*x+16]))
		hi := archsimd.LoadUint8x16((*[16]uint8)(vals[3*x+8 : 3*x+24]))
		b0 := lo.PermuteOrZero(sh[0][0]).Or(hi.PermuteOrZero(sh[0][1]))
		b1 := lo.PermuteOrZero(sh[1][0]).Or(hi.PermuteOrZero(sh[1][1]))
		b2 := lo.PermuteOrZero(sh[2][0]).Or(hi.PermuteOrZero(sh[2][1]))
		normU8F32(b0, s[0], mu[0], d[0]).Store((*[8]float32)(o0[x : x+8]))
		normU8F32(b1, s[1], mu[1], d[1]).Store((*[8]float32)(o1[x : x+8]))
		normU8F32(b2, s[2], mu[2], d[2]).Store((*[8]float32)(o2[x : x+8]))
	}
	if x < m {
		normU8CHW3Scalar(o0, o1, o2, vals, n, x)
	}
}

// normU8HWC looks an interleaved oc-channel uint8 row up in its layout, as normU8HWCScalar: with
// k.AVX2 and oc dividing 24 (1, 2, 3, 4, 6, 8), 24 values a step (loads at i and i+8; bytes 16-23
// moved down by a VPSHUFB) against constants laid out per lane (normTables.lanes: lane l of vector j
// holds channel (8j+l)%oc's, the same every step as 24 is a multiple of oc), the last len(out)%24 in normU8HWCScalar.
// Invariants: as normU8HWCScalar's; the loads stay inside vals[:len(out)] (i+24 <= len(out)).
// Twin: normU8HWCScalar; proved by TestNormU8KernelsEqualScalar.
// Why: as normU8CHW3's (the channel-last output of the same pipelines).
func (k *kernelSet) normU8HWC(out []float32, vals []uint8, n *normTables, oc int) {
	m := len(out)
	if !k.AVX2 || m < 24 || n.lanes == nil || len(n.scale) != oc {
		normU8HWCScalar(out, vals, n, oc, 0)
		return
	}
	vals = vals[:m]
	var s, mu, d [3]archsimd.Float32x8
	for j := 0; j < 3; j++ {
		s[j], mu[j], d[j] = archsimd.LoadFloat32x8(&n.lanes[0][j]), archsimd.LoadFloat32x8(&n.lanes[1][j]), archsimd.LoadFloat32x8(&n.lanes[2][j])
	}
	hi8 := archsimd.LoadInt8x16(&normU8Hi8)
	i := 0
	for ; i+24 <= m; i += 24 {
		lo := archsimd.LoadUint8x16((*[16]uint8)(vals[i : i+16]))
		hi := archsimd.LoadUint8x16((*[16]uint8)(vals[i+8 : i+24]))
		normU8F32(lo, s[0], mu[0], d[0]).Store((*[8]float32)(out[i : i+8]))
		normU8F32(hi, s[1], mu[1], d[1]).Store((*[8]float32)(out[i+8 : i+16]))
		normU8F32(hi.PermuteOrZero(hi8), s[2], mu[2], d[2]).Store((*[8]float32)(out[i+16 : i+24]))
	}
	if i < m {
		normU8HWCScalar(out, vals, n, oc, i)
	}
}
