//go:build goexperiment.simd && amd64

package engine

import "testing"

// BenchmarkEvalPlanar1080PureGo is BenchmarkEvalPlanar1080 with the AVX2 kernels switched off, for
// A/B runs of the planar horizontal pass in one process.
func BenchmarkEvalPlanar1080PureGo(b *testing.B) {
	withKernels(b, kernelOverrides{NoSIMD: true})
	benchPlan(b, evalPlanarSpec(1080, 1920), 1)
}
