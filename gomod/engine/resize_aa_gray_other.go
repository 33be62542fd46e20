//go:build !(goexperiment.simd && amd64)

package engine

// aaHGray is aaHGrayScalar: the gray horizontal pass's SIMD kernel is amd64's
// (resize_aa_gray_amd64.go).
func (k *kernelSet) aaHGray(d []uint8, src []uint8, rb int, a *aaPlan, p *Plan) {
	aaHGrayScalar(d, src, rb, a, p)
}
