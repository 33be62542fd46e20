package engine

import (
	"sync"
	"sync/atomic"
	"unsafe"
)

// simDevice is a GPU made of host memory whose kernels run in emulateLaunch. It is enabled only by
// the test switch SimulateGPU (binding: TestingSimulateGPU), so on machines without a GPU the whole
// GPU path (placement, chunked pipeline, descriptor encoding, kernel arithmetic, pools, fallback and
// breaker) runs and is compared with the CPU engine. Streams are synchronous: each op completes
// before it returns, which is a valid schedule of a real stream.
type simDevice struct {
	mu       sync.Mutex
	allocs   map[uint64][]byte // keeps "device" memory alive and lets MemFree check its argument
	total    uint64
	launches atomic.Int64
	DeviceLoss
}

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

func (s *simDevice) MemAlloc(n int) (uint64, error) { return s.alloc(n), nil }
func (s *simDevice) MemFree(p uint64)               { s.free(p) }
func (s *simDevice) HostAlloc(n int) (unsafe.Pointer, error) {
	return ptr(s.alloc(n)), nil
}
func (s *simDevice) HostFree(p unsafe.Pointer)  { s.free(uint64(uintptr(p))) }
func (s *simDevice) NewStream() (Stream, error) { return new(int), nil }

func (s *simDevice) CopyHtoD(dst uint64, src unsafe.Pointer, n int, _ Stream) error {
	copy(unsafe.Slice((*byte)(ptr(dst)), n), unsafe.Slice((*byte)(src), n))
	return nil
}

func (s *simDevice) CopyDtoH(dst unsafe.Pointer, src uint64, n int, _ Stream) error {
	copy(unsafe.Slice((*byte)(dst), n), unsafe.Slice((*byte)(ptr(src)), n))
	return nil
}

func (s *simDevice) Launch(kernel string, desc uint64, n, _ int, _ Stream) error {
	if takeFault("lost") {
		why := "injected fault: CUDA_ERROR_ILLEGAL_ADDRESS (sticky)"
		s.MarkLost(why)
		return errf(CodeDeviceUnavailable, "device", "%s", why)
	}
	s.launches.Add(1)
	emulateLaunch(kernel, desc, n)
	return nil
}

func (s *simDevice) Sync(Stream) error    { return nil }
func (s *simDevice) SyncAll() error       { return nil }
func (s *simDevice) DestroyStream(Stream) {}

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

// SimulateGPU switches the simulated GPU in (replacing any real devices) or back out. Test-only.
func SimulateGPU(on bool) {
	simMu.Lock()
	defer simMu.Unlock()
	if on == simOn {
		return
	}
	if on {
		gpu.mu.Lock()
		realDevs, realWhy = gpu.devices, gpu.reason
		gpu.mu.Unlock()
		RegisterGPU([]GPUDevice{&simDevice{allocs: map[uint64][]byte{}, total: 16 << 30}}, "")
	} else {
		gpu.mu.Lock()
		gpu.devices, gpu.reason = realDevs, realWhy
		gpu.mu.Unlock()
	}
	simOn = on
}
