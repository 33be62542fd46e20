package gpu

import (
	"bytes"
	"testing"
	"unsafe"

	"github.com/goprep/goprep/gomod/engine"
)

// u8Plan is the plan of a contiguous uint8 h x w RGB source read through pre, resized (kind) to
// 16 x 16, normalized with norm (nil: uint8 HWC out).
func u8Plan(t *testing.T, h, w int, pre engine.View, kind string, norm *engine.NormSpec) *engine.Plan {
	t.Helper()
	p, err := engine.NewPlan(&engine.Spec{
		In:     engine.InputSpec{DType: engine.U8, H: h, W: w, C: 3, Strides: [4]int64{0, int64(w * 3), 3, 1}},
		Pre:    pre,
		Resize: engine.ResizeSpec{Kind: kind, H: 16, W: 16},
		Canvas: engine.CanvasSpec{H: 16, W: 16},
		Post:   engine.View{SY: 1, SX: 1, H: 16, W: 16},
		CMap:   []int{0, 1, 2},
		Norm:   norm,
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// A staged job (engine/staged_job.go: colour steps between plans) placed on the GPU is declined to
// the CPU engine, which gives the bytes the CPU placement gives.
func TestStagedJobsRunOnCPU(t *testing.T) {
	useSim(t)
	p1 := u8Plan(t, 40, 36, engine.View{Y0: 2, X0: 3, SY: 1, SX: 1, H: 30, W: 30}, "bilinear", nil)
	p2 := u8Plan(t, 16, 16, engine.View{SY: 1, SX: 1, H: 16, W: 16}, "none",
		&engine.NormSpec{Mean: []float64{0.5, 0.5, 0.5}, Std: []float64{0.25, 0.25, 0.25}, Scale: 1.0 / 255, DType: engine.F32, Layout: "CHW"})
	src := make([]byte, 40*36*3)
	for i := range src {
		src[i] = byte(i*13 + i/7)
	}
	stages := []engine.Stage{{Numerics: engine.NumericsPIL, Plan: p2,
		Steps: []engine.ColorStep{{Op: engine.ColorHue, Factor: 0.1}, {Op: engine.ColorContrast, Factor: 1.4}}}}
	run := func(device string) ([]byte, string) {
		out := make([]byte, p2.OutBytes())
		ran, err := execute([]engine.Job{{Plan: p1, Src: unsafe.Pointer(&src[0]), Out: unsafe.Pointer(&out[0]), Stages: stages}}, Placement{Device: device})
		if err != nil {
			t.Fatal(err)
		}
		return out, ran
	}
	want, _ := run("cpu")
	got, ran := run("cuda")
	if ran != "cpu" || !bytes.Equal(got, want) {
		t.Fatalf("a staged job placed on the GPU ran on %q, equal %v", ran, bytes.Equal(got, want))
	}
}
