//go:build !(goexperiment.simd && amd64)

package engine

// The uint8 normalisation's row kernels without the amd64 SIMD build: the table lookups of
// normalize_u8.go (arm64 included: no NEON loop was written for them).

// normU8CHW3 is normU8CHW3Scalar over the whole row.
func (k *kernelSet) normU8CHW3(o0, o1, o2 []float32, vals []uint8, n *normTables) {
	normU8CHW3Scalar(o0, o1, o2, vals, n, 0)
}

// normU8HWC is normU8HWCScalar over the whole row.
func (k *kernelSet) normU8HWC(out []float32, vals []uint8, n *normTables, oc int) {
	normU8HWCScalar(out, vals, n, oc, 0)
}
