package binding

// Staged jobs (engine/staged_job.go): a training chain with colour steps between its segments as one
// Execute call per batch (python/goprep/transforms/_converted.py's Staged). A job row whose jobStages
// column is not 0 names an int64 NumPy array object holding what follows the row's plan for that
// item, its stage program:
//
//	[len, stages, then per stage: plan handle, numerics (ColorNumerics' code), steps, then per step:
//	 op (ColorOpNames' code), factor (float64 bits)]
//
// len is the program's length in elements, itself included (what is read is bounded by it).

import (
	"math"
	"unsafe"

	"github.com/goprep/goprep/gomod/engine"
)

// Bounds on a stage program (far beyond a real chain: one or two colour cuts of a few steps).
const (
	maxStages     = 16
	maxStageSteps = 64
)

// stagesJob reads the stage program of job i (the array object obj) for plan p and checks it
// against p (engine.CheckStages).
func stagesJob(p *engine.Plan, obj int64, i int) ([]engine.Stage, error) {
	dp, err := readArrayData(obj)
	if err != nil {
		return nil, err
	}
	bad := func(what string) error {
		return engine.Errorf(engine.CodeInternal, "stages", "job %d: malformed stage program: %s", i, what)
	}
	n := *(*int64)(dp)
	if n < 2 || n > 2+maxStages*(3+2*maxStageSteps) {
		return nil, bad("its length")
	}
	prog := unsafe.Slice((*int64)(dp), n)
	at := 2
	next := func() (int64, bool) {
		if at >= len(prog) {
			return 0, false
		}
		at++
		return prog[at-1], true
	}
	count := prog[1]
	if count < 1 || count > maxStages {
		return nil, bad("its stage count")
	}
	stages := make([]engine.Stage, count)
	for k := range stages {
		h, ok1 := next()
		num, ok2 := next()
		steps, ok3 := next()
		if !ok1 || !ok2 || !ok3 || steps < 0 || steps > maxStageSteps {
			return nil, bad("a stage's head")
		}
		sp, err := lookup(h)
		if err != nil {
			return nil, err
		}
		s := engine.Stage{Numerics: int(num), Plan: sp, Steps: make([]engine.ColorStep, steps)}
		for j := range s.Steps {
			op, ok1 := next()
			bits, ok2 := next()
			if !ok1 || !ok2 {
				return nil, bad("a step")
			}
			s.Steps[j] = engine.ColorStep{Op: engine.ColorOp(op), Factor: math.Float64frombits(uint64(bits))}
		}
		stages[k] = s
	}
	if at != len(prog) {
		return nil, bad("its length")
	}
	if err := engine.CheckStages(p, stages); err != nil {
		return nil, err
	}
	return stages, nil
}

// StagesColumn is the job table's stage-program column, read by Python (one source).
func StagesColumn() int64 { return jobStages }
