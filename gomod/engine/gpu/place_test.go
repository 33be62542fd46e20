package gpu

import (
	"testing"

	"github.com/goprep/goprep/gomod/engine"
)

// MovedBytes bounds callBytes' up + down from above without building the row staging: Python's
// once-per-signature "stays on the CPU" then never contradicts wantGPU, and a CPU-only process builds
// no GPU-only plan data.
func TestMovedBytesBoundsWithoutStaging(t *testing.T) {
	p, err := engine.NewPlan(imagenetSpec(0, 1080, 1920)) // reads 448 of 1080 rows: a staged plan
	if err != nil {
		t.Fatal(err)
	}
	bound := MovedBytes(p)
	if p.StageBuilt() {
		t.Fatal("MovedBytes built the GPU row staging")
	}
	up, down, _ := callBytes([]engine.Job{{Plan: p}})
	if !p.StageBuilt() {
		t.Fatal("callBytes should have built the staging it counts")
	}
	if bound < up+down || bound != 1080*1920*3+p.OutBytes() {
		t.Fatalf("MovedBytes = %d; staged up+down = %d, whole image + output = %d", bound, up+down, 1080*1920*3+p.OutBytes())
	}
	if up+down >= bound {
		t.Fatalf("the staged count %d should be below the whole-image bound %d for a plan reading 448 rows", up+down, bound)
	}
}
