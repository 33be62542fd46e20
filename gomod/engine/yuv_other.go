//go:build !(goexperiment.simd && amd64) && !arm64

package engine

// The pure-Go twin of yuv_amd64.go's converter: with no SIMD in the build every row (and every sparse pixel pair) is converted by
// yuvConvScalar, which the SIMD loop equals bit for bit.

// yuvConv is yuvConvScalar.
func (k *kernelSet) yuvConv(d0, d1, ys0, ys1, us, vs []uint8, x0, x1 int, yp *yuvPlan) {
	yuvConvScalar(d0, d1, ys0, ys1, us, vs, x0, x1, yp)
}

// yuvSIMD: no SIMD converter here (yuvConvPairs converts each pair with yuvConvScalar).
func (k *kernelSet) yuvSIMD() bool { return false }
