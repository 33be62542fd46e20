//go:build !(goexperiment.simd && amd64) && !arm64

package engine

// The pure-Go twins of resize_aa_vertical_amd64.go's kernels (the vertical pass): aaVRow runs the
// scalar kernel the SIMD one equals, and the SIMD-only kernels decline, so that their callers run it.

// aaVRow is aaVScalar over the whole row.
func (k *kernelSet) aaVRow(out []float32, hs [][]uint8, po int, wv []int32, pw []int32, vh aaVHead, scale, mean, std float32, lut *[256]float32) {
	aaVScalar(out, hs, po, wv, lut, 0)
}

// aaVRow3 declines (the three-plane loop needs AVX2): aaVRow runs per plane.
func (k *kernelSet) aaVRow3(out *[3][]float32, hs [][]uint8, po *[3]int, wv, pw []int32, vh aaVHead, nt *normTables, luts *[3]*[256]float32, wide bool) bool {
	return false
}

// vresizeAAU8Paired computes no column: vresizeAAU8 computes them all.
func (k *kernelSet) vresizeAAU8Paired(dst []uint8, hs [][]uint8, pw []int32, vh aaVHead) int {
	return 0
}
