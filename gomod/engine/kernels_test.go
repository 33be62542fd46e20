package engine

import (
	"strings"
	"testing"
)

// withKernels sets the process's kernel set from o for the rest of the test (plans made meanwhile
// copy it) and restores the overrides of before after.
func withKernels(t testing.TB, o kernelOverrides) {
	before := currentOverrides()
	setKernelOverrides(o)
	t.Cleanup(func() { setKernelOverrides(before) })
}

// The table: overrides only switch kernels off, a kernel runs only where the CPU has its features,
// the pure-Go build and NoSIMD run no SIMD kernel, and plans copy the set of the moment they are made.
func TestChooseKernels(t *testing.T) {
	all := cpuFeatures{AVX2: true, VBMI: true, VNNI: true, Intel: true}
	none := kernelSet{}
	if k := chooseKernels(all, kernelOverrides{NoSIMD: true}); k != none {
		t.Fatalf("NoSIMD: %+v", k)
	}
	if k := chooseKernels(cpuFeatures{VBMI: true, VNNI: true}, kernelOverrides{}); k != none {
		t.Fatalf("no AVX2: %+v", k)
	}
	// arm64: NEON is one switch, which NoSIMD turns off (and the amd64 features do not turn on)
	if k := chooseKernels(cpuFeatures{NEON: true}, kernelOverrides{}); k != (kernelSet{NEON: true}) {
		t.Fatalf("NEON: %+v", k)
	}
	if k := chooseKernels(cpuFeatures{NEON: true}, kernelOverrides{NoSIMD: true}); k != none {
		t.Fatalf("NEON, NoSIMD: %+v", k)
	}
	full := chooseKernels(all, kernelOverrides{})
	if !simdEnabled {
		if full != none {
			t.Fatalf("pure-Go build: %+v", full)
		}
		return
	}
	if want := (kernelSet{AVX2: true, VBMI: true, Duo: true, AAHZ: true, AAHY: true, AAV3W: true, AAPref: true}); full != want {
		t.Fatalf("every feature: %+v, want %+v", full, want)
	}
	if k := chooseKernels(cpuFeatures{AVX2: true}, kernelOverrides{}); k != (kernelSet{AVX2: true, Duo: true, AAHY: true}) {
		t.Fatalf("AVX2 alone: %+v", k)
	}
	for _, c := range []struct {
		o    kernelOverrides
		want func(k *kernelSet)
	}{
		{kernelOverrides{NoVBMI: true}, func(k *kernelSet) { k.VBMI = false }},
		{kernelOverrides{NoDuo: true}, func(k *kernelSet) { k.Duo = false }},
		{kernelOverrides{NoZ: true}, func(k *kernelSet) { k.AAHZ, k.AAV3W = false, false }},
		{kernelOverrides{NoY: true}, func(k *kernelSet) { k.AAHY = false }},
		{kernelOverrides{No512V: true}, func(k *kernelSet) { k.AAV3W = false }},
	} {
		want := full
		c.want(&want)
		if k := chooseKernels(all, c.o); k != want {
			t.Errorf("%+v: %+v, want %+v", c.o, k, want)
		}
	}
	withKernels(t, kernelOverrides{NoSIMD: true})
	p, err := NewPlan(imagenetSpec(0, 64, 64))
	if err != nil {
		t.Fatal(err)
	}
	if p.kern != none {
		t.Fatalf("a plan made under NoSIMD: %+v", p.kern)
	}
}

// KernelNames names one kernel per pass, the pure-Go ones in the pure-Go build.
func TestKernelNames(t *testing.T) {
	names := KernelNames()
	for _, pass := range []string{"bilinear_h", "bilinear_v", "bilinear_fused", "aa_h", "aa_v", "aa_h_planar", "aa_v_first"} {
		if names[pass] == "" {
			t.Errorf("no kernel named for %s: %v", pass, names)
		}
	}
	if len(names) != 7 {
		t.Errorf("%d passes: %v", len(names), names)
	}
	if scalar := (!simdEnabled || !cpu.AVX2) && !cpu.NEON; scalar != strings.HasSuffix(names["aa_h"], "Scalar") {
		t.Errorf("SIMD level %q, kernels %v", SIMDLevel(), names)
	}
	if cpu.NEON != (SIMDLevel() == "neon") || cpu.NEON != (names["bilinear_h"] == "hresizeNEON") {
		t.Errorf("SIMD level %q, kernels %v", SIMDLevel(), names)
	}
	k := chooseKernels(cpu, kernelOverrides{NoSIMD: true})
	if pure := k.Names(); pure["bilinear_h"] != "hresizeScalar" || pure["aa_v"] != "aaVScalar" {
		t.Errorf("NoSIMD kernels %v", pure)
	}
}
