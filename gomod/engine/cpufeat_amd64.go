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

// Every SIMD kernel (resize_*_amd64.go) ends with archsimd.ClearAVXUpperBits (VZEROUPPER) before it
// returns or falls back to scalar code, and zeroes its Go arrays before it dirties a vector register.
// Why: the Go compiler emits legacy-SSE encodings for scalar floats, struct zeroing and copies
// (MOVSS, MOVUPS X15) and does not insert VZEROUPPER itself; each such instruction after dirty upper
// halves costs a state transition (3x slower kernels on AMD Zen 3: docs/perf/2026-12-03-engine-notes.md).
