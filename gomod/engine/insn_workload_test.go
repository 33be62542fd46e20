package engine

import (
	"math/rand"
	"os"
	"testing"
	"unsafe"
)

// TestInsnWorkload runs one representative plan once on one thread, for scripts/count_arm64_insns.sh,
// which counts the guest instructions each kernel executes under qemu-aarch64 (NEON, and pure Go with
// GOPREP_INSN_NOSIMD=1). GOPREP_INSN_WORKLOAD names the plan; without it the test skips.
//
//	bilinear   512x512 RGB uint8 -> bilinear 224x224, hflip, normalised CHW float32 (imagenetSpec)
//	antialias  1080p -> 224 at its scales (1920 -> 224 columns, 4.82x rows), on a 540-row band to halve
//	           the emulated log: 540x1920 RGB uint8 -> Pillow bilinear antialias 112x224, normalised
//	           CHW float32 (the same taps per output value as 1080x1920 -> 224x224)
//	normf32    224x224 RGB float32 at its own size -> normalised CHW float32 (emitF32's normCHW3)
func TestInsnWorkload(t *testing.T) {
	name := os.Getenv("GOPREP_INSN_WORKLOAD")
	if name == "" {
		t.Skip("GOPREP_INSN_WORKLOAD not set (scripts/count_arm64_insns.sh sets it)")
	}
	if os.Getenv("GOPREP_INSN_NOSIMD") != "" {
		withKernels(t, kernelOverrides{NoSIMD: true})
	}
	var s *Spec
	elem := 1
	switch name {
	case "bilinear":
		s = imagenetSpec(0, 512, 512)
	case "antialias":
		s = imagenetSpec(0, 540, 1920)
		s.Resize.Antialias = true
		s.Resize.H, s.Canvas.H, s.Post.H = 112, 112, 112
	case "normf32":
		s = imagenetSpec(0, 224, 224)
		s.In.DType, s.In.Strides = F32, [4]int64{0, 224 * 12, 12, 4}
		elem = 4
	default:
		t.Fatalf("unknown workload %q", name)
	}
	p, err := NewPlan(s)
	if err != nil {
		t.Fatal(err)
	}
	if (name == "bilinear") != (p.fast != nil) || (name == "antialias") != (p.aa != nil) {
		t.Fatalf("%s: the plan does not take its fast path (fast %v, aa %v)", name, p.fast != nil, p.aa != nil)
	}
	rng := rand.New(rand.NewSource(1))
	src := make([]byte, p.N*s.In.H*s.In.W*3*elem)
	for i := range src {
		src[i] = byte(rng.Intn(256))
	}
	if elem == 4 { // small finite floats
		f := unsafe.Slice((*float32)(unsafe.Pointer(&src[0])), len(src)/4)
		for i := range f {
			f[i] = float32(rng.Intn(256))
		}
	}
	out := make([]byte, p.OutBytes())
	if err := runCPU([]Job{{Plan: p, Src: unsafe.Pointer(&src[0]), Out: unsafe.Pointer(&out[0])}}, 1, nil); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: kernels %v", name, p.kern.Names())
}
