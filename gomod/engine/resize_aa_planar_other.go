//go:build !(goexperiment.simd && amd64)

package engine

// aaHPlanarRows is the planar horizontal pass of one or two source rows (h1 nil: one).
func (k *kernelSet) aaHPlanarRows(h0, h1 []uint8, src []uint8, rb0, rb1 int, a *aaPlan, p *Plan) {
	aaHPlanar(h0, src, rb0, a, p)
	if h1 != nil {
		aaHPlanar(h1, src, rb1, a, p)
	}
}
