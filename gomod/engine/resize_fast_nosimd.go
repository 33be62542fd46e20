//go:build !(goexperiment.simd && amd64)

package engine

// duoEnabled reports whether fused plans take duoRow: only with SIMD.
func duoEnabled() bool { return false }

// fusedEnabled reports whether fusedRow can run: only with SIMD.
func fusedEnabled() bool { return false }

func duoH(out *[3][]float32, src []uint8, rb0, rb1 int, f *fastPlan, b0, b1 int32) {
	duoScalar(out, src, rb0, rb1, f, b0, b1, 0, len(f.taps))
}

// prefetchDist 0: no prefetch (duoRow runs only with SIMD).
const prefetchDist = 0

func prefetchRows(src []uint8, rb0, rb1 int, f *fastPlan) {}
