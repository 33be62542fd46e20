//go:build goexperiment.simd && amd64

package engine

import "simd/archsimd"

// The float normalisation's row kernels on amd64 (emitF32, float32 sources with three output
// channels and float32 output): AVX2 where the kernel set says so (kernelSet.AVX2), else the pure-Go
// twins of normalize_cpu.go, which they equal bit for bit: VMULPS, VSUBPS, VDIVPS are the rounded
// float32 steps of normTables.apply, never fused (TestNormF32KernelsEqualScalar).

// normF32Perm: for channel c, lane k takes the value at 3k+c of 24 interleaved floats, which lies in
// vector (3k+c)/8 of the three loaded at lane (3k+c)%8; normF32Src records that vector.
var normF32Perm, normF32Src = func() (p [3][8]uint32, s [3][8]int32) {
	for c := 0; c < 3; c++ {
		for k := 0; k < 8; k++ {
			p[c][k], s[c][k] = uint32((3*k+c)%8), int32((3*k+c)/8)
		}
	}
	return
}()

// normCHW3 normalises an interleaved three-channel float32 row into three plane rows, as
// normCHW3Scalar: with k.AVX2 eight pixels a step (three 32-byte loads; per channel three VPERMPS and
// two blends gather its eight values, then VMULPS, VSUBPS, VDIVPS and one store), the last len(o0)%8
// pixels in normCHW3Scalar.
// Invariants: len(o1), len(o2) >= len(o0), len(vals) >= 3*len(o0); n has three channels.
// Twin: normCHW3Scalar; proved by TestNormF32KernelsEqualScalar.
// Why: float32 sources are normalised per value (no table); arm64 had NEON, amd64 only the scalar loop.
func (k *kernelSet) normCHW3(o0, o1, o2, vals []float32, n *normTables) {
	m := len(o0)
	if !k.AVX2 || m < 8 {
		normCHW3Scalar(o0, o1, o2, vals, n, 0)
		return
	}
	o1, o2, vals = o1[:m], o2[:m], vals[:3*m]
	var idx [3]archsimd.Uint32x8
	var inA, inB [3]archsimd.Mask32x8
	var s, mu, d [3]archsimd.Float32x8
	zero, one := archsimd.BroadcastInt32x8(0), archsimd.BroadcastInt32x8(1)
	for c := 0; c < 3; c++ {
		idx[c] = archsimd.LoadUint32x8(&normF32Perm[c])
		src := archsimd.LoadInt32x8(&normF32Src[c])
		inA[c], inB[c] = src.Equal(zero), src.Equal(one)
		s[c] = archsimd.BroadcastFloat32x8(n.scale[c])
		mu[c] = archsimd.BroadcastFloat32x8(n.mean[c])
		d[c] = archsimd.BroadcastFloat32x8(n.std[c])
	}
	outs := [3][]float32{o0, o1, o2}
	x := 0
	for ; x+8 <= m; x += 8 {
		a := archsimd.LoadFloat32x8((*[8]float32)(vals[3*x : 3*x+8]))
		b := archsimd.LoadFloat32x8((*[8]float32)(vals[3*x+8 : 3*x+16]))
		cc := archsimd.LoadFloat32x8((*[8]float32)(vals[3*x+16 : 3*x+24]))
		for c := 0; c < 3; c++ {
			v := a.Permute(idx[c]).Merge(b.Permute(idx[c]).Merge(cc.Permute(idx[c]), inB[c]), inA[c])
			v.Mul(s[c]).Sub(mu[c]).Div(d[c]).Store((*[8]float32)(outs[c][x : x+8]))
		}
	}
	if x < m {
		normCHW3Scalar(o0, o1, o2, vals, n, x)
	}
}

// normHWC3 normalises an interleaved three-channel float32 row in its layout, as normHWC3Scalar: with
// k.AVX2 24 values a step against the per-lane constants normTables.lanes (lane l of vector j holds
// channel (8j+l)%3's), the last len(out)%24 in normHWC3Scalar.
// Invariants: len(vals) >= len(out), len(out) a multiple of 3; n has three channels.
// Twin: normHWC3Scalar; proved by TestNormF32KernelsEqualScalar.
// Why: as normCHW3's.
func (k *kernelSet) normHWC3(out, vals []float32, n *normTables) {
	m := len(out)
	if !k.AVX2 || m < 24 || n.lanes == nil || len(n.scale) != 3 {
		normHWC3Scalar(out, vals, n, 0)
		return
	}
	vals = vals[:m]
	var s, mu, d [3]archsimd.Float32x8
	for j := 0; j < 3; j++ {
		s[j], mu[j], d[j] = archsimd.LoadFloat32x8(&n.lanes[0][j]), archsimd.LoadFloat32x8(&n.lanes[1][j]), archsimd.LoadFloat32x8(&n.lanes[2][j])
	}
	i := 0
	for ; i+24 <= m; i += 24 {
		for j := 0; j < 3; j++ {
			v := archsimd.LoadFloat32x8((*[8]float32)(vals[i+8*j : i+8*j+8]))
			v.Mul(s[j]).Sub(mu[j]).Div(d[j]).Store((*[8]float32)(out[i+8*j : i+8*j+8]))
		}
	}
	if i < m {
		normHWC3Scalar(out, vals, n, i)
	}
}
