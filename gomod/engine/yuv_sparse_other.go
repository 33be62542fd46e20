//go:build !(goexperiment.simd && amd64) && !arm64

package engine

// The pure-Go twin of yuv_sparse_amd64.go: no register gather here, so no tables, and
// yuvConvPairs converts every pair through yuvConvScalar.

// buildBlocks leaves the VBMI tables empty.
func (yp *yuvPlan) buildBlocks(w int) {}

// yuvConvPairsVector never runs here.
func (k *kernelSet) yuvConvPairsVector(d0, d1, ys0, ys1, us, vs []uint8, ps []int32, yp *yuvPlan) bool {
	return false
}
