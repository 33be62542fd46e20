//go:build goexperiment.simd && amd64

package engine

import "simd/archsimd"

// simdEnabled reports whether the row kernels use SIMD in this build.
const simdEnabled = true

var (
	hasAVX2 = archsimd.X86.AVX2()
	hasVBMI = archsimd.X86.AVX512() && archsimd.X86.AVX512VBMI()
)

// hresizeRow is the fast horizontal pass, 16 columns at a time on AVX-512 VBMI: load the group's
// 128-byte window into two registers, gather each channel's (lower, higher) pixel pairs with two
// two-register byte permutes (VPERMI2B), widen to int16 and multiply-add the weight pairs (VPMADDWD):
// the same integers as hresizeScalar, which handles the columns no group covers and CPUs without VBMI.
// VPMADDWD instead of widening to int32 and two VPMULLD took BenchmarkImagenet512 from ~138us to ~125us.
func hresizeRow(d []int32, src []uint8, rb int, f *fastPlan) {
	n := len(f.taps)
	if !hasVBMI {
		hresizeScalar(d, src, rb, f, 0, n)
		return
	}
	d = d[:3*n]
	row := src[rb+f.minOff:]
	for gi := range f.groups {
		g := &f.groups[gi]
		j := 16 * gi
		if !g.fits {
			hresizeScalar(d, src, rb, f, j, j+16)
			continue
		}
		var x, y archsimd.Uint8x64
		if w := row[g.start:]; len(w) >= windowBytes {
			x, y = archsimd.LoadUint8x64Slice(w), archsimd.LoadUint8x64Slice(w[64:])
		} else { // the array ends inside the window: partial loads never touch memory past it
			x = archsimd.LoadUint8x64SlicePart(w)
			if len(w) > 64 {
				y = archsimd.LoadUint8x64SlicePart(w[64:])
			}
		}
		a := x.ConcatPermute(y, archsimd.LoadUint8x64(&g.idx01))
		b := x.ConcatPermute(y, archsimd.LoadUint8x64(&g.idx2))
		w := archsimd.LoadInt16x32(&g.w)
		// Pixels (<= 255) and weights (<= 2048) fit int16, the pair sums (<= 255*2048) int32: exact.
		a.GetLo().ExtendToUint16().AsInt16x32().DotProductPairs(w).StoreSlice(d[j:])
		a.GetHi().ExtendToUint16().AsInt16x32().DotProductPairs(w).StoreSlice(d[n+j:])
		b.GetLo().ExtendToUint16().AsInt16x32().DotProductPairs(w).StoreSlice(d[2*n+j:])
	}
	if done := 16 * len(f.groups); done < n {
		hresizeScalar(d, src, rb, f, done, n)
	}
}

// vnormRow is vnormScalar eight values at a time (AVX2): the same integer steps as OpenCV's vertical
// pass (values are below 2^20 and weights at most 2^11, so 32-bit lanes never overflow), then the
// normalisation formula in float32. Each float step is its own IEEE instruction (no FMA), so the
// results equal the table that vnormScalar reads, bit for bit.
func vnormRow(out []float32, s0, s1 []int32, b0, b1 int32, scale, mean, std float32, lut *[256]float32) {
	if !hasAVX2 {
		vnormScalar(out, s0, s1, b0, b1, lut)
		return
	}
	n := len(out)
	s0, s1 = s0[:n], s1[:n]
	i := 0
	if hasVBMI { // AVX-512, 16 lanes: BenchmarkImagenet512 went from ~175us (8 lanes) to ~138us
		w0, w1, two := archsimd.BroadcastInt32x16(b0), archsimd.BroadcastInt32x16(b1), archsimd.BroadcastInt32x16(2)
		vs, vm, vd := archsimd.BroadcastFloat32x16(scale), archsimd.BroadcastFloat32x16(mean), archsimd.BroadcastFloat32x16(std)
		for ; i+16 <= n; i += 16 {
			a := archsimd.LoadInt32x16Slice(s0[i:]).ShiftAllRight(4).Mul(w0).ShiftAllRight(16)
			c := archsimd.LoadInt32x16Slice(s1[i:]).ShiftAllRight(4).Mul(w1).ShiftAllRight(16)
			v := a.Add(c).Add(two).ShiftAllRight(2)
			v.ConvertToFloat32().Mul(vs).Sub(vm).Div(vd).StoreSlice(out[i:])
		}
	}
	w0, w1, two := archsimd.BroadcastInt32x8(b0), archsimd.BroadcastInt32x8(b1), archsimd.BroadcastInt32x8(2)
	vs, vm, vd := archsimd.BroadcastFloat32x8(scale), archsimd.BroadcastFloat32x8(mean), archsimd.BroadcastFloat32x8(std)
	for ; i+8 <= n; i += 8 {
		a := archsimd.LoadInt32x8Slice(s0[i:]).ShiftAllRight(4).Mul(w0).ShiftAllRight(16)
		c := archsimd.LoadInt32x8Slice(s1[i:]).ShiftAllRight(4).Mul(w1).ShiftAllRight(16)
		v := a.Add(c).Add(two).ShiftAllRight(2)
		v.ConvertToFloat32().Mul(vs).Sub(vm).Div(vd).StoreSlice(out[i:])
	}
	if i < n {
		vnormScalar(out[i:], s0[i:], s1[i:], b0, b1, lut)
	}
}

// SIMDLevel names the row kernels in use.
func SIMDLevel() string {
	switch {
	case hasVBMI:
		return "avx512vbmi"
	case hasAVX2:
		return "avx2"
	}
	return "none (CPU lacks AVX2)"
}
