//go:build !(goexperiment.simd && amd64) && !arm64

package engine

// The pure-Go twins of resize_fast_amd64.go's row kernels: with no SIMD in the build the kernel set is
// all false (chooseKernels), and each runs the scalar kernel its amd64 version equals.

// hresizeRow is hresizeScalar over the whole row.
func (k *kernelSet) hresizeRow(d []int16, src []uint8, rb int, f *fastPlan) {
	hresizeScalar(d, src, rb, f, 0, len(f.taps))
}

// vnormRow is vnormScalar.
func (k *kernelSet) vnormRow(out []float32, s0, s1 []int16, b0, b1 int32, scale, mean, std float32, lut *[256]float32) {
	vnormScalar(out, s0, s1, b0, b1, lut)
}

// fusedRow declines (it needs AVX-512 VBMI): fastRow's two passes run.
func (k *kernelSet) fusedRow(out *[3][]float32, src []uint8, rb0, rb1 int, f *fastPlan, b0, b1 int32, nt *normTables) bool {
	return false
}

// duoH is duoScalar over the whole row.
func (k *kernelSet) duoH(out *[3][]float32, src []uint8, rb0, rb1 int, f *fastPlan, b0, b1 int32) {
	duoScalar(out, src, rb0, rb1, f, b0, b1, 0, len(f.taps))
}

// duoRows declines (kernelSet.Duo is false): fastRow computes every row.
func (w *worker) duoRows(p *Plan, b *jobBufs, base, img, y, y1 int) int { return 0 }
