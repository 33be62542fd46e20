package gpu

// Placement: where a call runs (CPU or a GPU), the cost model of device="auto", and the entry point
// that runs host-output calls with CPU fallback.

import (
	"fmt"
	"os"
	"strconv"
	"time"
	"unsafe"

	"github.com/goprep/goprep/gomod/engine"
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
	// Pipelined calls in flight per device; further calls wait. Each holds three pinned staging
	// buffers per lane (input, output and tables), so this bounds pinned host memory too.
	gpuSessions = envInt("GOPREP_GPU_SESSIONS", 4)
	// Pipeline lanes (chunks in flight) per call. Two keep PCIe busy whenever a chunk's kernel,
	// copy out and host-side output copy take less than its copy in, which holds for preprocessing
	// that shrinks images (1080p -> 224 f32: 2.6 MB staged in, 0.6 MB out per image): while the host
	// waits for chunk k-2 and copies its output, chunk k-1's copies are still queued, and chunk k's
	// first copy is queued one image's staging (~0.1 ms) after that. Calls whose outputs are larger
	// than their inputs can use more (GOPREP_GPU_LANES); each lane holds three pinned buffers.
	gpuLanes = min(max(envInt("GOPREP_GPU_LANES", 2), 2), 8)
	// Images per launch: bounds the descriptor table (GPUImageBytes each) of a chunk.
	maxChunkImages = 4096
	// Consecutive GPU failures that open the breaker, and how long it stays open.
	breakerThreshold = 3
	breakerCooldown  = 30 * time.Second
)

// AutoMinBytes is the cost model's threshold (the Python side skips placement below it).
func AutoMinBytes() int { return gpuAutoMinBytes }

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// Placement says where a call runs and where its output lives.
type Placement struct {
	Device string // "cpu", "auto" or "cuda" ("cuda:N" parses to "cuda" with Index N)
	Index  int    // the GPU; -1: the calling thread's current device (its CUDA context), else GPU 0
}

// ParseDevice validates a device string.
func ParseDevice(s string) (Placement, error) {
	switch s {
	case "cpu", "auto", "cuda":
		return Placement{Device: s, Index: -1}, nil
	}
	var i int
	if n, err := fmt.Sscanf(s, "cuda:%d", &i); err == nil && n == 1 && fmt.Sprintf("cuda:%d", i) == s && i >= 0 {
		return Placement{Device: "cuda", Index: i}, nil
	}
	return Placement{}, engine.Errorf(engine.CodeInvalidArgument, "device", "must be \"cpu\", \"auto\", \"cuda\" or \"cuda:N\", got %q", s)
}

// pick resolves the placement's GPU: the given index, else the device whose context is current on
// the calling thread (the one PyTorch or CuPy made current), else GPU 0.
func (pl Placement) pick() (*gpuDev, int, error) {
	if pl.Index >= 0 {
		d, err := device(pl.Index)
		return d, pl.Index, err
	}
	state.mu.Lock()
	devs := state.devices
	state.mu.Unlock()
	for i, d := range devs {
		if d.dev.Current() {
			return d, i, nil
		}
	}
	d, err := device(0)
	return d, 0, err
}

// wantGPU is the cost model of device="auto": enough bytes to amortise the GPU's fixed latency, a
// closed breaker, and free device memory for the working set. (Device-resident sources always go
// to their GPU: the CPU engine cannot read them.)
func wantGPU(d *gpuDev, jobs []engine.Job) bool {
	if breakerOpen() || d.dev.Lost() != "" {
		return false
	}
	up, down, cpuBytes := callBytes(jobs)
	moved := up + down
	if moved < gpuAutoMinBytes {
		return false // below any GPU's fixed cost: not even worth measuring
	}
	if free := d.freeMemory(); free > 0 && free < uint64(2*min(moved, 2*gpuChunkBytes)) {
		return false // the device is nearly full (other processes): don't compete for it
	}
	return d.gpuFaster(cpuBytes, up, down)
}

// callBytes is what a host-input call moves: up (staged source bytes), down (output bytes), and what
// the CPU engine would read and write.
func callBytes(jobs []engine.Job) (up, down, cpuBytes int) {
	for _, j := range jobs {
		p := j.Plan
		up += p.N * p.StagedElems() * p.InDType().Size()
		down += p.OutBytes()
		_, img := p.ImageSpan()
		cpuBytes += p.N*img*p.InDType().Size() + p.OutBytes()
	}
	return up, down, cpuBytes
}

// MovedBytes bounds from above what a call of p alone moves between host and GPU (callBytes' up +
// down), counting the whole source image as staged: the row staging, which may stage fewer rows, is
// GPU-only plan data that this must not build (a CPU-only process never builds it). The binding
// exports it (PlanMovedBytes): Python keeps a device="auto" signature on the CPU once, when even this
// bound is below AutoMinBytes, so it never keeps there a call that wantGPU would send to a GPU.
func MovedBytes(p *engine.Plan) int {
	_, img := p.ImageSpan()
	return p.N*img*p.InDType().Size() + p.OutBytes()
}

// infoTTL: device properties take several queries; the cost model reuses them this long.
const infoTTL = time.Second

func (d *gpuDev) freeMemory() uint64 {
	if now := time.Now().UnixNano(); now-d.freeAt.Load() > int64(infoTTL) {
		d.freeMem.Store(d.dev.Info().FreeMemory)
		d.freeAt.Store(now)
	}
	return d.freeMem.Load()
}

// Call is one run request: the single entry point of every placement, output and stream.
type Call struct {
	Jobs      []engine.Job
	Placement Placement
	// ToDevice keeps the outputs on the GPU: one new DeviceArray, outputs consecutive in job order
	// (Job.Out ignored). Otherwise each job writes its host output Job.Out.
	ToDevice bool
	// DeviceSources says every Job.Src is a device address on the call's GPU (CUDA array interface,
	// DLPack, DeviceArray inputs): read in place, never staged.
	DeviceSources bool
	// Stream is the caller's CUDA stream handle when HasStream (stream=): the work is queued there,
	// and with device sources and ToDevice the call returns without any host synchronisation.
	Stream    uint64
	HasStream bool
	// WaitOn are streams the device sources were produced on (CUDA array interface v3 "stream"):
	// the call's work waits for them on the device.
	WaitOn []uint64
	// Timed asks for the device time of the call's copies and kernels (Result.GPU; the profiler).
	// It applies to calls that synchronise anyway (host outputs); others report zeros.
	Timed bool
}

// Result says which backend ran a call, and holds its device output.
type Result struct {
	Ran   string // "cpu" or "cuda"
	Array *DeviceArray
	GPU   Times // with Call.Timed, when the GPU ran the call
}

// Run executes a call. On a GPU error the call is redone on the CPU (device sources are copied to
// the host for it; device outputs are uploaded afterwards), so a result is always correct; an error
// means no backend could produce it.
func Run(c Call) (Result, error) {
	onDev := c.DeviceSources
	if c.Placement.Device == "cpu" {
		// The CPU engine reads and writes host memory only. Go's one check of the rule, behind
		// Python's (_pipeline.py for the output, _run.py for the sources), with the same errors.
		if c.ToDevice {
			return Result{}, engine.Errorf(engine.CodeInvalidArgument, "output", "output=\"device\" needs device=\"auto\", \"cuda\" or \"cuda:N\": device=\"cpu\" cannot write GPU memory")
		}
		if onDev {
			return Result{}, engine.Errorf(engine.CodeInvalidArgument, "device", "device=\"cpu\" cannot read GPU memory (the sources are device arrays): use \"auto\", \"cuda\" or \"cuda:N\"")
		}
		return Result{Ran: "cpu"}, engine.CPU{}.Run(c.Jobs)
	}
	d, index, err := c.Placement.pick()
	if err != nil {
		if c.Placement.Device == "auto" && !onDev && !c.ToDevice {
			return Result{Ran: "cpu"}, engine.CPU{}.Run(c.Jobs)
		}
		return Result{}, err
	}
	if onDev {
		if err := checkSources(d.dev, c.Jobs); err != nil {
			return Result{}, err
		}
	}
	gc := &gpuCall{jobs: c.Jobs, devSrc: onDev}
	if c.Timed {
		gc.times = &Times{}
	}
	if c.HasStream {
		gc.stream = d.dev.ForeignStream(c.Stream)
	}
	for _, w := range c.WaitOn {
		if !c.HasStream || w != c.Stream {
			gc.waitOn = append(gc.waitOn, d.dev.ForeignStream(w))
		}
	}
	// Modes the kernels lack (Plan.GPUSupported) run on the CPU engine: not a fallback, the kernels
	// never had them; device sources are copied to the host for it, device outputs uploaded.
	capable := engine.GPUCapable(c.Jobs)
	usable := !breakerOpen() && d.dev.Lost() == "" // a lost device is a breaker that never closes
	if !c.ToDevice {
		if !capable || (c.Placement.Device == "auto" && !onDev && !wantGPU(d, c.Jobs)) {
			return fallback(d, c, nil, index)
		}
		if usable && d.run(gc) == nil {
			r := Result{Ran: "cuda"}
			if gc.times != nil {
				r.GPU = *gc.times
			}
			return r, nil
		}
		state.fallbacks.Add(1)
		return fallback(d, c, nil, index)
	}
	total := 0
	for _, j := range c.Jobs {
		total += j.Plan.OutBytes()
	}
	arr, err := d.newArray(total, gc.stream, index)
	if err != nil {
		// Out of device memory for the output itself: a GPU failure like any other, so it is counted
		// and falls back. The CPU engine needs no device memory at all (the GPU path would need two
		// lanes of working buffers on top of the output), goprep's idle pooled buffers go back to
		// the driver, and only the output is allocated again, after the CPU computed the result.
		recordFailure(err)
		state.fallbacks.Add(1)
		d.mem.trim(0)
		return fallback(d, c, nil, index)
	}
	d.readyOn(arr, gc.stream, c.Stream)
	gc.outDev = arr.Ptr
	if !capable {
		r, err := fallback(d, c, arr, index)
		if err != nil {
			arr.Free()
		}
		return r, err
	}
	if c.Placement.Device == "auto" && !onDev && usable {
		// Host input, device output: preprocessing on the CPU and uploading the (much smaller)
		// result can beat moving the source over PCIe (1080p -> 224 float32: 2.6 MB of staged rows
		// against 0.6 MB of output per image).
		if up, down, cpuBytes := callBytes(c.Jobs); !d.gpuFasterToDevice(cpuBytes, up, down) {
			return fallback(d, c, arr, index)
		}
	}
	if usable && d.run(gc) == nil {
		return Result{Ran: "cuda", Array: arr}, nil
	}
	state.fallbacks.Add(1)
	r, err := fallback(d, c, arr, index)
	if err != nil {
		arr.Free()
	}
	return r, err
}

// readyOn marks a device output produced on the caller's stream s (handle h) as ready there only.
func (d *gpuDev) readyOn(arr *DeviceArray, s Stream, h uint64) {
	if s != nil {
		arr.ready, arr.ReadyHandle = s, h
	}
}

// fallback runs a call on the CPU: device sources are first copied to the host (only each image's
// array's extent), and a device output is uploaded afterwards, into arr, or (c.ToDevice with arr
// nil: the output could not be allocated before) into an array allocated once the result exists.
func fallback(d *gpuDev, c Call, arr *DeviceArray, index int) (Result, error) {
	jobs := append([]engine.Job(nil), c.Jobs...)
	var keep [][]byte
	for i, j := range jobs {
		if !c.DeviceSources {
			break
		}
		es := int64(j.Plan.InDType().Size())
		// The array's whole extent, from its lowest to its highest element over all images.
		lo, n := j.Plan.SourceExtent()
		first, span := int64(lo)*es, int64(n)*es
		host := make([]byte, max(span, 1))
		if err := d.download(host[:span], uint64(int64(uintptr(j.Src))+first)); err != nil {
			return Result{}, engine.Errorf(engine.CodeDeviceUnavailable, "device", "GPU failed and its input could not be copied from it: %v", err)
		}
		keep = append(keep, host)
		jobs[i].Src = unsafe.Add(unsafe.Pointer(unsafe.SliceData(host)), -first)
	}
	if !c.ToDevice {
		return Result{Ran: "cpu"}, engine.CPU{}.Run(jobs)
	}
	total := 0
	for _, j := range jobs {
		total += j.Plan.OutBytes()
	}
	host := make([]byte, max(total, 1))
	at := 0
	for i := range jobs {
		jobs[i].Out = unsafe.Pointer(&host[at])
		at += jobs[i].Plan.OutBytes()
	}
	if err := (engine.CPU{}).Run(jobs); err != nil {
		return Result{}, err
	}
	late := arr == nil
	if late {
		var s Stream
		if c.HasStream {
			s = d.dev.ForeignStream(c.Stream)
		}
		a, err := d.newArray(total, s, index)
		if err != nil {
			// Even the output alone does not fit (other processes hold the memory): there is
			// nowhere on the device to put the result, so say so.
			return Result{}, engine.Errorf(engine.CodeDeviceUnavailable, "device", "no device memory for the %d-byte output, even after the CPU computed it: %v", total, err)
		}
		d.readyOn(a, s, c.Stream)
		arr = a
	}
	if err := d.upload(arr.Ptr, host[:arr.Bytes], arr.ready); err != nil {
		if late { // callers free only the arrays they passed in
			arr.Free()
		}
		return Result{}, engine.Errorf(engine.CodeDeviceUnavailable, "device", "GPU failed and the CPU result could not be copied to it: %v", err)
	}
	_ = keep
	return Result{Ran: "cpu", Array: arr}, nil
}
