//go:build !arm64 && !(goexperiment.simd && amd64)

package engine

// The float normalisation's row kernels outside arm64 and the amd64 SIMD build: the pure-Go twins
// (normalize_cpu.go), which normalize_arm64.go's NEON kernels and normalize_amd64.go's AVX2 kernels
// equal bit for bit.

// normCHW3 is normCHW3Scalar over the whole row.
func (k *kernelSet) normCHW3(o0, o1, o2, vals []float32, n *normTables) {
	normCHW3Scalar(o0, o1, o2, vals, n, 0)
}

// normHWC3 is normHWC3Scalar over the whole row.
func (k *kernelSet) normHWC3(out, vals []float32, n *normTables) {
	normHWC3Scalar(out, vals, n, 0)
}
