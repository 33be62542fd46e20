//go:build cuda

package cuda

// #include <cuda.h>
// #include <stdlib.h>
import "C"

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"unsafe"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"gorgonia.org/cu"

	"github.com/goprep/goprep/gomod/engine"
	"github.com/goprep/goprep/gomod/engine/gpu"
	"github.com/goprep/goprep/kernels"
)

// device is one CUDA GPU as gpu.Device: the driver API through gorgonia.org/cu (plus the two
// calls it lacks, page-locked host allocation and the PCI bus id, through cgo), properties and health
// through NVML. All work runs in the device's primary context, made current on whichever OS thread a
// call runs (Bind), so any number of Python threads can drive it at once.
type device struct {
	ordinal int
	dev     cu.Device
	busID   string

	ctxMu sync.Mutex
	ctx   cu.CUContext // the primary context, retained on first use only (never on unused GPUs)
	ctxOK bool

	gpu.DeviceLoss // set by the first sticky error

	loadMu sync.Mutex
	fns    map[string]cu.Function // nil until the module loaded
}

// kernelNames are the entry points preprocess.cu must define.
var kernelNames = func() []string {
	var out []string
	for _, dt := range []engine.DType{engine.U8, engine.F32} {
		for c := 1; c <= 4; c++ {
			out = append(out, engine.KernelName(dt, c))
		}
	}
	return append(out, engine.YUVKernelNames()...)
}()

func deviceError(op string, err error) error {
	return engine.Errorf(engine.CodeDeviceUnavailable, "device", "%s: %v", op, err)
}

// sticky are the CUDA errors after which a context is unusable for the rest of the process.
var sticky = []error{cu.IllegalAddress, cu.LaunchFailed, cu.HardwareStackError, cu.IllegalInstruction,
	cu.MisalignedAddress, cu.InvalidAddressSpace, cu.InvalidPc, cu.EccUncorrectable, cu.Assert, cu.ContextIsDestroyed}

// fail wraps a driver error and records a sticky one: the engine then stops using the device.
func (d *device) fail(op string, err error) error {
	if slices.Contains(sticky, err) {
		d.MarkLost(op + ": " + err.Error())
	}
	return deviceError(op, err)
}

// probe finds the usable devices, or says why there are none.
func probe() ([]gpu.Device, string) {
	if ok, why := DriverStatus(); !ok {
		return nil, why
	}
	n, err := cu.NumDevices()
	if err != nil {
		return nil, "cuDeviceGetCount failed: " + err.Error()
	}
	if n == 0 {
		return nil, "the CUDA driver reports no devices"
	}
	var devs []gpu.Device
	var why []string
	for i := 0; i < n; i++ {
		d, err := openDevice(i)
		if err != nil {
			why = append(why, err.Error())
			continue
		}
		devs = append(devs, d)
	}
	return devs, strings.Join(why, "; ")
}

func openDevice(i int) (*device, error) {
	dev, err := cu.GetDevice(i)
	if err != nil {
		return nil, deviceError("cuDeviceGet", err)
	}
	d := &device{ordinal: i, dev: dev}
	var buf [32]C.char
	if C.cuDeviceGetPCIBusId(&buf[0], C.int(len(buf)), C.CUdevice(dev)) == C.CUDA_SUCCESS {
		d.busID = C.GoString(&buf[0])
	}
	return d, nil
}

func (d *device) Info() gpu.DeviceInfo {
	info := gpu.DeviceInfo{Index: d.ordinal, UtilizationGPU: -1, PCIeGeneration: -1, PCIeWidth: -1}
	info.Name, _ = d.dev.Name()
	if major, minor, err := d.dev.ComputeCapability(); err == nil {
		info.ComputeCapability = fmt.Sprintf("%d.%d", major, minor)
	}
	if t, err := d.dev.TotalMem(); err == nil {
		info.TotalMemory = uint64(t)
	}
	v := cu.Version()
	info.Driver = fmt.Sprintf("CUDA %d.%d", v/1000, v%1000/10)
	// Memory from cuMemGetInfo in the device's own context, which is right under MIG (NVML's figures
	// by PCI bus are the whole GPU's); only once the device is in use, so that listing devices does
	// not retain a context on every GPU.
	d.ctxMu.Lock()
	used := d.ctxOK
	d.ctxMu.Unlock()
	if used {
		_ = d.bound(func() error {
			var free, total C.size_t
			if C.cuMemGetInfo(&free, &total) == C.CUDA_SUCCESS {
				info.FreeMemory, info.TotalMemory = uint64(free), uint64(total)
			}
			return nil
		})
	}
	if ok, _ := NVMLStatus(); ok && d.busID != "" {
		if h, ret := nvml.DeviceGetHandleByPciBusId(d.busID); ret == nvml.SUCCESS {
			if u, ret := h.GetUtilizationRates(); ret == nvml.SUCCESS {
				info.UtilizationGPU = int(u.Gpu)
			}
			if g, ret := h.GetCurrPcieLinkGeneration(); ret == nvml.SUCCESS {
				info.PCIeGeneration = g
			}
			if w, ret := h.GetCurrPcieLinkWidth(); ret == nvml.SUCCESS {
				info.PCIeWidth = w
			}
			if u, ret := h.GetUUID(); ret == nvml.SUCCESS {
				info.UUID = u
			}
			if v, ret := nvml.SystemGetDriverVersion(); ret == nvml.SUCCESS {
				info.Driver = v + " (" + info.Driver + ")"
			}
		}
	}
	return info
}

// Bind locks the goroutine to its OS thread and makes the primary context current there: CUDA
// contexts are per thread and goroutines migrate between threads, so every driver call of a GPU call
// happens inside one Bind. The thread's previous context is restored afterwards, so a Python thread
// that also uses PyTorch or CuPy finds its own device current again.
func (d *device) Bind() (func(), error) {
	unbind, err := d.enter()
	if err != nil {
		return nil, err
	}
	if err := d.load(); err != nil {
		unbind()
		return nil, err
	}
	return unbind, nil
}

// context retains the primary context on first use.
func (d *device) context() (cu.CUContext, error) {
	d.ctxMu.Lock()
	defer d.ctxMu.Unlock()
	if !d.ctxOK {
		ctx, err := d.dev.RetainPrimaryCtx()
		if err != nil {
			return cu.CUContext{}, deviceError("cuDevicePrimaryCtxRetain", err)
		}
		d.ctx, d.ctxOK = ctx, true
	}
	return d.ctx, nil
}

// enter makes the context current on this OS thread and returns how to undo it.
func (d *device) enter() (func(), error) {
	ctx, err := d.context()
	if err != nil {
		return nil, err
	}
	runtime.LockOSThread()
	prev, err := cu.CurrentContext()
	if err != nil {
		prev = cu.CUContext{}
	}
	if err := cu.SetCurrentContext(ctx); err != nil {
		runtime.UnlockOSThread()
		return nil, deviceError("cuCtxSetCurrent", err)
	}
	return func() {
		_ = cu.SetCurrentContext(prev) // the zero context unbinds: the thread had none before
		runtime.UnlockOSThread()
	}, nil
}

// bound runs f with the context current: allocation and free calls can come from any thread, e.g.
// a Python finaliser releasing a DeviceArray.
func (d *device) bound(f func() error) error {
	unbind, err := d.enter()
	if err != nil {
		return err
	}
	defer unbind()
	return f()
}

// load JIT-compiles the embedded PTX once per device (the driver caches the result on disk). A failed
// load is retried on the next call: it can be transient (out of memory while the JIT runs).
func (d *device) load() error {
	d.loadMu.Lock()
	defer d.loadMu.Unlock()
	if d.fns != nil {
		return nil
	}
	fns := map[string]cu.Function{}
	for _, stem := range kernels.Stems() {
		ptx, _ := kernels.PTX(stem)
		// cuModuleLoadDataEx with the JIT's error log, so that a failed JIT says why.
		elog := &cu.JITErrorLogBuffer{Buffer: make([]byte, 8192)}
		mod, err := cu.LoadDataEx(ptx, elog)
		if err != nil {
			why := strings.TrimRight(string(elog.Buffer[:max(0, strings.IndexByte(string(elog.Buffer), 0))]), "\n")
			return engine.Errorf(engine.CodeDeviceUnavailable, "device", "loading kernels/ptx/%s.ptx (needs driver %s or newer): %v: %s",
				stem, kernels.MinDriver(), err, why)
		}
		for _, name := range kernelNames {
			if fn, err := mod.Function(name); err == nil {
				fns[name] = fn
			}
		}
	}
	for _, name := range kernelNames {
		if _, ok := fns[name]; !ok {
			return engine.Errorf(engine.CodeInternal, "", "kernel %s is missing from the embedded PTX", name)
		}
	}
	d.fns = fns
	return nil
}

func (d *device) MemAlloc(n int) (p uint64, err error) {
	err = d.bound(func() error {
		dp, err := cu.MemAlloc(int64(n))
		if err != nil {
			return d.fail("cuMemAlloc", err)
		}
		p = uint64(dp)
		return nil
	})
	return p, err
}

// AddressRange is cuMemGetAddressRange: the allocation holding p (gpu.checkSources checks device
// sources against it before any copy or launch).
func (d *device) AddressRange(p uint64) (base uint64, size int, err error) {
	err = d.bound(func() error {
		s, b, e := cu.DevicePtr(p).AddressRange()
		base, size = uint64(b), int(s)
		return e
	})
	return base, size, err
}

func (d *device) MemFree(p uint64) {
	_ = d.bound(func() error { return cu.MemFree(cu.DevicePtr(p)) })
}

func (d *device) HostAlloc(n int) (p unsafe.Pointer, err error) {
	err = d.bound(func() error {
		if r := C.cuMemAllocHost(&p, C.size_t(n)); r != C.CUDA_SUCCESS {
			return engine.Errorf(engine.CodeDeviceUnavailable, "device", "cuMemAllocHost(%d) failed with CUresult %d", n, int(r))
		}
		return nil
	})
	return p, err
}

func (d *device) HostFree(p unsafe.Pointer) {
	_ = d.bound(func() error { return cu.MemFreeHost(p) })
}

// cstream is a stream's driver handle (cu.Stream wraps exactly one CUstream).
func cstream(s gpu.Stream) C.CUstream {
	st := s.(cu.Stream)
	return *(*C.CUstream)(unsafe.Pointer(&st))
}

// ForeignStream wraps a caller's CUstream handle (it is never destroyed by goprep).
func (d *device) ForeignStream(h uint64) gpu.Stream {
	return *(*cu.Stream)(unsafe.Pointer(&h))
}

// MemAllocAsync allocates in stream order from the device's default memory pool (CUDA 11.2+).
func (d *device) MemAllocAsync(n int, s gpu.Stream) (uint64, error) {
	var p C.CUdeviceptr
	if r := C.cuMemAllocAsync(&p, C.size_t(n), cstream(s)); r != C.CUDA_SUCCESS {
		return 0, engine.Errorf(engine.CodeDeviceUnavailable, "device", "cuMemAllocAsync(%d) failed with CUresult %d", n, int(r))
	}
	return uint64(p), nil
}

// MemFreeAsync frees in stream order: the memory is reused only after the work queued on s.
func (d *device) MemFreeAsync(p uint64, s gpu.Stream) {
	C.cuMemFreeAsync(C.CUdeviceptr(p), cstream(s))
}

// StreamWait orders future work on waiter after the work queued on s so far (an event, no host wait).
func (d *device) StreamWait(waiter, s gpu.Stream) error {
	var ev C.CUevent
	if r := C.cuEventCreate(&ev, C.CU_EVENT_DISABLE_TIMING); r != C.CUDA_SUCCESS {
		return engine.Errorf(engine.CodeDeviceUnavailable, "device", "cuEventCreate failed with CUresult %d", int(r))
	}
	defer C.cuEventDestroy(ev) // released by the driver once the wait is satisfied
	if r := C.cuEventRecord(ev, cstream(s)); r != C.CUDA_SUCCESS {
		return engine.Errorf(engine.CodeDeviceUnavailable, "device", "cuEventRecord failed with CUresult %d", int(r))
	}
	if r := C.cuStreamWaitEvent(cstream(waiter), ev, 0); r != C.CUDA_SUCCESS {
		return engine.Errorf(engine.CodeDeviceUnavailable, "device", "cuStreamWaitEvent failed with CUresult %d", int(r))
	}
	return nil
}

// Current reports whether the calling thread's current CUDA context (PyTorch's current device, say)
// is on this device.
func (d *device) Current() bool {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var dev C.CUdevice
	return C.cuCtxGetDevice(&dev) == C.CUDA_SUCCESS && int(dev) == d.ordinal
}

// Mark records a timing event on s (the profiler's copy/kernel split; only timed calls use it).
func (d *device) Mark(s gpu.Stream) (any, error) {
	var ev C.CUevent
	if r := C.cuEventCreate(&ev, C.CU_EVENT_DEFAULT); r != C.CUDA_SUCCESS {
		return nil, engine.Errorf(engine.CodeDeviceUnavailable, "device", "cuEventCreate failed with CUresult %d", int(r))
	}
	if r := C.cuEventRecord(ev, cstream(s)); r != C.CUDA_SUCCESS {
		C.cuEventDestroy(ev)
		return nil, engine.Errorf(engine.CodeDeviceUnavailable, "device", "cuEventRecord failed with CUresult %d", int(r))
	}
	return ev, nil
}

// Elapsed is the device time between two completed marks (cuEventElapsedTime, ~0.5 us resolution).
func (d *device) Elapsed(a, b any) (int64, error) {
	var ms C.float
	if r := C.cuEventElapsedTime(&ms, a.(C.CUevent), b.(C.CUevent)); r != C.CUDA_SUCCESS {
		return 0, engine.Errorf(engine.CodeDeviceUnavailable, "device", "cuEventElapsedTime failed with CUresult %d", int(r))
	}
	return int64(float64(ms) * 1e6), nil
}

// DropMark destroys a mark's event (the driver releases it once it completed).
func (d *device) DropMark(m any) { C.cuEventDestroy(m.(C.CUevent)) }

func (d *device) DestroyStream(s gpu.Stream) {
	st := s.(cu.Stream)
	_ = d.bound(st.Destroy)
}

func (d *device) NewStream() (gpu.Stream, error) {
	s, err := cu.MakeStream(cu.NonBlocking)
	if err != nil {
		return nil, deviceError("cuStreamCreate", err)
	}
	return s, nil
}

func (d *device) CopyHtoD(dst uint64, src unsafe.Pointer, n int, s gpu.Stream) error {
	if err := cu.MemcpyHtoDAsync(cu.DevicePtr(dst), src, int64(n), s.(cu.Stream)); err != nil {
		return d.fail("cuMemcpyHtoDAsync", err)
	}
	return nil
}

func (d *device) CopyDtoH(dst unsafe.Pointer, src uint64, n int, s gpu.Stream) error {
	if err := cu.MemcpyDtoHAsync(dst, cu.DevicePtr(src), int64(n), s.(cu.Stream)); err != nil {
		return d.fail("cuMemcpyDtoHAsync", err)
	}
	return nil
}

func (d *device) Launch(l engine.KernelLaunch, s gpu.Stream) error {
	fn, ok := d.fns[l.Kernel]
	if !ok {
		return engine.Errorf(engine.CodeInternal, "", "kernel %s is not in the embedded PTX", l.Kernel)
	}
	// Launch copies each parameter as 8 bytes; the kernel reads n as a 4-byte int from the low half.
	a0, a1 := l.Desc, uint64(l.N)
	g, b := l.Grid, l.Block
	if err := fn.Launch(g[0], g[1], g[2], b[0], b[1], b[2], 0, s.(cu.Stream), []unsafe.Pointer{unsafe.Pointer(&a0), unsafe.Pointer(&a1)}); err != nil {
		return d.fail("cuLaunchKernel("+l.Kernel+")", err)
	}
	return nil
}

func (d *device) Sync(s gpu.Stream) error {
	if err := s.(cu.Stream).Synchronize(); err != nil {
		return d.fail("cuStreamSynchronize", err)
	}
	return nil
}

var registerOnce sync.Once

// Register probes the driver once and registers the devices found (or the reason there are none)
// with the engine. The binding calls it lazily, on the first device query or GPU call, so importing
// goprep never touches the driver.
func Register() {
	registerOnce.Do(func() {
		devs, why := probe()
		gpu.Register(devs, why)
	})
}
