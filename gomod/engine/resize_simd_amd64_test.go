//go:build goexperiment.simd && amd64

package engine

import "testing"

// On AVX-512 machines the AVX2 kernels only see row tails; run the fast-path tests again with the
// AVX-512 kernels switched off so the AVX2-only code path (CPUs without VBMI) is tested whole.
func TestFastPathWithoutAVX512(t *testing.T) {
	if !hasAVX2 {
		t.Skip("CPU lacks AVX2: only the pure-Go kernels can run here")
	}
	saved := hasVBMI
	hasVBMI = false
	t.Cleanup(func() { hasVBMI = saved })
	TestFastPathEqualsGeneral(t)
	TestCompactGroupsEqualGeneral(t)
	TestFusedDownscaleEqualsGeneral(t)
}
