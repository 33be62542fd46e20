package engine

import (
	"fmt"
	"testing"
	"unsafe"
)

// The descriptor (gpu_desc.go) picks the kernel arithmetic of the CPU engine's row kernel (gpuMode,
// areaEnd) for every resize kind, both dtypes, down- and upscale, plain and with a letterbox canvas,
// flips and normalisation. Package gpu's TestAllModesRunOnGPU runs the same cases on the simulated
// GPU against the CPU engine.
func TestGPUDescriptorModes(t *testing.T) {
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
			if m, e, _ := p.GPUDescriptorKind(); m != c.mode || e != int(c.end) {
				t.Fatalf("%s: GPUDescriptorKind %d, %d", name, m, e)
			}
		}
	}
}

// RGBA in order is read one pixel per vector load (vecPixels) in every mode when the source address
// is aligned; a misaligned source or another channel order is read per channel: the descriptor's vec.
// Package gpu's TestSimulatedGPUVectorPixelLoads runs these on the simulated GPU.
func TestGPUDescriptorVectorLoads(t *testing.T) {
	kinds := []struct {
		kind string
		aa   bool
	}{{"none", false}, {"nearest", false}, {"bilinear", false}, {"bilinear", true}, {"bicubic", false}, {"bicubic", true}, {"area", false}}
	for _, k := range kinds {
		for _, dt := range []DType{U8, F32} {
			for _, variant := range []string{"aligned", "misaligned", "bgra"} {
				name := fmt.Sprintf("%s aa=%v %s %s", k.kind, k.aa, dt, variant)
				h, w, oh, ow := 37, 29, 16, 12
				if k.kind == "none" {
					oh, ow = h, w
				}
				s := rgbSpec(h, w, k.kind, k.aa, oh, ow)
				es := int64(dt.Size())
				s.In = InputSpec{DType: dt, N: 2, H: h, W: w, C: 4, Strides: [4]int64{int64(h*w*4) * es, int64(w*4) * es, 4 * es, es}}
				s.CMap = []int{0, 1, 2, 3}
				if variant == "bgra" {
					s.CMap = []int{2, 1, 0, 3}
				}
				s.Canvas = CanvasSpec{H: oh + 3, W: ow + 2, Top: 1, Left: 2, Pad: PadValues{1, 2, 3, 4}}
				s.Post = View{oh + 2, 0, -1, 1, oh + 3, ow + 2}
				p, err := NewPlan(s)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if p.vecPixels(nil) != (variant != "bgra") {
					t.Fatalf("%s: vecPixels = %v", name, p.vecPixels(nil))
				}
				// an address aligned to a whole pixel (4 elements), or one element past one
				buf := make([]byte, int64(p.spanElems)*es+16*es)
				at := int(es)
				for uintptr(unsafe.Pointer(&buf[at]))%uintptr(4*es) != 0 {
					at += int(es)
				}
				if variant == "misaligned" {
					at += int(es)
				}
				src := unsafe.Pointer(&buf[at-p.minOff*int(es)])
				b, err := NewDeviceBatch([]BatchImage{{Plan: p, SrcDev: uint64(uintptr(src))}})
				if err != nil {
					t.Fatal(err)
				}
				enc := b.Encode(0)
				d := (*gpImage)(unsafe.Pointer(&enc[b.DescOffset()]))
				if want := int32(map[bool]int{true: 1}[variant == "aligned"]); d.Vec != want {
					t.Fatalf("%s: descriptor vec = %d, want %d", name, d.Vec, want)
				}
			}
		}
	}
}
