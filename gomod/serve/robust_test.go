package serve

import (
	"testing"

	"google.golang.org/grpc/codes"
)

// panicHost's model panics.
type panicHost struct{ fakeHost }

func (*panicHost) Model([]byte, int) ([][]byte, error) { panic("the model broke") }

// A panic inside an execution fails its requests INTERNAL; the server goes on serving.
func TestExecutionPanic(t *testing.T) {
	cfg := testConfig()
	cfg.Model, cfg.Outputs = true, []Output{{Name: "SUM", Datatype: "FP32", Itemsize: 4}}
	_, cc := start(t, cfg, &panicHost{})
	for range 2 {
		if _, err := call(cc, "ModelInfer", frameRequest("m", 1)); code(err) != codes.Internal {
			t.Errorf("a panicking model: %v, want INTERNAL", err)
		}
	}
}

// A plan whose output is not one Tensor row is refused (INTERNAL), never run into the row.
func TestPlanMustFitTheRow(t *testing.T) {
	cfg := testConfig()
	cfg.Tensor.Shape = []int64{3, 4, 2} // half the plan's output
	cfg.Outputs = []Output{cfg.Tensor}
	_, cc := start(t, cfg, &fakeHost{})
	if _, err := call(cc, "ModelInfer", frameRequest("m", 1)); code(err) != codes.Internal {
		t.Errorf("a plan larger than the row: %v, want INTERNAL", err)
	}
}

// Two drains: the second neither hangs nor loses the first's wait.
func TestDrainTwice(t *testing.T) {
	s, cc := start(t, testConfig(), &fakeHost{})
	if _, err := call(cc, "ModelInfer", frameRequest("m", 0)); err != nil {
		t.Fatal(err)
	}
	s.Drain(0)
	s.Drain(0)
}
