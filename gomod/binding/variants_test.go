package binding

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/goprep/goprep/gomod/engine"
)

// cropSpec is a training item's traced spec: an inH x inW RGB source, the window, a 24x24 antialias
// resize, a horizontal flip and CHW float normalisation.
func cropSpec(inH, inW, y0, x0, h, w int) engine.Spec {
	return engine.Spec{
		In:     engine.InputSpec{DType: engine.U8, H: inH, W: inW, C: 3, Strides: [4]int64{0, int64(inW * 3), 3, 1}},
		Pre:    engine.View{Y0: y0, X0: x0, SY: 1, SX: 1, H: h, W: w},
		Resize: engine.ResizeSpec{Kind: "bilinear", Antialias: true, H: 24, W: 24},
		Canvas: engine.CanvasSpec{H: 24, W: 24},
		Post:   engine.View{X0: 23, SY: 1, SX: -1, H: 24, W: 24},
		CMap:   []int{0, 1, 2},
		Norm:   &engine.NormSpec{Mean: []float64{0.5, 0.4, 0.3}, Std: []float64{0.2, 0.2, 0.2}, Scale: 1.0 / 255, DType: "f32", Layout: "CHW"},
	}
}

func newPlanOf(t *testing.T, s engine.Spec) int64 {
	t.Helper()
	js, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	h, err := NewPlan(string(js))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// Each variant is the plan its own spec makes (the same Spec after NewPlan), whatever the template's
// size and window; CropTemplate accepts only the template's own source and window.
func TestPlanVariantsAreTheirSpecsPlans(t *testing.T) {
	if _, err := SetArrayDataOffset(16); err != nil {
		t.Fatal(err)
	}
	tmpl := newPlanOf(t, cropSpec(100, 120, 5, 7, 60, 80))
	defer FreePlan(tmpl)
	if !CropTemplate(tmpl, 100, 120, 5, 7, 60, 80) || CropTemplate(tmpl, 100, 120, 5, 7, 60, 81) || CropTemplate(tmpl, 99, 120, 5, 7, 60, 80) {
		t.Fatal("CropTemplate does not check the source and window")
	}
	cases := [][6]int{{100, 120, 0, 0, 100, 120}, {37, 41, 3, 2, 24, 24}, {300, 200, 250, 0, 50, 200}, {2, 2, 0, 1, 2, 1}}
	rows := make([]int64, 0, len(cases)*VariantCols)
	for _, c := range cases {
		rows = append(rows, tmpl, int64(c[0]), int64(c[1]), int64(c[2]), int64(c[3]), int64(c[4]), int64(c[5]))
	}
	hs := make([]int64, len(cases))
	ro, ho := &fakeArray{data: unsafe.Pointer(&rows[0])}, &fakeArray{data: unsafe.Pointer(&hs[0])}
	if err := PlanVariants(addr(unsafe.Pointer(ro)), int64(len(cases)), addr(unsafe.Pointer(ho))); err != nil {
		t.Fatal(err)
	}
	for i, c := range cases {
		want := newPlanOf(t, cropSpec(c[0], c[1], c[2], c[3], c[4], c[5]))
		pw, _ := lookup(want)
		pv, err := lookup(hs[i])
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(pv.Spec, pw.Spec) {
			t.Errorf("case %v: variant spec %+v, traced %+v", c, pv.Spec, pw.Spec)
		}
		FreePlan(want)
		FreePlan(hs[i])
	}
	// a window outside its source: an error naming it, and no handle left behind
	before := plans.len()
	rows[VariantCols+varY0] = 30
	err := PlanVariants(addr(unsafe.Pointer(ro)), int64(len(cases)), addr(unsafe.Pointer(ho)))
	if err == nil || !strings.Contains(err.Error(), "goprep[") || plans.len() != before {
		t.Fatalf("got %v, %d plans (want an error and %d)", err, plans.len(), before)
	}
}
