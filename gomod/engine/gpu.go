package engine

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// This file is the device-independent half of the GPU backend: choosing CPU or GPU per call, running a
// call as pipelined chunks (stage -> copy in -> fused kernel -> copy out), pooled device and pinned
// memory, CPU fallback and the circuit breaker. The CUDA half (gomod/cuda, built with -tags cuda)
// implements GPUDevice with the driver API; gpu_sim.go implements it in host memory for tests.

// DeviceInfo describes one GPU, as goprep.devices() reports it.
type DeviceInfo struct {
	Index             int    `json:"index"`
	Name              string `json:"name"`
	UUID              string `json:"uuid,omitempty"`
	ComputeCapability string `json:"compute_capability"`
	TotalMemory       uint64 `json:"total_memory"`
	FreeMemory        uint64 `json:"free_memory"`
	UtilizationGPU    int    `json:"utilization_gpu"` // percent, -1 when NVML cannot say
	PCIeGeneration    int    `json:"pcie_generation"` // -1 when unknown
	PCIeWidth         int    `json:"pcie_width"`
	Driver            string `json:"driver"`
	Simulated         bool   `json:"simulated"`
}

// Stream is a device stream handle, opaque to this file.
type Stream any

// GPUDevice is one device as the pipelined runner uses it. Every method is called with the device
// bound to the calling OS thread (Bind), and must be safe for concurrent use from several threads.
type GPUDevice interface {
	Info() DeviceInfo
	// Bind makes the device's context current on the calling goroutine's OS thread, locking the
	// goroutine to it (CUDA contexts are per thread; goroutines migrate); the returned func undoes it.
	Bind() (func(), error)
	MemAlloc(n int) (uint64, error)
	MemFree(p uint64)
	HostAlloc(n int) (unsafe.Pointer, error) // page-locked host memory
	HostFree(p unsafe.Pointer)
	NewStream() (Stream, error)
	DestroyStream(s Stream)
	CopyHtoD(dst uint64, src unsafe.Pointer, n int, s Stream) error
	CopyDtoH(dst unsafe.Pointer, src uint64, n int, s Stream) error
	// Launch runs kernel over n gp_image descriptors starting at device address desc.
	Launch(kernel string, desc uint64, n, pixels int, s Stream) error
	Sync(s Stream) error
	// Lost says why the device can no longer be used in this process ("" while it can): after a
	// sticky error (illegal address, failed launch, ECC) a CUDA context never recovers.
	Lost() string
	// SyncAll waits for all work in the device's context, including other libraries' streams (a
	// framework may still be reading a DeviceArray it imported through DLPack).
	SyncAll() error
}

// DeviceLoss records why a device was lost (its first sticky error). GPUDevice implementations embed
// it to provide Lost.
type DeviceLoss struct{ why atomic.Pointer[string] }

// Lost is the recorded reason, "" while the device is usable.
func (l *DeviceLoss) Lost() string {
	if p := l.why.Load(); p != nil {
		return *p
	}
	return ""
}

// MarkLost records why; the first reason stays.
func (l *DeviceLoss) MarkLost(why string) { l.why.CompareAndSwap(nil, &why) }

// gpuState is the process-wide GPU side: devices, their pools, counters and the breaker.
type gpuState struct {
	mu      sync.Mutex
	devices []*gpuDev
	reason  string // why there is no device, when there is none

	calls, fallbacks, failures, trips atomic.Int64
	consecutive                       atomic.Int64
	openUntil                         atomic.Int64 // unix nanos; breaker open while now < openUntil
	lastErr                           atomic.Value // string
	fault                             atomic.Pointer[gpuFault]
}

type gpuDev struct {
	dev      GPUDevice
	freeMem  atomic.Uint64 // NVML free memory, refreshed at most every infoTTL (cost model)
	freeAt   atomic.Int64
	mem      *devPool
	host     *hostPool
	streams  chan Stream
	sessions chan struct{}
}

var gpu = &gpuState{reason: "this goprep build has no CUDA backend (CPU-only)"}

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

// RegisterGPU installs the devices a backend found, or records why there are none.
func RegisterGPU(devs []GPUDevice, reason string) {
	gpu.mu.Lock()
	defer gpu.mu.Unlock()
	gpu.devices = nil
	for _, d := range devs {
		gpu.devices = append(gpu.devices, &gpuDev{
			dev: d, mem: newDevPool(d, gpuPoolBytes), host: newHostPool(d, 6*gpuSessions),
			streams: make(chan Stream, 64), sessions: make(chan struct{}, gpuSessions),
		})
	}
	gpu.reason = reason
	if len(devs) > 0 {
		gpu.reason = ""
	}
}

// Devices lists the registered GPUs with fresh properties, and the reason when there are none.
func Devices() ([]DeviceInfo, string) {
	gpu.mu.Lock()
	defer gpu.mu.Unlock()
	var out []DeviceInfo
	reason := gpu.reason
	for i, d := range gpu.devices {
		if why := d.dev.Lost(); why != "" {
			reason = strings.TrimPrefix(reason+fmt.Sprintf("; cuda:%d was lost: %s", i, why), "; ")
			continue
		}
		out = append(out, d.dev.Info())
	}
	return out, reason
}

func device(index int) (*gpuDev, error) {
	gpu.mu.Lock()
	defer gpu.mu.Unlock()
	if len(gpu.devices) == 0 {
		return nil, errf(CodeDeviceUnavailable, "device", "no usable GPU: %s", gpu.reason)
	}
	if index < 0 || index >= len(gpu.devices) {
		return nil, errf(CodeDeviceUnavailable, "device", "cuda:%d does not exist (%d GPU(s))", index, len(gpu.devices))
	}
	return gpu.devices[index], nil
}

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
}

// Stats reports the counters.
func Stats() GPUStats {
	s := GPUStats{
		Calls: gpu.calls.Load(), Failures: gpu.failures.Load(), Fallbacks: gpu.fallbacks.Load(),
		BreakerTrips: gpu.trips.Load(), BreakerOpen: breakerOpen(), PoolLimit: int64(gpuPoolBytes),
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

// gpuFault is the test-only fault injection switch: the next Count GPU calls fail with Kind.
type gpuFault struct {
	Kind  string
	Count atomic.Int64
}

// InjectGPUFault makes the next count GPU calls fail at kernel launch ("launch"), at device
// allocation ("oom"), or with a sticky error that loses the simulated device ("lost"); count 0 clears
// it. Tests use it to prove fallback, the breaker and device loss without a GPU.
func InjectGPUFault(kind string, count int) error {
	if kind != "oom" && kind != "launch" && kind != "lost" {
		return errf(CodeInvalidArgument, "kind", "must be \"oom\", \"launch\" or \"lost\", got %q", kind)
	}
	f := &gpuFault{Kind: kind}
	f.Count.Store(int64(count))
	gpu.fault.Store(f)
	return nil
}

// ResetGPUStats clears the counters and closes the breaker (tests).
func ResetGPUStats() {
	gpu.calls.Store(0)
	gpu.fallbacks.Store(0)
	gpu.failures.Store(0)
	gpu.trips.Store(0)
	gpu.consecutive.Store(0)
	gpu.openUntil.Store(0)
	gpu.lastErr.Store("")
	gpu.fault.Store(nil)
}

// SetBreakerCooldown changes the breaker's cool-down (tests).
func SetBreakerCooldown(d time.Duration) { breakerCooldown = d }

func takeFault(kind string) bool {
	f := gpu.fault.Load()
	if f == nil || f.Kind != kind {
		return false
	}
	return f.Count.Add(-1) >= 0
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
		if d, ok = wantGPU(jobs); !ok || !gpuCapable(jobs) { // gpuCapable: Plan.GPUSupported
			return "cpu", CPU{}.Run(jobs)
		}
	default:
		var err error
		if d, err = device(pl.Index); err != nil {
			return "", err
		}
		if !gpuCapable(jobs) { // modes the kernels lack run on the CPU engine (Plan.GPUSupported)
			return "cpu", CPU{}.Run(jobs)
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

// DeviceArray is an output kept in device memory.
type DeviceArray struct {
	Ptr    uint64
	Bytes  int
	Device int
	buf    devBuf
	dev    *gpuDev
	mu     sync.Mutex // Free waits for a CopyToHost in progress
	freed  bool
}

// Free returns the memory to the device pool; later calls do nothing. It first waits for all work in
// the context: a framework that imported the array through DLPack may have kernels still reading it
// on its own streams, and the pool hands the buffer to the next call at once.
func (a *DeviceArray) Free() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.freed {
		return
	}
	a.freed = true
	_ = a.dev.dev.SyncAll() // on error the context is broken anyway; the buffer goes back regardless
	a.dev.mem.release(a.buf)
}

// ExecuteToDevice runs jobs (whose Out fields are ignored) into one new device array, outputs in job
// order. If the GPU fails, the CPU computes the result and it is uploaded, so the call still succeeds
// unless the device cannot even take a copy.
func ExecuteToDevice(jobs []Job, index int) (*DeviceArray, string, error) {
	d, err := device(index)
	if err != nil {
		return nil, "", err
	}
	total := 0
	for _, j := range jobs {
		total += j.Plan.OutBytes()
	}
	buf, err := d.mem.get(max(total, 1))
	if err != nil {
		return nil, "", err
	}
	arr := &DeviceArray{Ptr: buf.ptr, Bytes: total, Device: index, buf: buf, dev: d}
	capable := gpuCapable(jobs) // modes the kernels lack are computed on the CPU, then uploaded
	if capable && !breakerOpen() && d.dev.Lost() == "" {
		if err := d.run(jobs, buf.ptr); err == nil {
			return arr, "cuda", nil
		}
	}
	if capable {
		gpu.fallbacks.Add(1) // not counted as a fallback when the kernels never had the mode
	}
	host := make([]byte, max(total, 1))
	cj := append([]Job(nil), jobs...)
	at := 0
	for i := range cj {
		cj[i].Out = unsafe.Pointer(&host[at])
		at += cj[i].Plan.OutBytes()
	}
	if err := (CPU{}).Run(cj); err != nil {
		arr.Free()
		return nil, "", err
	}
	if err := d.upload(buf.ptr, host[:total]); err != nil {
		arr.Free()
		return nil, "", errf(CodeDeviceUnavailable, "device", "GPU failed and the CPU result could not be copied to it: %v", err)
	}
	return arr, "cpu", nil
}

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

func (d *gpuDev) upload(dst uint64, data []byte) error {
	return d.onStream(func(s Stream) error {
		return d.dev.CopyHtoD(dst, unsafe.Pointer(unsafe.SliceData(data)), len(data), s)
	})
}

// onStream runs f with the device bound and a stream, and waits for the stream: one synchronous
// operation outside the pipeline.
func (d *gpuDev) onStream(f func(s Stream) error) error {
	unbind, err := d.dev.Bind()
	if err != nil {
		return err
	}
	defer unbind()
	s, err := d.stream()
	if err != nil {
		return err
	}
	defer d.putStream(s)
	if err := f(s); err != nil {
		return err
	}
	return d.dev.Sync(s)
}

func (d *gpuDev) stream() (Stream, error) {
	select {
	case s := <-d.streams:
		return s, nil
	default:
		return d.dev.NewStream()
	}
}

func (d *gpuDev) putStream(s Stream) {
	select {
	case d.streams <- s:
	default: // more streams than calls in flight ever need
		d.dev.DestroyStream(s)
	}
}

// run executes jobs on the device: host outputs when outDev == 0, else consecutive outputs in device
// memory at outDev. Errors are counted for the breaker; a panic becomes an error.
func (d *gpuDev) run(jobs []Job, outDev uint64) (err error) {
	gpu.calls.Add(1)
	defer func() {
		if r := recover(); r != nil {
			err = errf(CodeInternal, "", "GPU backend panic: %v", r)
		}
		if err != nil {
			recordFailure(err)
		} else {
			gpu.consecutive.Store(0)
		}
	}()
	// All buffers of a call are taken under one session slot, so concurrent calls cannot deadlock
	// holding part of what they need.
	d.sessions <- struct{}{}
	defer func() { <-d.sessions }()
	unbind, err := d.dev.Bind()
	if err != nil {
		return err
	}
	defer unbind()
	return d.pipeline(jobs, outDev)
}

// unit is one image of a call.
type unit struct {
	job      int
	src      unsafe.Pointer // the image's lowest source element
	srcBytes int
	out      unsafe.Pointer // host output (nil for device output)
	outDev   uint64         // device output when the call keeps results on the GPU
	outBytes int
}

// lane is one of the two pipeline slots: its stream, pinned staging and device buffers, and the units
// of the chunk in flight on it.
type lane struct {
	s               Stream
	hostIn, hostOut hostBuf
	hostArena       hostBuf
	devIn, devOut   devBuf
	devArena        devBuf
	units           []unit
	busy            bool
}

// pipeline runs units in chunks on two lanes: while the GPU copies and computes chunk k on one lane,
// the CPU stages chunk k+1 into the other lane's pinned buffer, and copies chunk k-1's output out.
func (d *gpuDev) pipeline(jobs []Job, outDev uint64) (err error) {
	var units []unit
	at := outDev
	maxIn, maxOut := 0, 0
	for ji, j := range jobs {
		p := j.Plan
		lo, n := p.ImageSpan()
		es := p.InDType().Size()
		for img := 0; img < p.N; img++ {
			u := unit{job: ji, srcBytes: n * es, outBytes: p.OutImageBytes()}
			u.src = unsafe.Add(j.Src, (p.ImageOrigin(img)+lo)*es)
			if outDev == 0 {
				u.out = unsafe.Add(j.Out, img*u.outBytes)
			} else {
				u.outDev = at
				at += uint64(u.outBytes)
			}
			maxIn, maxOut = max(maxIn, u.srcBytes), max(maxOut, u.outBytes)
			units = append(units, u)
		}
	}
	chunkIn, chunkOut := max(gpuChunkBytes, maxIn), max(gpuChunkBytes, maxOut)
	var lanes [2]lane
	defer func() {
		for i := range lanes {
			l := &lanes[i]
			if l.s != nil {
				if e := d.dev.Sync(l.s); e != nil && err == nil {
					err = e
				}
				d.putStream(l.s)
			}
			d.host.release(l.hostIn)
			d.host.release(l.hostOut)
			d.host.release(l.hostArena)
			d.mem.release(l.devIn)
			d.mem.release(l.devOut)
			d.mem.release(l.devArena)
		}
	}()
	for i := range lanes {
		l := &lanes[i]
		if l.s, err = d.stream(); err != nil {
			return err
		}
		if l.hostIn, err = d.host.get(chunkIn); err != nil {
			return err
		}
		if l.devIn, err = d.mem.get(chunkIn); err != nil {
			return err
		}
		if outDev == 0 {
			if l.hostOut, err = d.host.get(chunkOut); err != nil {
				return err
			}
			if l.devOut, err = d.mem.get(chunkOut); err != nil {
				return err
			}
		}
	}
	k := 0
	for start := 0; start < len(units); k++ {
		// Greedy chunk: as many images as fit both budgets, one source dtype per launch, and at most
		// maxChunkImages descriptors (many tiny images must not make a huge descriptor table).
		end, in, out := start, 0, 0
		dt := jobs[units[start].job].Plan.InDType()
		for end < len(units) {
			u := units[end]
			if end > start && (in+u.srcBytes > chunkIn || out+u.outBytes > chunkOut || jobs[u.job].Plan.InDType() != dt ||
				end-start >= maxChunkImages) {
				break
			}
			in, out = in+u.srcBytes, out+u.outBytes
			end++
		}
		l := &lanes[k%2]
		if err := d.finish(l); err != nil {
			return err
		}
		l.units = units[start:end]
		if err := d.launch(jobs, l, outDev != 0); err != nil {
			return err
		}
		start = end
	}
	for i := range lanes {
		if err := d.finish(&lanes[(k+i)%2]); err != nil {
			return err
		}
	}
	return nil
}

// finish waits for a lane's chunk and copies its outputs from pinned memory to the caller's arrays.
func (d *gpuDev) finish(l *lane) error {
	if !l.busy {
		return nil
	}
	l.busy = false
	if err := d.dev.Sync(l.s); err != nil {
		return err
	}
	var cp []copyPair
	at := 0
	for _, u := range l.units {
		if u.out != nil {
			cp = append(cp, copyPair{unsafe.Slice((*byte)(u.out), u.outBytes), l.hostOut[at : at+u.outBytes]})
			at += u.outBytes
		}
	}
	parallelCopy(cp)
	return nil
}

type copyPair struct{ dst, src []byte }

// parallelCopy does the staging copies between NumPy memory and pinned buffers on NumThreads
// goroutines: one core copies ~5-10 GB/s, less than a PCIe 4/5 link moves, so a single-threaded
// copy would cap GPU throughput on large batches.
func parallelCopy(pairs []copyPair) {
	total := 0
	for _, p := range pairs {
		total += len(p.dst)
	}
	threads := min(NumThreads(), total/(1<<20)+1, len(pairs))
	if threads <= 1 {
		for _, p := range pairs {
			copy(p.dst, p.src)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < len(pairs); i = int(next.Add(1) - 1) {
				copy(pairs[i].dst, pairs[i].src)
			}
		}()
	}
	wg.Wait()
}

// launch stages one chunk and queues its copy in, kernel and copy out on the lane's stream.
func (d *gpuDev) launch(jobs []Job, l *lane, toDevice bool) error {
	images := make([]BatchImage, len(l.units))
	cp := make([]copyPair, len(l.units))
	in, out := 0, 0
	for i, u := range l.units {
		cp[i] = copyPair{l.hostIn[in : in+u.srcBytes], unsafe.Slice((*byte)(u.src), u.srcBytes)}
		images[i] = BatchImage{Plan: jobs[u.job].Plan, SrcDev: l.devIn.ptr + uint64(in), OutDev: u.outDev}
		if !toDevice {
			images[i].OutDev = l.devOut.ptr + uint64(out)
		}
		in += u.srcBytes
		out += u.outBytes
	}
	parallelCopy(cp)
	b, err := NewDeviceBatch(images)
	if err != nil {
		return err
	}
	if l.devArena.size < b.ArenaBytes() {
		d.mem.release(l.devArena)
		l.devArena = devBuf{}
		if l.devArena, err = d.mem.get(b.ArenaBytes()); err != nil {
			return err
		}
	}
	arena := b.Encode(l.devArena.ptr)
	if takeFault("launch") {
		return errf(CodeDeviceUnavailable, "device", "injected fault: kernel launch failed (CUDA_ERROR_LAUNCH_FAILED)")
	}
	// Asynchronous copies read page-locked memory: the tables go through a pinned buffer as well.
	if len(l.hostArena) < len(arena) {
		d.host.release(l.hostArena)
		l.hostArena = nil
		if l.hostArena, err = d.host.get(len(arena)); err != nil {
			return err
		}
	}
	copy(l.hostArena, arena)
	l.busy = true
	if err := d.dev.CopyHtoD(l.devIn.ptr, unsafe.Pointer(unsafe.SliceData(l.hostIn)), in, l.s); err != nil {
		return err
	}
	if err := d.dev.CopyHtoD(l.devArena.ptr, unsafe.Pointer(unsafe.SliceData(l.hostArena)), len(arena), l.s); err != nil {
		return err
	}
	pixels := 0
	for _, im := range images {
		pixels = max(pixels, im.Plan.OutH*im.Plan.OutW)
	}
	if err := d.dev.Launch(b.Kernel, l.devArena.ptr+uint64(b.DescOffset()), len(images), pixels, l.s); err != nil {
		return err
	}
	if !toDevice {
		return d.dev.CopyDtoH(unsafe.Pointer(unsafe.SliceData(l.hostOut)), l.devOut.ptr, out, l.s)
	}
	return nil
}

// CopyToHost copies the array into host memory (synchronously), after all work in the context (a
// framework may have written into the array on its own streams).
func (a *DeviceArray) CopyToHost(dst []byte) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.freed {
		return errf(CodeInvalidArgument, "array", "device array already freed")
	}
	if err := a.dev.dev.SyncAll(); err != nil {
		return err
	}
	return a.dev.onStream(func(s Stream) error {
		return a.dev.dev.CopyDtoH(unsafe.Pointer(unsafe.SliceData(dst)), a.Ptr, len(dst), s)
	})
}
