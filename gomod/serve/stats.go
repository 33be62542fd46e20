package serve

// The model's statistics as python/goprep/_serve/triton.py's Stats counts them (its docstring is the
// definition): success/fail counts and durations, queue and compute stages of successful requests,
// inference and execution counts, and per executed batch size its compute durations. Go counts;
// Python builds the ModelStatistics message from a Snapshot (Stats.load), so the message has one
// builder.

import (
	"sync"
	"time"
)

// Duration is one statistic: how many and their total nanoseconds.
type Duration struct {
	Count int64 `json:"count"`
	NS    int64 `json:"ns"`
}

func (d *Duration) add(ns int64) {
	d.Count++
	d.NS += max(ns, 0)
}

// BatchStat is one executed batch size's compute durations.
type BatchStat struct {
	Size          int      `json:"batch_size"`
	ComputeInput  Duration `json:"compute_input"`
	ComputeInfer  Duration `json:"compute_infer"`
	ComputeOutput Duration `json:"compute_output"`
}

// Snapshot is the statistics at one moment, as JSON for Python's Stats.load.
type Snapshot struct {
	Stages          map[string]Duration `json:"stages"`
	InferenceCount  int64               `json:"inference_count"`
	ExecutionCount  int64               `json:"execution_count"`
	LastInferenceMS int64               `json:"last_inference_ms"`
	Batches         []BatchStat         `json:"batches"`
}

// timing is one execution's moments: started, inputs read, inferred, replies built; items executed.
type timing struct {
	start, inputs, infer, output time.Time
	items                        int
}

type stats struct {
	mu                   sync.Mutex
	success, fail, queue Duration
	cin, cinfer, cout    Duration
	inferences, execs    int64
	lastMS               int64
	batches              map[int]*BatchStat
}

// ok counts a request answered OK that arrived at arrived and was answered at done, run in t
// (s.mu held).
func (s *stats) ok(arrived, done time.Time, t *timing) {
	s.success.add(int64(done.Sub(arrived)))
	s.queue.add(int64(t.start.Sub(arrived)))
	s.cin.add(int64(t.inputs.Sub(t.start)))
	s.cinfer.add(int64(t.infer.Sub(t.inputs)))
	s.cout.add(int64(t.output.Sub(t.infer)))
	s.lastMS = time.Now().UnixMilli()
}

// failed counts a request of this model answered with an error.
func (s *stats) failed(arrived, done time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail.add(int64(done.Sub(arrived)))
	s.lastMS = time.Now().UnixMilli()
}

// executed counts one execution of t.items images and its requests answered OK (those that
// arrived at arrived), at done, under one lock: a snapshot sees an execution and its successes
// together, never one without the other (perf_analyzer checks executions == successes across a
// window).
func (s *stats) executed(t *timing, arrived []time.Time, done time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, a := range arrived {
		s.ok(a, done, t)
	}
	if t.items == 0 {
		return
	}
	s.inferences += int64(t.items)
	s.execs++
	if s.batches == nil {
		s.batches = map[int]*BatchStat{}
	}
	b := s.batches[t.items]
	if b == nil {
		b = &BatchStat{Size: t.items}
		s.batches[t.items] = b
	}
	b.ComputeInput.add(int64(t.inputs.Sub(t.start)))
	b.ComputeInfer.add(int64(t.infer.Sub(t.inputs)))
	b.ComputeOutput.add(int64(t.output.Sub(t.infer)))
}

func (s *stats) snapshot() Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	sn := Snapshot{
		Stages: map[string]Duration{"success": s.success, "fail": s.fail, "queue": s.queue,
			"compute_input": s.cin, "compute_infer": s.cinfer, "compute_output": s.cout},
		InferenceCount: s.inferences, ExecutionCount: s.execs, LastInferenceMS: s.lastMS,
		Batches: []BatchStat{},
	}
	for _, b := range s.batches {
		sn.Batches = append(sn.Batches, *b)
	}
	return sn
}
