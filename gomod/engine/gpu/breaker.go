package gpu

// The circuit breaker and the GPU counters goprep.info() reports: consecutive GPU failures open the
// breaker, which keeps calls on the CPU for a cool-down.

import (
	"time"
)

// GPUStats is what goprep.info() shows of the GPU side.
type GPUStats struct {
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

// Stats reports the counters.
func Stats() GPUStats {
	s := GPUStats{
		Calls: gpu.calls.Load(), Failures: gpu.failures.Load(), Fallbacks: gpu.fallbacks.Load(),
		BreakerTrips: gpu.trips.Load(), BreakerOpen: breakerOpen(), PoolLimit: int64(gpuPoolBytes), Costs: Costs(),
	}
	if v, ok := gpu.lastErr.Load().(string); ok {
		s.LastError = v
	}
	gpu.mu.Lock()
	for _, d := range gpu.devices {
		c, u := d.mem.usage()
		s.PoolCached += c
		s.PoolInUse += u
	}
	gpu.mu.Unlock()
	return s
}

func breakerOpen() bool { return time.Now().UnixNano() < gpu.openUntil.Load() }

// recordFailure counts a GPU failure and opens the breaker after breakerThreshold in a row.
func recordFailure(err error) {
	gpu.failures.Add(1)
	gpu.lastErr.Store(err.Error())
	if gpu.consecutive.Add(1) >= int64(breakerThreshold) {
		gpu.consecutive.Store(0)
		gpu.trips.Add(1)
		gpu.openUntil.Store(time.Now().Add(breakerCooldown).UnixNano())
	}
}
