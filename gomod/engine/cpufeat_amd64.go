//go:build goexperiment.simd && amd64

package engine

import "simd/archsimd"

// simdEnabled reports whether the row kernels use SIMD in this build.
const simdEnabled = true

// detectCPU reads the features the SIMD kernels need (archsimd's CPUID flags, and CPUID leaf 0's
// vendor for aaPrefetch). chooseKernels (kernels.go) turns them into the process's kernel set.
func detectCPU() cpuFeatures {
	b, d, c := cpuVendor()
	vbmi := archsimd.X86.AVX512() && archsimd.X86.AVX512VBMI()
	return cpuFeatures{
		AVX2: archsimd.X86.AVX2(),
		VBMI: vbmi,
		VNNI: vbmi && archsimd.X86.AVX512VNNI(), // aaHRowsZ: VPERMB (VBMI) and VPDPWSSD (VNNI)
		// "Genu" "ineI" "ntel"
		Intel: b == 0x756e6547 && d == 0x49656e69 && c == 0x6c65746e,
	}
}

// cpuVendor returns CPUID leaf 0's vendor words (cpufeat_amd64.s).
func cpuVendor() (ebx, edx, ecx uint32)

// Every SIMD kernel (resize_*_amd64.go) ends with archsimd.ClearAVXUpperBits (VZEROUPPER) before it returns or falls
// back to scalar code. The Go compiler emits legacy-SSE encodings for scalar floats, struct zeroing
// and copies (MOVSS, MOVUPS X15), and does not yet insert VZEROUPPER itself; executing them while
// the upper halves of the YMM registers are dirty cost a state transition each on this project's
// AVX2 machine (AMD EPYC, Zen 3 family 25): vnormRow alone over one image's 672 rows took 125 us
// without it and 38 us with it (same loop, same binary), BenchmarkImagenet512 328/317 -> 212/197
// us/op and BenchmarkAntialiasTorch1080 2173/2312 -> 1613/1769 us/op (old and new binaries
// alternated, two rounds). Earlier "a variable shift made this 5x slower" findings were this same
// stall: their count went through a legacy MOVSD.
