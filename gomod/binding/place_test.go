package binding

import (
	"encoding/json"
	"testing"

	"github.com/goprep/goprep/gomod/engine"
)

// PlanMovedBytes is the figure device="auto" compares with GPUAutoMinBytes (Python applies the rule
// per signature with it): the staged source bytes plus the output bytes, here a whole 1x2 RGB image
// in and out.
func TestPlanMovedBytes(t *testing.T) {
	h := copyPlan1x2(t)
	defer FreePlan(h)
	if n, err := PlanMovedBytes(h); err != nil || n != 6+6 {
		t.Fatalf("PlanMovedBytes = %d, %v; want 12", n, err)
	}
	if _, err := PlanMovedBytes(987654); err == nil {
		t.Fatal("an unknown plan handle must fail")
	}
}

// copyPlan1x2 is the handle of a plan that copies a 1x2 RGB uint8 image as it is (the caller frees it).
func copyPlan1x2(t *testing.T) int64 {
	t.Helper()
	spec := engine.Spec{
		In:     engine.InputSpec{DType: engine.U8, H: 1, W: 2, C: 3, Strides: [4]int64{0, 6, 3, 1}},
		Pre:    engine.View{SY: 1, SX: 1, H: 1, W: 2},
		Resize: engine.ResizeSpec{Kind: "none", H: 1, W: 2},
		Canvas: engine.CanvasSpec{H: 1, W: 2},
		Post:   engine.View{SY: 1, SX: 1, H: 1, W: 2},
		CMap:   []int{0, 1, 2},
	}
	js, _ := json.Marshal(spec)
	h, err := NewPlan(string(js))
	if err != nil {
		t.Fatal(err)
	}
	return h
}
