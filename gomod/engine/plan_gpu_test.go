package engine

import (
	"fmt"
	"math"
	"testing"
	"unsafe"
)

// Every resize kind runs on the (simulated) GPU: Plan.GPUSupported accepts it, the descriptor picks
// the kernel arithmetic of the CPU engine's row kernel (gpuMode, areaEnd), and device="auto", "cuda"
// and device output all return the CPU engine's bytes, for both dtypes, down- and upscale, with and
// without a letterbox canvas with one pad value per channel, flips through the source and output
// views, and normalisation.
func TestAllModesRunOnGPU(t *testing.T) {
	useSim(t)
	old := gpuAutoMinBytes
	gpuAutoMinBytes = 0 // every call is big enough for auto placement
	cpuNsPerByte()
	oldCost := cpuCost.Load()
	cpuCost.Store(math.Float64bits(1e6)) // and the cost model always prefers the GPU
	t.Cleanup(func() { gpuAutoMinBytes = old; cpuCost.Store(oldCost) })
	cases := []struct {
		kind    string
		aa, f32 bool
		oh, ow  int
		mode    int32 // the kernel arithmetic the descriptor must select
		end     areaEnd
	}{
		{"bicubic", false, false, 20, 31, gpModeTaps, endNone}, {"bicubic", false, false, 90, 70, gpModeTaps, endNone},
		// uint8 antialias where the height shrinks by at most twice what the width does: Pillow's
		// horizontal-first order (the other order runs on the CPU engine, pillowVerticalFirst)
		{"bicubic", true, false, 30, 20, gpModeAntialias, endNone}, {"bicubic", true, false, 90, 70, gpModeAntialias, endNone},
		{"bicubic", false, true, 50, 70, gpModeTaps, endNone}, {"bicubic", false, true, 20, 31, gpModeTaps, endNone},
		{"bicubic", true, true, 20, 31, gpModeAntialias, endNone}, {"bicubic", true, true, 90, 70, gpModeAntialias, endNone},
		{"area", false, false, 20, 15, gpModeTaps, endNone},     // fractional factors: computeResizeAreaTab
		{"area", false, false, 30, 24, gpModeTaps, endQuad},     // 2x2 blocks: OpenCV's SIMD rounding
		{"area", false, false, 20, 16, gpModeTaps, endScale},    // 3x3 blocks
		{"area", false, false, 90, 70, gpModeBilinear, endNone}, // upscale: INTER_LINEAR fixed point
		{"area", false, true, 20, 15, gpModeTaps, endNone}, {"area", false, true, 30, 24, gpModeTaps, endScale},
		{"area", false, true, 70, 50, gpModeTaps, endNone}, // upscale on float32: two float taps, not the lerp
		{"nearest-exact", false, false, 20, 70, gpModeGather, endNone}, {"nearest-pil", false, true, 70, 15, gpModeGather, endNone},
		{"bilinear", true, false, 30, 20, gpModeAntialias, endNone}, {"bilinear", false, true, 20, 31, gpModeBilinear, endNone},
	}
	for _, c := range cases {
		for _, variant := range []string{"plain", "letterbox-flips-norm"} {
			name := fmt.Sprintf("%s aa=%v f32=%v %dx%d %s", c.kind, c.aa, c.f32, c.oh, c.ow, variant)
			s := rgbSpec(60, 48, c.kind, c.aa, c.oh, c.ow)
			if c.f32 {
				s.In.DType, s.In.Strides = F32, [4]int64{0, 4 * 3 * 48, 12, 4}
			}
			if variant != "plain" {
				// Crop rows 3..56 read bottom-up would change the resize factors, so flip the whole
				// source horizontally instead, and the output vertically on a letterbox canvas with
				// one pad value per output channel (BGR order).
				s.Pre = View{0, 47, 1, -1, 60, 48}
				s.Canvas = CanvasSpec{H: c.oh + 7, W: c.ow + 4, Top: 5, Left: 1, Pad: PadValues{114, 7, 250}}
				s.Post = View{c.oh + 6, 0, -1, 1, c.oh + 7, c.ow + 4}
				s.CMap = []int{2, 1, 0}
				s.Norm = &NormSpec{Mean: []float64{0.485, 0.456, 0.406}, Std: []float64{0.229, 0.224, 0.225}, Scale: 1.0 / 255, DType: F32, Layout: "CHW"}
			}
			p, err := NewPlan(s)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if ok, why := p.GPUSupported(); !ok {
				t.Fatalf("%s: GPUSupported declined: %s", name, why)
			}
			if m := p.gpuMode(); m != c.mode {
				t.Fatalf("%s: descriptor mode %d, want %d", name, m, c.mode)
			}
			if e, _ := p.areaEnd(); e != c.end {
				t.Fatalf("%s: end rule %d, want %d", name, e, c.end)
			}
			_, src := gpuSource(p)
			want := runGuarded(t, p, src, 1)
			for _, dev := range []string{"auto", "cuda"} {
				got := make([]byte, p.OutBytes())
				ran, err := execute([]Job{{Plan: p, Src: src, Out: unsafe.Pointer(&got[0])}}, Placement{Device: dev, Index: -1})
				if err != nil || ran != "cuda" {
					t.Fatalf("%s on %s: ran on %q (%v), want cuda", name, dev, ran, err)
				}
				if string(got) != string(want) {
					t.Fatalf("%s on %s: differs from the CPU engine", name, dev)
				}
			}
			arr, ran, err := executeToDevice([]Job{{Plan: p, Src: src}}, 0)
			if err != nil || ran != "cuda" {
				t.Fatalf("%s to device: ran on %q (%v)", name, ran, err)
			}
			if string(unsafe.Slice((*byte)(ptr(arr.Ptr)), arr.Bytes)) != string(want) {
				t.Fatalf("%s: device array differs from the CPU engine", name)
			}
			arr.Free()
		}
	}
	if s := Stats(); s.Fallbacks != 0 || s.Failures != 0 {
		t.Fatalf("GPU trouble: %+v", s)
	}
}

// A plan's GPU-only data (planGPU: the row staging) is built on its first GPU use, never by NewPlan
// or a CPU call, and once: copies of the plan share it.
func TestGPUStageBuiltLazily(t *testing.T) {
	p, err := NewPlan(imagenetSpec(0, 1080, 1920)) // reads 448 of 1080 rows: a staged plan
	if err != nil {
		t.Fatal(err)
	}
	src := make([]uint8, 1080*1920*3)
	out := make([]float32, p.OutImageElems())
	if err := runCPU([]Job{{Plan: p, Src: unsafe.Pointer(&src[0]), Out: unsafe.Pointer(&out[0])}}, 1, nil); err != nil {
		t.Fatal(err)
	}
	if p.gpu.stage != nil {
		t.Fatal("NewPlan or the CPU backend built the GPU row staging")
	}
	copied := *p
	s := p.gpuStage()
	if s == nil || len(s.rows) != 448 || p.stagedElems() != s.elems {
		t.Fatalf("staging %v", s)
	}
	if copied.gpuStage() != s {
		t.Fatal("a copy of the plan built its own staging")
	}
}
