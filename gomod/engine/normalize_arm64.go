package engine

import "unsafe"

// The float normalisation's row kernels on arm64 (emitF32, float32 sources with three output
// channels and float32 output): NEON (normalize_arm64.s) where the kernel set says so
// (kernelSet.NEON), else the pure-Go twins of normalize_cpu.go, which they equal bit for bit
// (TestNormNEONEqualsScalar under qemu-aarch64: scripts/test_arm64.sh).

// normConsts lays out the three channels' scale, mean and std for the NEON kernels: each group of
// three padded to four floats (one 16-byte load per group).
func normConsts(n *normTables) *[12]float32 {
	var k [12]float32
	for c := 0; c < 3; c++ {
		k[c], k[4+c], k[8+c] = n.scale[c], n.mean[c], n.std[c]
	}
	return &k
}

// normCHW3 normalises an interleaved three-channel float32 row into three plane rows:
// o_c[x] = (vals[3x+c]*scale_c - mean_c) / std_c, each step rounded to float32 (normTables.apply).
// With k.NEON, 4 pixels per step in normCHW3NEON, the last len(o0)%4 in normCHW3Scalar.
// Invariants: len(o1), len(o2) >= len(o0), len(vals) >= 3*len(o0); n has three channels.
// Twin: normCHW3Scalar; proved by TestNormNEONEqualsScalar and TestFloatSourceNormalisedNEON.
// Why: float32 sources are normalised per value (no table); the three planes in one pass.
func (k *kernelSet) normCHW3(o0, o1, o2, vals []float32, n *normTables) {
	m := len(o0)
	nb := m / 4
	if !k.NEON || nb == 0 {
		normCHW3Scalar(o0, o1, o2, vals, n, 0)
		return
	}
	o1, o2, vals = o1[:m], o2[:m], vals[:3*m]
	normCHW3NEON(unsafe.Pointer(&vals[0]), unsafe.Pointer(&o0[0]), unsafe.Pointer(&o1[0]), unsafe.Pointer(&o2[0]), nb, normConsts(n))
	if 4*nb < m {
		normCHW3Scalar(o0, o1, o2, vals, n, 4*nb)
	}
}

// normCHW3NEON runs normCHW3's NEON loop over nb >= 1 blocks of 4 pixels: LD3 splits the 12 values
// into channels, FMUL, FSUB, FDIV (never fused) normalise each, three stores write the planes.
// Invariants: as normCHW3's; k from normConsts.
// Twin: normCHW3Scalar; proved by TestNormNEONEqualsScalar.
// Why: the loop in assembly (Go 1.26's archsimd has no arm64 types).
//
//go:noescape
func normCHW3NEON(in, o0, o1, o2 unsafe.Pointer, nb int, k *[12]float32)

// normHWC3 normalises an interleaved three-channel float32 row in its layout:
// out[i] = (vals[i]*scale_c - mean_c) / std_c with c = i%3. With k.NEON, 12 values per step in
// normHWC3NEON, the last len(out)%12 in normHWC3Scalar.
// Invariants: len(vals) >= len(out), len(out) a multiple of 3; n has three channels.
// Twin: normHWC3Scalar; proved by TestNormNEONEqualsScalar and TestFloatSourceNormalisedNEON.
// Why: as normCHW3's.
func (k *kernelSet) normHWC3(out, vals []float32, n *normTables) {
	m := len(out)
	nb := m / 12
	if !k.NEON || nb == 0 {
		normHWC3Scalar(out, vals, n, 0)
		return
	}
	vals = vals[:m]
	normHWC3NEON(unsafe.Pointer(&vals[0]), unsafe.Pointer(&out[0]), nb, normConsts(n))
	if 12*nb < m {
		normHWC3Scalar(out, vals, n, 12*nb)
	}
}

// normHWC3NEON is normCHW3NEON's loop storing interleaved (ST3): nb >= 1 blocks of 4 pixels.
// Twin: normHWC3Scalar; proved by TestNormNEONEqualsScalar.
// Why: the loop in assembly (Go 1.26's archsimd has no arm64 types).
//
//go:noescape
func normHWC3NEON(in, out unsafe.Pointer, nb int, k *[12]float32)
