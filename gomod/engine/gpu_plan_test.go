package engine

import (
	"testing"
	"unsafe"
)

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
	s := p.GPUStage()
	if s == nil || len(s.rows) != 448 || p.StagedElems() != s.elems {
		t.Fatalf("staging %v", s)
	}
	if copied.GPUStage() != s {
		t.Fatal("a copy of the plan built its own staging")
	}
}
