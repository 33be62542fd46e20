package gpu

// Test hooks of the GPU side: fault injection, counter reset and the breaker's cool-down. Tests use
// them to prove fallback, the breaker and device loss without a GPU.

import (
	"math"
	"sync/atomic"
	"time"

	"github.com/goprep/goprep/gomod/engine"
)

// gpuFault is the test-only fault injection switch: the next Count GPU calls fail with Kind.
type gpuFault struct {
	Kind  string
	Count atomic.Int64
}

// InjectFault makes the next count GPU calls fail at kernel launch ("launch"), at device
// allocation ("oom"), or with a sticky error that loses the simulated device ("lost"); count 0 clears
// it. Tests use it to prove fallback, the breaker and device loss without a GPU.
func InjectFault(kind string, count int) error {
	if kind != "oom" && kind != "launch" && kind != "lost" {
		return engine.Errorf(engine.CodeInvalidArgument, "kind", "must be \"oom\", \"launch\" or \"lost\", got %q", kind)
	}
	f := &gpuFault{Kind: kind}
	f.Count.Store(int64(count))
	state.fault.Store(f)
	return nil
}

// ResetStats clears the counters and closes the breaker (tests).
func ResetStats() {
	state.calls.Store(0)
	state.fallbacks.Store(0)
	state.failures.Store(0)
	state.trips.Store(0)
	state.consecutive.Store(0)
	state.openUntil.Store(0)
	state.lastErr.Store("")
	state.fault.Store(nil)
}

// SetBreakerCooldown changes the breaker's cool-down (tests).
func SetBreakerCooldown(d time.Duration) { breakerCooldown = d }

// SetCPUCostForTesting replaces the cost model's measured CPU figure (ns per byte and core) with v and
// returns the figure it replaced; v <= 0 keeps the current figure (and only reads it). Tests
// of placement decisions pin it: measured, the figure describes the test machine, and a faster CPU
// engine flipped "auto" decisions that the tests were written about.
func SetCPUCostForTesting(v float64) float64 {
	cpuNsPerByte() // measure first, so a later measurement cannot overwrite the pinned figure
	old := math.Float64frombits(cpuCost.Load())
	if v > 0 {
		cpuCost.Store(math.Float64bits(v))
	}
	return old
}

func takeFault(kind string) bool {
	f := state.fault.Load()
	if f == nil || f.Kind != kind {
		return false
	}
	return f.Count.Add(-1) >= 0
}

// stageTrace, when set (tests), sees the host-input pipeline's order of events: ("chunk", images, 0)
// as a chunk's staging begins, ("staged", i, i) when
// image i of a chunk is in pinned memory, ("h2d", lo, hi) when the copy of the pinned bytes [lo, hi)
// is queued. It may be called from several goroutines at once.
var stageTrace func(ev string, a, b int)
