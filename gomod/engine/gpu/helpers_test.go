package gpu

import (
	"testing"
	"unsafe"

	"github.com/goprep/goprep/gomod/engine"
)

// The engine's test specs and guarded runner, for the GPU tests (copies of gomod/engine's
// imagenetSpec, rgbSpec and runGuarded: test helpers are not exported across packages).

// imagenetSpec is the benchmark task: h x w RGB -> bilinear 224x224 -> hflip -> normalize CHW float32.
func imagenetSpec(n, h, w int) *engine.Spec {
	return &engine.Spec{
		In:     engine.InputSpec{DType: engine.U8, N: n, H: h, W: w, C: 3, Strides: [4]int64{int64(h * w * 3), int64(w * 3), 3, 1}},
		Pre:    engine.View{Y0: 0, X0: 0, SY: 1, SX: 1, H: h, W: w},
		Resize: engine.ResizeSpec{Kind: "bilinear", H: 224, W: 224},
		Canvas: engine.CanvasSpec{H: 224, W: 224},
		Post:   engine.View{Y0: 0, X0: 223, SY: 1, SX: -1, H: 224, W: 224},
		CMap:   []int{0, 1, 2},
		Norm:   &engine.NormSpec{Mean: []float64{0.485, 0.456, 0.406}, Std: []float64{0.229, 0.224, 0.225}, Scale: 1.0 / 255, DType: engine.F32, Layout: "CHW"},
	}
}

func rgbSpec(h, w int, kind string, aa bool, oh, ow int) *engine.Spec {
	return &engine.Spec{
		In:     engine.InputSpec{DType: engine.U8, H: h, W: w, C: 3, Strides: [4]int64{0, int64(3 * w), 3, 1}},
		Pre:    engine.View{Y0: 0, X0: 0, SY: 1, SX: 1, H: h, W: w},
		Resize: engine.ResizeSpec{Kind: kind, Antialias: aa, H: oh, W: ow},
		Canvas: engine.CanvasSpec{H: oh, W: ow},
		Post:   engine.View{Y0: 0, X0: 0, SY: 1, SX: 1, H: oh, W: ow},
		CMap:   []int{0, 1, 2},
	}
}

// runGuarded executes a plan on the CPU engine into an output surrounded by guard bytes and fails if
// any guard changed.
func runGuarded(t *testing.T, p *engine.Plan, src unsafe.Pointer, threads int) []byte {
	t.Helper()
	const guard = 4096
	n := p.OutBytes()
	buf := make([]byte, n+2*guard)
	for i := range buf {
		buf[i] = 0xA5
	}
	if err := (engine.CPU{Threads: threads}).Run([]engine.Job{{Plan: p, Src: src, Out: unsafe.Pointer(&buf[guard])}}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < guard; i++ {
		if buf[i] != 0xA5 || buf[guard+n+i] != 0xA5 {
			t.Fatalf("write outside the output at guard offset %d", i)
		}
	}
	return buf[guard : guard+n]
}
