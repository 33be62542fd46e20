package engine

import "sync/atomic"

// The one table of which row kernels run. chooseKernels builds a kernelSet from the CPU's features
// (detectCPU, cpufeat_*.go) and the overrides (tests and benchmarks force a path with them); the
// process's set is built once, and NewPlan copies it into the plan (Plan.kern), whose row drivers and
// kernels read only that copy. What stays inside a kernel is data: a row whose loads would leave the
// array, a window too long for a paired loop, a plan without a kernel's tables.

// cpuFeatures is what detectCPU reads: all false in a build without the SIMD kernels.
type cpuFeatures struct {
	NEON  bool // arm64 Advanced SIMD (mandatory in ARMv8-A): the *_arm64.s kernels
	AVX2  bool // every archsimd loop and the AVX2 assembly
	VBMI  bool // AVX-512 VBMI (VPERMB, VPERMI2B)
	VNNI  bool // AVX-512 VBMI and VNNI (VPDPWSSD)
	Intel bool // CPUID vendor GenuineIntel
}

// kernelOverrides switch kernels off (never on: a kernel the CPU lacks cannot be forced).
type kernelOverrides struct {
	NoSIMD bool // the pure-Go kernels only
	NoVBMI bool // hresizeRow's byte-permute groups and fusedRow off (the AVX2 fast path whole)
	NoDuo  bool // fused plans run fastRow's kernels instead of duoRows
	NoZ    bool // aaHRowsZ off (then aaVRow3W too: it follows aaHRowsZ)
	NoY    bool // aaHRowsY off: aaHRows4W's archsimd loop runs
	No512V bool // aaVRow3W off
}

// kernelSet is the row kernels a plan runs: each field switches one kernel (or loop) on, and is only
// true where the CPU has what it needs. All false: the pure-Go kernels, which every SIMD kernel
// equals bit for bit.
type kernelSet struct {
	NEON   bool // the arm64 kernels: hresizeNEON, vnormNEON, aaHNEON, aaVNEON, normCHW3NEON, normHWC3NEON, yuvNEON
	AVX2   bool // the AVX2 kernels of every family: hresizeAVX2, vnormRow, duoH, aaHRows/4/4W, aaVRow/3, aaHPlanarRows, vresizeAAU8Paired
	VBMI   bool // hresizeRow's 16-column groups (pairGroup.pairs) and fusedRow (AVX-512 VBMI)
	Duo    bool // fused plans with duoBlocks tables take duoRows
	AAHZ   bool // aaHRows4W's columns in aaHRowsZ (AVX-512 VNNI); plans build its tables (newAAZ)
	AAHY   bool // else in aaHRowsY (AVX2 assembly); neither: aaHRows4W's archsimd loop
	AAV3W  bool // aaVRow3 hands its columns to aaVRow3W (AVX-512) on plans with aaHRowsZ's tables
	AAPref bool // aaHRowsZ/Y prefetch the next group's rows (aaPrefetch; measured on Intel only)
}

// chooseKernels is the table: features and overrides in, the kernel set out.
func chooseKernels(f cpuFeatures, o kernelOverrides) kernelSet {
	if f.NEON && !o.NoSIMD {
		return kernelSet{NEON: true} // arm64: one level (the amd64 fields stay false)
	}
	if !simdEnabled || !f.AVX2 || o.NoSIMD {
		return kernelSet{}
	}
	return kernelSet{
		AVX2: true,
		VBMI: f.VBMI && !o.NoVBMI,
		Duo:  !o.NoDuo, // on AVX-512 VBMI too: faster than fusedRow there (docs/perf/2026-12-03-engine-notes.md)
		AAHZ: f.VNNI && !o.NoZ,
		AAHY: !o.NoY,
		// 512-bit vertical loops only after the 512-bit horizontal pass: after a 256-bit one they
		// measured slower (the cost of switching widths)
		AAV3W:  f.VNNI && !o.NoZ && !o.No512V,
		AAPref: f.Intel,
	}
}

// kernelChoice is the process's overrides and the set chosen with them.
type kernelChoice struct {
	o kernelOverrides
	k kernelSet
}

var (
	cpu          = detectCPU()
	processKerns atomic.Pointer[kernelChoice] // what NewPlan copies (setKernelOverrides)
)

func init() { setKernelOverrides(kernelOverrides{}) }

// setKernelOverrides rebuilds the process's kernel set with o; plans made before keep theirs.
func setKernelOverrides(o kernelOverrides) {
	processKerns.Store(&kernelChoice{o, chooseKernels(cpu, o)})
}

// currentKernels is the process's kernel set, as NewPlan copies it.
func currentKernels() kernelSet { return processKerns.Load().k }

// currentOverrides is the overrides the process's kernel set was chosen with.
func currentOverrides() kernelOverrides { return processKerns.Load().o }

// SIMDLevel names the CPU's SIMD level as the kernels see it.
func SIMDLevel() string {
	switch {
	case cpu.NEON:
		return "neon"
	case !simdEnabled:
		return "none (pure Go)"
	case cpu.VNNI:
		return "avx512vbmi+vnni"
	case cpu.VBMI:
		return "avx512vbmi"
	case cpu.AVX2:
		return "avx2"
	}
	return "none (CPU lacks AVX2)"
}

// Names is the kernel each pass runs under this set (goprep.info()["kernels"]): the OpenCV bilinear
// fast path's horizontal and vertical passes and its fused downscale rows, the antialias (Pillow /
// PyTorch uint8) horizontal, vertical, planar-source and vertical-first passes.
func (k *kernelSet) Names() map[string]string {
	pick := func(on bool, yes, no string) string {
		if on {
			return yes
		}
		return no
	}
	aaH := pick(k.AAHY, "aaHRowsY", pick(k.AVX2, "aaHRows4W", "aaHScalar"))
	if k.AAHZ {
		aaH = "aaHRowsZ"
	}
	if k.NEON { // arm64: the passes with a NEON kernel (the fused rows run fastRow's two passes)
		return map[string]string{
			"bilinear_h":     "hresizeNEON",
			"bilinear_v":     "vnormNEON",
			"bilinear_fused": "fastRow",
			"aa_h":           "aaHNEON",
			"aa_v":           "aaVNEON",
			"aa_h_planar":    "aaHPlanar",
			"aa_v_first":     "vresizeAAU8",
		}
	}
	return map[string]string{
		"bilinear_h":     pick(k.VBMI, "hresizeRow (avx512vbmi)", pick(k.AVX2, "hresizeAVX2", "hresizeScalar")),
		"bilinear_v":     pick(k.AVX2, "vnormRow (avx2)", "vnormScalar"),
		"bilinear_fused": pick(k.Duo, "duoRows", pick(k.VBMI, "fusedRow", "fastRow")),
		"aa_h":           aaH,
		"aa_v":           pick(k.AAV3W, "aaVRow3W", pick(k.AVX2, "aaVRow3Y", "aaVScalar")),
		"aa_h_planar":    pick(k.AVX2, "aaHPlanarRows (avx2)", "aaHPlanar"),
		"aa_v_first":     pick(k.AVX2, "vresizeAAU8Paired", "vresizeAAU8"),
	}
}

// KernelNames is Names of the process's kernel set: what a plan made now runs.
func KernelNames() map[string]string {
	k := currentKernels()
	return k.Names()
}
