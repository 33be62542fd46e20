package gpu

import (
	"math"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/goprep/goprep/gomod/engine"
)

// The cost model of device="auto": for each call, the CPU engine's time (the bytes it reads and
// writes at its measured cost per byte, split over NumThreads cores) against the GPU path's time
// (the bytes really moved, staged rows only, at the device's measured pinned host-to-device
// bandwidth, plus the kernel's time at its measured cost per byte, plus a fixed launch-and-sync
// latency). The figures are measured once per process, lazily (the first auto call big enough to
// ask), in a few ms, and shown in info()["gpu"]["cost_model"].

// gpuLatency is what any GPU call costs before its first byte: two launches of copies, a kernel and
// a stream sync, 30-100 us on the setups the CUDA docs quote; the upper end keeps "auto" honest.
const gpuLatency = 100 * time.Microsecond

// CostFigures are the cost model's measured inputs (0 until measured).
type CostFigures struct {
	CPUNsPerByte   float64 `json:"cpu_ns_per_byte"`   // one core, source plus output bytes
	H2DBytesPerSec float64 `json:"h2d_bytes_per_sec"` // pinned host -> device, GPU 0 or the chosen one
	H2DNominal     bool    `json:"h2d_nominal"`       // the device reported figures instead (simulated GPU)
	// the fused kernel per device-resident source plus output byte
	KernelNsPerByte float64 `json:"kernel_ns_per_byte"`
}

var (
	costOnce sync.Once
	cpuCost  atomic.Uint64 // float64 bits
	bwMu     sync.Mutex
)

// cpuNsPerByte measures the CPU engine once: a 480x640 RGB uint8 image to 224x224 float32 CHW
// (bilinear, normalised: the common case) on one thread, best of three.
func cpuNsPerByte() float64 {
	costOnce.Do(func() {
		p, err := engine.NewPlan(calibrationSpec(0))
		if err != nil {
			cpuCost.Store(math.Float64bits(1))
			return
		}
		src := make([]byte, calibH*calibW*3)
		out := make([]byte, p.OutBytes())
		best := time.Duration(math.MaxInt64)
		for range 3 {
			t := time.Now()
			_ = engine.CPU{Threads: 1}.Run([]engine.Job{{Plan: p, Src: unsafe.Pointer(&src[0]), Out: unsafe.Pointer(&out[0])}})
			best = min(best, time.Since(t))
		}
		cpuCost.Store(math.Float64bits(float64(best.Nanoseconds()) / float64(len(src)+len(out))))
	})
	return math.Float64frombits(cpuCost.Load())
}

// nominalBandwidth is implemented by devices that report their host-to-device bandwidth and kernel
// cost rather than have them measured (the simulated GPU, whose "transfers" are memcpy and whose
// kernels run on the CPU: measured, they would describe this machine, not a GPU).
type nominalBandwidth interface {
	NominalH2D() float64
	NominalKernelNsPerByte() float64
}

// h2dBandwidth measures the device's pinned host-to-device bandwidth once: a 16 MiB copy from a
// pinned buffer, best of three (a few ms at PCIe 4/5 speeds).
func (d *gpuDev) h2dBandwidth() float64 {
	if v := math.Float64frombits(d.bw.Load()); v > 0 {
		return v
	}
	bwMu.Lock()
	defer bwMu.Unlock()
	if v := math.Float64frombits(d.bw.Load()); v > 0 {
		return v
	}
	if nb, ok := d.dev.(nominalBandwidth); ok {
		d.kernelCost.Store(math.Float64bits(nb.NominalKernelNsPerByte()))
		d.bw.Store(math.Float64bits(nb.NominalH2D()))
		return nb.NominalH2D()
	}
	d.kernelCost.Store(math.Float64bits(d.measureKernel()))
	const n = 16 << 20
	bw := 12e9 // PCIe 4 x16 in practice, if the measurement fails
	_ = d.bound(func() error {
		host, err := d.host.get(n)
		if err != nil {
			return err
		}
		defer d.host.release(host)
		buf, err := d.mem.get(n)
		if err != nil {
			return err
		}
		defer d.mem.release(buf)
		s, err := d.stream()
		if err != nil {
			return err
		}
		defer d.putStream(s)
		best := time.Duration(math.MaxInt64)
		for range 3 {
			t := time.Now()
			if err := d.dev.CopyHtoD(buf.ptr, unsafe.Pointer(&host[0]), n, s); err != nil {
				return err
			}
			if err := d.dev.Sync(s); err != nil {
				return err
			}
			best = min(best, time.Since(t))
		}
		bw = float64(n) / best.Seconds()
		return nil
	})
	d.bw.Store(math.Float64bits(bw))
	return bw
}

// measureKernel times the fused kernel on device-resident data: four 480x640 RGB images to 224x224
// float32 CHW, best of three calls (each one launch and one stream sync), minus the fixed latency.
func (d *gpuDev) measureKernel() float64 {
	const h, w, n = calibH, calibW, 4
	p, err := engine.NewPlan(calibrationSpec(n))
	if err != nil {
		return 0
	}
	src, err := d.newArray(n*h*w*3, nil, 0)
	if err != nil {
		return 0
	}
	defer src.Free()
	out, err := d.newArray(p.OutBytes(), nil, 0)
	if err != nil {
		return 0
	}
	defer out.Free()
	best := time.Duration(math.MaxInt64)
	for range 3 {
		t := time.Now()
		call := &gpuCall{jobs: []engine.Job{{Plan: p, Src: ptr(src.Ptr)}}, devSrc: true, outDev: out.Ptr}
		if err := d.bound(func() error { return d.pipeline(call) }); err != nil {
			return 0
		}
		best = min(best, time.Since(t))
	}
	return max(float64((best-gpuLatency).Nanoseconds()), 0) / float64(n*h*w*3+p.OutBytes())
}

// gpuFaster compares the two estimates for a host-input call: hostBytes read plus outBytes written by
// the CPU, against staged bytes up and (unless the output stays on the device) output bytes down.
func (d *gpuDev) gpuFaster(cpuBytes, upBytes, downBytes int) bool {
	cpu := cpuNsPerByte() * float64(cpuBytes) / float64(max(engine.NumThreads(), 1))
	gpuT := float64(gpuLatency.Nanoseconds()) + float64(upBytes+downBytes)/d.h2dBandwidth()*1e9 + d.kernelNs(upBytes+downBytes)
	return gpuT < cpu
}

// gpuFasterToDevice compares, for host input and a device output, the GPU path (staged bytes up)
// with CPU preprocessing plus an upload of the result (down bytes up).
func (d *gpuDev) gpuFasterToDevice(cpuBytes, up, down int) bool {
	cpu := cpuNsPerByte()*float64(cpuBytes)/float64(max(engine.NumThreads(), 1)) + float64(down)/d.h2dBandwidth()*1e9
	return float64(up)/d.h2dBandwidth()*1e9+d.kernelNs(up+down) < cpu
}

// kernelNs is the kernel's estimated time for a call reading and writing these many bytes.
func (d *gpuDev) kernelNs(bytes int) float64 {
	d.h2dBandwidth() // measures both figures once
	return math.Float64frombits(d.kernelCost.Load()) * float64(bytes)
}

// Costs reports the cost model's figures (measuring nothing: zeros until a call needed them).
func Costs() CostFigures {
	c := CostFigures{CPUNsPerByte: math.Float64frombits(cpuCost.Load())}
	state.mu.Lock()
	defer state.mu.Unlock()
	if len(state.devices) > 0 {
		d := state.devices[0]
		c.H2DBytesPerSec = math.Float64frombits(d.bw.Load())
		_, c.H2DNominal = d.dev.(nominalBandwidth)
		c.KernelNsPerByte = math.Float64frombits(d.kernelCost.Load())
	}
	return c
}

// The calibration task of both cost figures (CPU per byte, GPU kernel time): a 480x640 uint8 RGB
// image (n == 0) or a batch of n, bilinear to 224x224, normalised into float32 CHW.
const calibH, calibW = 480, 640

func calibrationSpec(n int) *engine.Spec {
	in := engine.InputSpec{DType: engine.U8, N: n, H: calibH, W: calibW, C: 3, Strides: [4]int64{calibH * calibW * 3, calibW * 3, 3, 1}}
	if n == 0 {
		in.Strides[0] = 0
	}
	return &engine.Spec{
		In:     in,
		Pre:    engine.View{Y0: 0, X0: 0, SY: 1, SX: 1, H: calibH, W: calibW},
		Resize: engine.ResizeSpec{Kind: "bilinear", H: 224, W: 224},
		Canvas: engine.CanvasSpec{H: 224, W: 224},
		Post:   engine.View{Y0: 0, X0: 0, SY: 1, SX: 1, H: 224, W: 224},
		CMap:   []int{0, 1, 2},
		Norm:   &engine.NormSpec{Mean: []float64{0.5, 0.5, 0.5}, Std: []float64{0.25, 0.25, 0.25}, Scale: 1.0 / 255, DType: engine.F32, Layout: "CHW"},
	}
}
