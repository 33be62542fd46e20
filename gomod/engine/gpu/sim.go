package gpu

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/goprep/goprep/gomod/engine"
)

// simDevice is a GPU made of host memory whose kernels are the real kernels/*.cu compiled for the
// CPU (package kernels/cpu, installed with UseSimKernels). It is enabled only by the test switch
// Simulate (binding: TestingSimulateGPU), so on machines without a GPU the whole GPU path
// (placement, chunked pipeline, descriptor encoding, launch shape, the kernel source itself, pools,
// fallback and breaker) runs and is compared with the CPU engine. Streams are synchronous: each op
// completes before it returns, which is a valid schedule of a real stream.
type simDevice struct {
	mu       sync.Mutex
	allocs   map[uint64][]byte // keeps "device" memory alive and lets MemFree check its argument
	total    uint64
	launches atomic.Int64
	syncs    atomic.Int64 // host waits (Sync): tests prove stream= calls make none
	h2d      atomic.Int64 // bytes copied host to device
	freedOn  []Stream     // the stream of each MemFreeAsync, in order
	waits    [][2]Stream  // StreamWait(waiter, on) calls, in order
	DeviceLoss
}

// simForeign is a caller's stream handle on the simulated GPU.
type simForeign uint64

func (s *simDevice) Info() DeviceInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	var used uint64
	for _, b := range s.allocs {
		used += uint64(len(b))
	}
	return DeviceInfo{
		// A fixed UUID in NVML's format, so that devices() carries every documented key here too.
		Name: "goprep simulated GPU (test switch)", UUID: "GPU-00000000-0000-0000-0000-000000000000",
		ComputeCapability: "0.0", TotalMemory: s.total,
		FreeMemory: s.total - min(used, s.total), UtilizationGPU: -1, PCIeGeneration: -1, PCIeWidth: -1,
		Driver: "none", Simulated: true,
	}
}

func (s *simDevice) Bind() (func(), error) { return func() {}, nil }

func (s *simDevice) alloc(n int) uint64 {
	b := make([]byte, n)
	p := uint64(uintptr(unsafe.Pointer(unsafe.SliceData(b))))
	s.mu.Lock()
	s.allocs[p] = b
	s.mu.Unlock()
	return p
}

func (s *simDevice) free(p uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.allocs[p]; !ok {
		panic("simulated GPU: free of memory it did not allocate")
	}
	delete(s.allocs, p)
}

// AddressRange finds the allocation holding p (the simulator checks device sources against its own
// allocations, as cuMemGetAddressRange does on a GPU).
func (s *simDevice) AddressRange(p uint64) (uint64, int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for base, b := range s.allocs {
		if p >= base && p < base+uint64(len(b)) {
			return base, len(b), nil
		}
	}
	return 0, 0, errors.New("no allocation of the simulated GPU holds it")
}

func (s *simDevice) MemAlloc(n int) (uint64, error) { return s.alloc(n), nil }
func (s *simDevice) MemFree(p uint64)               { s.free(p) }
func (s *simDevice) HostAlloc(n int) (unsafe.Pointer, error) {
	return ptr(s.alloc(n)), nil
}
func (s *simDevice) HostFree(p unsafe.Pointer)  { s.free(uint64(uintptr(p))) }
func (s *simDevice) NewStream() (Stream, error) { return new(int), nil }

func (s *simDevice) CopyHtoD(dst uint64, src unsafe.Pointer, n int, _ Stream) error {
	s.h2d.Add(int64(n))
	copy(unsafe.Slice((*byte)(ptr(dst)), n), unsafe.Slice((*byte)(src), n))
	return nil
}

func (s *simDevice) CopyDtoH(dst unsafe.Pointer, src uint64, n int, _ Stream) error {
	copy(unsafe.Slice((*byte)(dst), n), unsafe.Slice((*byte)(ptr(src)), n))
	return nil
}

func (s *simDevice) Launch(l engine.KernelLaunch, _ Stream) error {
	if takeFault("lost") {
		why := "injected fault: CUDA_ERROR_ILLEGAL_ADDRESS (sticky)"
		s.MarkLost(why)
		return engine.Errorf(engine.CodeDeviceUnavailable, "device", "%s", why)
	}
	s.launches.Add(1)
	if err := simKernels(l.Kernel, l.Grid, l.Block, l.Desc, l.N); err != nil {
		return engine.Errorf(engine.CodeInternal, "", "simulated launch: %v", err)
	}
	return nil
}

// SimKernels runs a kernel launch on the CPU: kernels/cpu.Launch.
type SimKernels func(kernel string, grid, block [3]int, desc uint64, n int) error

var simKernels SimKernels

// UseSimKernels installs the simulated GPU's kernels. The engine's tests install kernels/cpu; the
// extension does when built with -tags cpukernel (cpukernel.go).
func UseSimKernels(k SimKernels) { simKernels = k }

// SimKernelsBuiltIn reports whether the simulated GPU has kernels to run.
func SimKernelsBuiltIn() bool { return simKernels != nil }

func ptr(a uint64) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&a)) }

func (s *simDevice) Sync(Stream) error    { s.syncs.Add(1); return nil }
func (s *simDevice) DestroyStream(Stream) {}

func (s *simDevice) MemAllocAsync(n int, _ Stream) (uint64, error) { return s.alloc(n), nil }
func (s *simDevice) MemFreeAsync(p uint64, st Stream) {
	s.free(p)
	s.mu.Lock()
	s.freedOn = append(s.freedOn, st)
	s.mu.Unlock()
}
func (s *simDevice) ForeignStream(h uint64) Stream { return simForeign(h) }
func (s *simDevice) StreamWait(waiter, on Stream) error {
	s.mu.Lock()
	s.waits = append(s.waits, [2]Stream{waiter, on})
	s.mu.Unlock()
	return nil
}
func (s *simDevice) Current() bool { return true }

// Mark is the time now: the simulated streams are synchronous, so every operation queued before has
// finished, and the marks around one time exactly its real (CPU) execution.
func (s *simDevice) Mark(Stream) (any, error)        { return time.Now().UnixNano(), nil }
func (s *simDevice) Elapsed(a, b any) (int64, error) { return b.(int64) - a.(int64), nil }
func (s *simDevice) DropMark(any)                    {}

// NominalH2D and NominalKernelNsPerByte: the simulated GPU's "transfers" are memcpy and its kernels
// run on the CPU, so it reports a PCIe 4 x16 link's practical 25 GB/s and a kernel streaming at
// 1 TB/s instead of having them measured (the cost model then decides as on such a GPU).
func (s *simDevice) NominalH2D() float64             { return 25e9 }
func (s *simDevice) NominalKernelNsPerByte() float64 { return 0.001 }

// allocated reports live allocations (tests check that pools give everything back).
func (s *simDevice) allocated() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.allocs)
}

var (
	simMu    sync.Mutex
	realDevs []*gpuDev
	realWhy  string
	simOn    bool
)

// Simulate switches the simulated GPU in (replacing any real devices) or back out. Test-only. It
// fails when this build has no kernels for it (an extension built without -tags cpukernel).
func Simulate(on bool) error {
	simMu.Lock()
	defer simMu.Unlock()
	if on && simKernels == nil {
		return engine.Errorf(engine.CodeDeviceUnavailable, "", "the simulated GPU needs the kernels compiled for the CPU: "+
			"this extension was built without -tags cpukernel (no C++ compiler found, or GOPREP_CPUKERNEL=0)")
	}
	if on == simOn {
		return nil
	}
	if on {
		state.mu.Lock()
		realDevs, realWhy = state.devices, state.reason
		state.mu.Unlock()
		Register([]Device{&simDevice{allocs: map[uint64][]byte{}, total: 16 << 30}}, "")
	} else {
		state.mu.Lock()
		state.devices, state.reason = realDevs, realWhy
		state.mu.Unlock()
	}
	simOn = on
	return nil
}

// SimTrace is what the simulated GPU saw of stream ordering: host waits, stream waits (waiter, on)
// and the stream of each stream-ordered free. Caller streams appear as their handles, goprep's own
// streams as -1. Tests use it to prove that stream= calls never wait on the host and that frees and
// exports follow the protocols.
type SimTrace struct {
	Syncs   int64      `json:"syncs"`
	Waits   [][2]int64 `json:"waits"`
	FreedOn []int64    `json:"freed_on"`
}

// SimulatedTrace reports the simulated GPU's trace (zero when it is off).
func SimulatedTrace() SimTrace {
	state.mu.Lock()
	var s *simDevice
	if simOn && len(state.devices) > 0 {
		s, _ = state.devices[0].dev.(*simDevice)
	}
	state.mu.Unlock()
	t := SimTrace{Waits: [][2]int64{}, FreedOn: []int64{}}
	if s == nil {
		return t
	}
	h := func(st Stream) int64 {
		if f, ok := st.(simForeign); ok {
			return int64(f)
		}
		return -1
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t.Syncs = s.syncs.Load()
	for _, w := range s.waits {
		t.Waits = append(t.Waits, [2]int64{h(w[0]), h(w[1])})
	}
	for _, f := range s.freedOn {
		t.FreedOn = append(t.FreedOn, h(f))
	}
	return t
}
