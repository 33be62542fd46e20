package gpu

import (
	"fmt"
	"math"
	"testing"
	"unsafe"

	"github.com/goprep/goprep/gomod/engine"
)

// Every resize kind runs on the (simulated) GPU: Plan.GPUSupported accepts it (the engine's
// TestGPUDescriptorModes proves the descriptor picks the CPU engine's arithmetic for each of these
// cases), and device="auto", "cuda"
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
	}{
		{"bicubic", false, false, 20, 31}, {"bicubic", false, false, 90, 70},
		// uint8 antialias where the height shrinks by at most twice what the width does: Pillow's
		// horizontal-first order (the other order runs on the CPU engine, pillowVerticalFirst)
		{"bicubic", true, false, 30, 20}, {"bicubic", true, false, 90, 70},
		{"bicubic", false, true, 50, 70}, {"bicubic", false, true, 20, 31},
		{"bicubic", true, true, 20, 31}, {"bicubic", true, true, 90, 70},
		{"area", false, false, 20, 15}, // fractional factors: computeResizeAreaTab
		{"area", false, false, 30, 24}, // 2x2 blocks: OpenCV's SIMD rounding
		{"area", false, false, 20, 16}, // 3x3 blocks
		{"area", false, false, 90, 70}, // upscale: INTER_LINEAR fixed point
		{"area", false, true, 20, 15}, {"area", false, true, 30, 24},
		{"area", false, true, 70, 50}, // upscale on float32: two float taps, not the lerp
		{"nearest-exact", false, false, 20, 70}, {"nearest-pil", false, true, 70, 15},
		{"bilinear", true, false, 30, 20}, {"bilinear", false, true, 20, 31},
	}
	for _, c := range cases {
		for _, variant := range []string{"plain", "letterbox-flips-norm"} {
			name := fmt.Sprintf("%s aa=%v f32=%v %dx%d %s", c.kind, c.aa, c.f32, c.oh, c.ow, variant)
			s := rgbSpec(60, 48, c.kind, c.aa, c.oh, c.ow)
			if c.f32 {
				s.In.DType, s.In.Strides = engine.F32, [4]int64{0, 4 * 3 * 48, 12, 4}
			}
			if variant != "plain" {
				letterboxFlipsNorm(s, c.oh, c.ow)
			}
			p, err := engine.NewPlan(s)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if ok, why := p.GPUSupported(); !ok {
				t.Fatalf("%s: GPUSupported declined: %s", name, why)
			}
			_, src := gpuSource(p)
			want := runGuarded(t, p, src, 1)
			for _, dev := range []string{"auto", "cuda"} {
				got := make([]byte, p.OutBytes())
				ran, err := execute([]engine.Job{{Plan: p, Src: src, Out: unsafe.Pointer(&got[0])}}, Placement{Device: dev, Index: -1})
				if err != nil || ran != "cuda" {
					t.Fatalf("%s on %s: ran on %q (%v), want cuda", name, dev, ran, err)
				}
				if string(got) != string(want) {
					t.Fatalf("%s on %s: differs from the CPU engine", name, dev)
				}
			}
			arr, ran, err := executeToDevice([]engine.Job{{Plan: p, Src: src}}, 0)
			if err != nil || ran != "cuda" {
				t.Fatalf("%s to device: ran on %q (%v)", name, ran, err)
			}
			if string(unsafe.Slice((*byte)(ptr(arr.Ptr)), arr.Bytes)) != string(want) {
				t.Fatalf("%s: device array differs from the CPU engine", name)
			}
			arr.Free()
		}
	}
	if s := ReadStats(); s.Fallbacks != 0 || s.Failures != 0 {
		t.Fatalf("GPU trouble: %+v", s)
	}
}

// A letterbox frame with one pad value per channel (the engine's TestFrameAndPerChannelPad proves
// the CPU engine's bytes) gives the same bytes on the simulated GPU: the kernels take the
// per-channel pad values too.
func TestFramedPlanOnGPU(t *testing.T) {
	h, w := 41, 37
	src := make([]uint8, h*w*3)
	for i := range src {
		src[i] = uint8(i*29 + i/5)
	}
	framed := rgbSpec(h, w, "bilinear", false, 30, 26)
	framed.Pre = engine.View{Y0: 3, X0: 2, SY: 1, SX: 1, H: 35, W: 33}
	framed.Post = engine.View{Y0: 4, X0: 25, SY: 1, SX: -1, H: 20, W: 22} // a flipped crop of the resized image
	framed.CMap = []int{2, 1, 0}
	framed.Frame = &engine.FrameSpec{H: 27, W: 31, Top: 5, Left: 2}
	framed.Canvas.Pad = engine.PadValues{10, 20, 30}
	pf, err := engine.NewPlan(framed)
	if err != nil {
		t.Fatal(err)
	}
	b := runGuarded(t, pf, unsafe.Pointer(&src[0]), 2)
	useSim(t)
	g := make([]byte, pf.OutBytes())
	if ran, err := execute([]engine.Job{{Plan: pf, Src: unsafe.Pointer(&src[0]), Out: unsafe.Pointer(&g[0])}}, Placement{Device: "cuda"}); err != nil || ran != "cuda" || string(g) != string(b) {
		t.Fatalf("framed plan on the simulated GPU: ran %q (%v), equal to the CPU engine: %v", ran, err, string(g) == string(b))
	}
}

// letterboxFlipsNorm edits rgbSpec(60, 48, ...)'s spec for an oh x ow resize into the tests' busy
// variant. Crop rows 3..56 read bottom-up would change the resize factors, so it flips the whole
// source horizontally instead, and the output vertically on a letterbox canvas with one pad value per
// output channel (BGR order), then normalizes to CHW float32.
func letterboxFlipsNorm(s *engine.Spec, oh, ow int) {
	s.Pre = engine.View{Y0: 0, X0: 47, SY: 1, SX: -1, H: 60, W: 48}
	s.Canvas = engine.CanvasSpec{H: oh + 7, W: ow + 4, Top: 5, Left: 1, Pad: engine.PadValues{114, 7, 250}}
	s.Post = engine.View{Y0: oh + 6, X0: 0, SY: -1, SX: 1, H: oh + 7, W: ow + 4}
	s.CMap = []int{2, 1, 0}
	s.Norm = &engine.NormSpec{Mean: []float64{0.485, 0.456, 0.406}, Std: []float64{0.229, 0.224, 0.225}, Scale: 1.0 / 255, DType: engine.F32, Layout: "CHW"}
}
