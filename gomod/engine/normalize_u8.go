package engine

// The uint8 normalisation's row kernels (emitU8, emitPatchU8): the pure-Go twins, table lookups,
// which the AVX2 kernels of normalize_u8_amd64.go equal bit for bit.

// normU8CHW3Scalar looks pixels [from, len(o0)) of an interleaved three-channel uint8 row vals up into
// three plane rows: o_c[x] = n.lutF32[c][vals[3x+c]] (normTables.apply of the byte).
// Invariants: len(o1), len(o2) >= len(o0), len(vals) >= 3*len(o0); n has three channels' tables.
// Why: reading the interleaved row once instead of three times took emit from ~135us to ~80us per
// 224x224 image (BenchmarkImagenet512, profiled).
func normU8CHW3Scalar(o0, o1, o2 []float32, vals []uint8, n *normTables, from int) {
	m := len(o0)
	o1, o2, v := o1[:m], o2[:m], vals[:3*m]
	l0, l1, l2 := &n.lutF32[0], &n.lutF32[1], &n.lutF32[2]
	for x := from; x < m; x++ {
		px := (*[3]uint8)(v[3*x : 3*x+3])
		o0[x], o1[x], o2[x] = l0[px[0]], l1[px[1]], l2[px[2]]
	}
}

// normU8HWCScalar looks values [from, len(out)) of an interleaved oc-channel uint8 row up in its
// layout: out[i] = n.lutF32[i%oc][vals[i]]. from is a multiple of oc (a whole pixel).
// Invariants: len(vals) >= len(out); n has oc channels' tables.
func normU8HWCScalar(out []float32, vals []uint8, n *normTables, oc, from int) {
	vals = vals[:len(out)]
	if oc == 1 {
		lut := &n.lutF32[0]
		for i := from; i < len(out); i++ {
			out[i] = lut[vals[i]]
		}
		return
	}
	for i := from; i < len(out); i++ {
		out[i] = n.lutF32[i%oc][vals[i]]
	}
}
