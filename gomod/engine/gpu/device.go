package gpu

// This file is the device layer: the Device interface a device implements, the process-wide
// state (registered devices with their pools and streams) and device lookup.

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/goprep/goprep/gomod/engine"
)

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

// Device is one device as the pipelined runner uses it. Every method is called with the device
// bound to the calling OS thread (Bind), and must be safe for concurrent use from several threads.
type Device interface {
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
	// Launch queues one kernel launch, shaped by the engine (LaunchShape).
	Launch(l engine.KernelLaunch, s Stream) error
	Sync(s Stream) error
	// Lost says why the device can no longer be used in this process ("" while it can): after a
	// sticky error (illegal address, failed launch, ECC) a CUDA context never recovers.
	Lost() string
	// MemAllocAsync and MemFreeAsync are stream-ordered (cuMemAllocAsync, cuMemFreeAsync): memory
	// freed on a stream is reused only after the work queued there before the free. Device arrays
	// live in such memory, so freeing one never waits for anything (no cuCtxSynchronize anywhere).
	MemAllocAsync(n int, s Stream) (uint64, error)
	MemFreeAsync(p uint64, s Stream)
	// ForeignStream wraps a caller's stream handle (stream=, a consumer's DLPack stream): goprep
	// queues work on it but never destroys it. Handle 1 is CUDA's legacy default stream.
	ForeignStream(h uint64) Stream
	// StreamWait makes future work on waiter wait for the work queued on s so far (event record and
	// cuStreamWaitEvent), without blocking the host.
	StreamWait(waiter, s Stream) error
	// Current reports whether this device's context is current on the calling OS thread (torch's
	// current device is the CUDA current context).
	Current() bool
	// Mark records a timestamp on s, taken when the work queued there so far has finished (a CUDA
	// event with timing); Elapsed is the ns between two marks once both completed (after Sync);
	// DropMark releases a mark. The pipeline uses them only when a call is timed (the profiler).
	Mark(s Stream) (any, error)
	Elapsed(a, b any) (int64, error)
	DropMark(m any)
}

// DeviceLoss records why a device was lost (its first sticky error). Device implementations embed
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
	dev     Device
	freeMem atomic.Uint64 // NVML free memory, refreshed at most every infoTTL (cost model)
	freeAt  atomic.Int64
	bw      atomic.Uint64 // measured pinned host-to-device bytes/s (float64 bits), 0 until measured
	// measured kernel ns per source+output byte (float64 bits), set with bw
	kernelCost atomic.Uint64
	mem        *devPool
	host       *hostPool
	streams    chan Stream
	sessions   chan struct{}
}

var state = &gpuState{reason: "this goprep build has no CUDA backend (CPU-only)"}

// Register installs the devices a backend found, or records why there are none.
func Register(devs []Device, reason string) {
	state.mu.Lock()
	defer state.mu.Unlock()
	state.devices = nil
	for _, d := range devs {
		state.devices = append(state.devices, &gpuDev{
			dev: d, mem: newDevPool(d, gpuPoolBytes), host: newHostPool(d, 3*gpuLanes*gpuSessions),
			streams: make(chan Stream, 64), sessions: make(chan struct{}, gpuSessions),
		})
	}
	state.reason = reason
	if len(devs) > 0 {
		state.reason = ""
	}
}

// Devices lists the registered GPUs with fresh properties, and the reason when there are none.
func Devices() ([]DeviceInfo, string) {
	state.mu.Lock()
	defer state.mu.Unlock()
	var out []DeviceInfo
	reason := state.reason
	for i, d := range state.devices {
		if why := d.dev.Lost(); why != "" {
			reason = strings.TrimPrefix(reason+fmt.Sprintf("; cuda:%d was lost: %s", i, why), "; ")
			continue
		}
		out = append(out, d.dev.Info())
	}
	return out, reason
}

func device(index int) (*gpuDev, error) {
	state.mu.Lock()
	defer state.mu.Unlock()
	if len(state.devices) == 0 {
		return nil, engine.Errorf(engine.CodeDeviceUnavailable, "device", "no usable GPU: %s", state.reason)
	}
	if index < 0 || index >= len(state.devices) {
		return nil, engine.Errorf(engine.CodeDeviceUnavailable, "device", "cuda:%d does not exist (%d GPU(s))", index, len(state.devices))
	}
	return state.devices[index], nil
}

// upload copies host data to the device: queued on s when given (from pageable memory, which CUDA
// stages before the call returns, so data may be reused at once), else on a stream of goprep's own,
// waited for.
func (d *gpuDev) upload(dst uint64, data []byte, s Stream) error {
	cp := func(s Stream) error { return d.dev.CopyHtoD(dst, unsafe.Pointer(unsafe.SliceData(data)), len(data), s) }
	if s != nil {
		return d.bound(func() error { return cp(s) })
	}
	return d.onStream(cp)
}

// download copies device memory to host memory and waits for it.
func (d *gpuDev) download(dst []byte, src uint64) error {
	if len(dst) == 0 {
		return nil
	}
	return d.onStream(func(s Stream) error { return d.dev.CopyDtoH(unsafe.Pointer(unsafe.SliceData(dst)), src, len(dst), s) })
}

// bound runs f with the device's context current on this OS thread.
func (d *gpuDev) bound(f func() error) error {
	unbind, err := d.dev.Bind()
	if err != nil {
		return err
	}
	defer unbind()
	return f()
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

// AddressRanger is implemented by devices that can tell which allocation holds a device address
// (cuMemGetAddressRange on CUDA; the simulated GPU's own allocation table).
type AddressRanger interface {
	AddressRange(p uint64) (base uint64, size int, err error)
}

// checkSources refuses device sources whose extent (every element the plan reads, all images) is not
// inside one allocation of d. A null or wild pointer, or a claimed shape larger than the memory behind
// it, would otherwise be read as it is: a crash on the simulated GPU, an illegal address that loses a
// CUDA context for the rest of the process. Devices that cannot say (none today) are not checked.
func checkSources(d Device, jobs []engine.Job) error {
	r, ok := d.(AddressRanger)
	if !ok {
		return nil
	}
	for i, j := range jobs {
		if j.Src == nil {
			return engine.Errorf(engine.CodeInvalidArgument, "src", "item %d: the device pointer is null", i)
		}
		es := int64(j.Plan.InDType().Size())
		lo, n := j.Plan.SourceExtent()
		first := int64(uintptr(j.Src)) + int64(lo)*es
		end := first + int64(n)*es
		base, size, err := r.AddressRange(uint64(first))
		if err != nil {
			return engine.Errorf(engine.CodeInvalidArgument, "src", "item %d: address %#x is not in memory allocated on this GPU (%v)", i, first, err)
		}
		if end > int64(base)+int64(size) {
			return engine.Errorf(engine.CodeInvalidArgument, "src",
				"item %d: the array's shape and strides span %d bytes from %#x, past the end of its allocation (%d bytes from %#x)",
				i, end-first, first, size, base)
		}
	}
	return nil
}
