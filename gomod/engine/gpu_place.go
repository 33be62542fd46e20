package engine

// Placement: where a call runs (CPU or a GPU), the cost model of device="auto", and the entry point
// that runs host-output calls with CPU fallback.

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

// Tunables; variables so tests can shrink them.
var (
	// Below this many bytes moved (source + output) a call stays on the CPU under device="auto": a
	// GPU call pays a launch and two PCIe transfers (~50-100us on any setup) before any pixel is done,
	// which is about what the CPU engine needs for one 512x512 -> 224x224 image.
	gpuAutoMinBytes = envInt("GOPREP_GPU_MIN_BYTES", 4<<20)
	// Chunk size of the copy/compute pipeline: large enough that each copy runs near PCIe bandwidth,
	// small enough that several chunks of a batch overlap.
	gpuChunkBytes = envInt("GOPREP_GPU_CHUNK_BYTES", 32<<20)
	// Device memory kept in the pool for reuse; anything beyond is freed when released.
	gpuPoolBytes = envInt("GOPREP_GPU_POOL_BYTES", 1<<30)
	// Pipelined calls in flight per device; further calls wait. Each holds six pinned staging buffers
	// (two lanes of input, output and tables), so this bounds pinned host memory too.
	gpuSessions = envInt("GOPREP_GPU_SESSIONS", 4)
	// Images per launch: bounds the descriptor table (232 bytes each) of a chunk.
	maxChunkImages = 4096
	// Consecutive GPU failures that open the breaker, and how long it stays open.
	breakerThreshold = 3
	breakerCooldown  = 30 * time.Second
)

// GPUAutoMinBytes is the cost model's threshold (the Python side skips placement below it).
func GPUAutoMinBytes() int { return gpuAutoMinBytes }

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// Placement says where a call runs and where its output lives.
type Placement struct {
	Device string // "cpu", "auto" or "cuda" ("cuda:N" parses to "cuda" with Index N)
	Index  int    // the GPU for "cuda"; "auto" uses GPU 0
}

// ParseDevice validates a device string.
func ParseDevice(s string) (Placement, error) {
	switch s {
	case "cpu", "auto", "cuda":
		return Placement{Device: s}, nil
	}
	var i int
	if n, err := fmt.Sscanf(s, "cuda:%d", &i); err == nil && n == 1 && fmt.Sprintf("cuda:%d", i) == s && i >= 0 {
		return Placement{Device: "cuda", Index: i}, nil
	}
	return Placement{}, errf(CodeInvalidArgument, "device", "must be \"cpu\", \"auto\", \"cuda\" or \"cuda:N\", got %q", s)
}

// wantGPU is the cost model of device="auto": enough bytes to amortise the GPU's fixed latency, a
// device, a closed breaker, and free device memory for the working set.
func wantGPU(jobs []Job) (*gpuDev, bool) {
	if breakerOpen() {
		return nil, false
	}
	d, err := device(0)
	if err != nil || d.dev.Lost() != "" {
		return nil, false
	}
	moved := 0
	for _, j := range jobs {
		_, n := j.Plan.ImageSpan()
		moved += j.Plan.N * (n*j.Plan.InDType().Size() + j.Plan.OutImageBytes())
	}
	if moved < gpuAutoMinBytes {
		return nil, false
	}
	if free := d.freeMemory(); free > 0 && free < uint64(2*min(moved, 2*gpuChunkBytes)) {
		return nil, false // the device is nearly full (other processes): don't compete for it
	}
	return d, true
}

// infoTTL: device properties take several NVML queries; the cost model reuses them this long.
const infoTTL = time.Second

func (d *gpuDev) freeMemory() uint64 {
	if now := time.Now().UnixNano(); now-d.freeAt.Load() > int64(infoTTL) {
		d.freeMem.Store(d.dev.Info().FreeMemory)
		d.freeAt.Store(now)
	}
	return d.freeMem.Load()
}

// Execute runs jobs on the placement with host outputs (Job.Out). It returns which backend ran.
// On a GPU error the call is redone on the CPU, so the result is always correct.
func Execute(jobs []Job, pl Placement) (string, error) {
	var d *gpuDev
	switch pl.Device {
	case "cpu":
		return "cpu", CPU{}.Run(jobs)
	case "auto":
		var ok bool
		if d, ok = wantGPU(jobs); !ok {
			return "cpu", CPU{}.Run(jobs)
		}
	default:
		var err error
		if d, err = device(pl.Index); err != nil {
			return "", err
		}
		if breakerOpen() || d.dev.Lost() != "" { // a lost device is a breaker that never closes
			gpu.fallbacks.Add(1)
			return "cpu", CPU{}.Run(jobs)
		}
	}
	if err := d.run(jobs, 0); err != nil {
		gpu.fallbacks.Add(1)
		return "cpu", CPU{}.Run(jobs)
	}
	return "cuda", nil
}
