package gpu

// The circuit breaker and the GPU counters goprep.info() reports: consecutive GPU failures open the
// breaker, which keeps calls on the CPU for a cool-down.

import (
	"time"
)

// Stats is what goprep.info() shows of the GPU side.
type Stats struct {
	Calls        int64  `json:"gpu_calls"`
	Failures     int64  `json:"gpu_failures"`
	Fallbacks    int64  `json:"cpu_fallbacks"`
	BreakerTrips int64  `json:"breaker_trips"`
	BreakerOpen  bool   `json:"breaker_open"`
	LastError    string `json:"last_gpu_error"`
	PoolCached   int64  `json:"pool_cached_bytes"`
	PoolInUse    int64  `json:"pool_in_use_bytes"`
	PoolLimit    int64  `json:"pool_limit_bytes"`
	// The cost model's measured figures (zeros until the first auto call that needed them).
	Costs CostFigures `json:"cost_model"`
}

// ReadStats reports the counters.
func ReadStats() Stats {
	s := Stats{
		Calls: state.calls.Load(), Failures: state.failures.Load(), Fallbacks: state.fallbacks.Load(),
		BreakerTrips: state.trips.Load(), BreakerOpen: breakerOpen(), PoolLimit: int64(gpuPoolBytes), Costs: Costs(),
	}
	if v, ok := state.lastErr.Load().(string); ok {
		s.LastError = v
	}
	state.mu.Lock()
	for _, d := range state.devices {
		c, u := d.mem.usage()
		s.PoolCached += c
		s.PoolInUse += u
	}
	state.mu.Unlock()
	return s
}

func breakerOpen() bool { return time.Now().UnixNano() < state.openUntil.Load() }

// recordFailure counts a GPU failure and opens the breaker after breakerThreshold in a row.
func recordFailure(err error) {
	state.failures.Add(1)
	state.lastErr.Store(err.Error())
	if state.consecutive.Add(1) >= int64(breakerThreshold) {
		state.consecutive.Store(0)
		state.trips.Add(1)
		state.openUntil.Store(time.Now().Add(breakerCooldown).UnixNano())
	}
}
