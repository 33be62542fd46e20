//go:build goexperiment.simd && amd64

package engine

import "simd/archsimd"

// simdEnabled reports whether the row kernels use SIMD in this build.
const simdEnabled = true

var (
	hasAVX2 = archsimd.X86.AVX2()
	hasVBMI = archsimd.X86.AVX512() && archsimd.X86.AVX512VBMI()
	// hasVNNI: aaHRowsZ can run (AVX-512 VBMI for VPERMB, VNNI for VPDPWSSD)
	hasVNNI = hasVBMI && archsimd.X86.AVX512VNNI()
	no512V  bool // switches aaVRow3W off (tests, A/B benchmarks)
)

// cpuVendor returns CPUID leaf 0's vendor words (cpufeat_amd64.s).
func cpuVendor() (ebx, edx, ecx uint32)

// isIntel: the CPU says GenuineIntel. The antialias horizontal loops prefetch the next rows only
// there (aaPrefetch).
var isIntel = func() bool {
	b, d, c := cpuVendor()
	return b == 0x756e6547 && d == 0x49656e69 && c == 0x6c65746e // "Genu" "ineI" "ntel"
}()

// Every kernel here ends with archsimd.ClearAVXUpperBits (VZEROUPPER) before it returns or falls
// back to scalar code. The Go compiler emits legacy-SSE encodings for scalar floats, struct zeroing
// and copies (MOVSS, MOVUPS X15), and does not yet insert VZEROUPPER itself; executing them while
// the upper halves of the YMM registers are dirty cost a state transition each on this project's
// AVX2 machine (AMD EPYC, Zen 3 family 25): vnormRow alone over one image's 672 rows took 125 us
// without it and 38 us with it (same loop, same binary), BenchmarkImagenet512 328/317 -> 212/197
// us/op and BenchmarkAntialiasTorch1080 2173/2312 -> 1613/1769 us/op (old and new binaries
// alternated, two rounds). Earlier "a variable shift made this 5x slower" findings below were this
// same stall: their count went through a legacy MOVSD.

// SIMDLevel names the row kernels in use.
func SIMDLevel() string {
	switch {
	case hasVNNI:
		return "avx512vbmi+vnni"
	case hasVBMI:
		return "avx512vbmi"
	case hasAVX2:
		return "avx2"
	}
	return "none (CPU lacks AVX2)"
}
