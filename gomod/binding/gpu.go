package binding

import (
	"encoding/json"
	"time"
	"unsafe"

	"github.com/goprep/goprep/gomod/engine"
	"github.com/goprep/goprep/gomod/engine/gpu"
)

// The GPU half of the binding. In a CPU-only build (no -tags cuda) registerGPU stays nil and the
// engine reports "this goprep build has no CUDA backend"; a CUDA build sets it (cuda.go) to probe the
// driver, once, on the first device query or GPU call, never at import.
var (
	registerGPU func()
	cudaBuilt   bool
)

func ensureGPU() {
	if registerGPU != nil {
		registerGPU()
	}
}

// CUDABuilt reports whether this extension was built with the CUDA backend.
func CUDABuilt() bool { return cudaBuilt }

// Devices returns {"devices": [...], "reason": "..."} as JSON: the usable GPUs with their properties,
// or none and why.
func Devices() (string, error) {
	ensureGPU()
	devs, why := gpu.Devices()
	if devs == nil {
		devs = []gpu.DeviceInfo{}
	}
	b, err := json.Marshal(map[string]any{"devices": devs, "reason": why})
	return string(b), err
}

// GPUCount is the number of usable GPUs (probing the driver on first use).
func GPUCount() int64 {
	ensureGPU()
	devs, _ := gpu.Devices()
	return int64(len(devs))
}

// GPUAutoMinBytes is the smallest call (source plus output bytes) device="auto" sends to a GPU.
func GPUAutoMinBytes() int64 { return int64(gpu.AutoMinBytes()) }

// PlanMovedBytes is what a call of plan h moves between host and GPU (engine.Plan.MovedBytes): a call
// whose jobs move fewer than GPUAutoMinBytes in all stays on the CPU under device="auto", and Python
// applies that rule to a traced signature once, with this figure, instead of asking per call.
func PlanMovedBytes(h int64) (int64, error) {
	p, err := lookup(h)
	if err != nil {
		return 0, err
	}
	return int64(gpu.MovedBytes(p)), nil
}

// GPUStats returns the GPU counters (calls, failures, fallbacks, breaker, pool) as JSON.
func GPUStats() (string, error) {
	b, err := json.Marshal(gpu.ReadStats())
	return string(b), err
}

// placement parses a device string; anything but "cpu" probes the GPUs first (once per process), so
// a process that only runs on the CPU never loads the driver.
func placement(device string) (gpu.Placement, error) {
	if device != "cpu" {
		ensureGPU()
	}
	return gpu.ParseDevice(device)
}

var arrays handles[*gpu.DeviceArray]

// Execute runs count jobs through the engine's one run path (gpu.Run): desc is an int64 array
// object of (count, JobCols) rows (binding.go: plan handle, source, output byte offset, and for an
// encoded source its decode batch, item and options). A source is a NumPy array object, or with
// devSrc a device address on the call's GPU, or an item of a decode batch (decode.go), which only
// device="cpu" calls into host memory read: the engine's CPU backend decodes it. With out (a NumPy
// array object) every output lands there; with out == 0 they go into one new device array, whose
// handle is returned. stream is the
// caller's CUDA stream handle (-1: none), wait a stream the device sources were produced on (-1: none).
// stop (0: none) is an int32 NumPy array object, a cancel flag the caller sets non-zero from another
// thread to stop the call with code "cancelled" (engine.CPU.Stop); it applies to device="cpu" calls
// from host sources into host outputs, which Python makes cancellable when they are long, so Ctrl-C
// stops them. buf and row (0 and any: none) are the profile record to fill (profile.go), with the
// entry and finish times, the backend that ran and, when the GPU ran, the device time of its copies
// and kernels (gpu.Times), so the profiler can split gpu_s.
func Execute(desc, count, out int64, device string, devSrc bool, stream, wait, stop, buf, row int64) (h int64, err error) {
	if buf == 0 {
		h, _, _, err = execute(desc, count, out, device, devSrc, stream, wait, stop, false)
		return h, err
	}
	start := nanotime()
	h, ran, gt, err := execute(desc, count, out, device, devSrc, stream, wait, stop, true)
	finish(record(buf, row), start, ran, gt)
	return h, err
}

// execute is Execute that also reports which backend ran ("cpu" or "cuda") and, when timed, the
// device time of its copies and kernels.
func execute(desc, count, out int64, device string, devSrc bool, stream, wait, stop int64, timed bool) (h int64, ran string, gt gpu.Times, err error) {
	defer engine.Recover(&err)
	pl, err := placement(device)
	if err != nil {
		return 0, "", gt, err
	}
	jobs, encoded, err := decodeJobs(desc, count, out, devSrc)
	if err != nil {
		return 0, "", gt, err
	}
	if encoded && (pl.Device != "cpu" || out == 0) {
		return 0, "", gt, &engine.Error{Code: engine.CodeInvalidArgument, Arg: "device", Msg: "encoded images are decoded on the CPU: device=\"cpu\" into host memory"}
	}
	if stop != 0 {
		if pl.Device != "cpu" || devSrc || out == 0 {
			return 0, "", gt, &engine.Error{Code: engine.CodeInvalidArgument, Arg: "stop", Msg: "a cancel flag applies to device=\"cpu\" calls from and into host memory"}
		}
		sp, err := readArrayData(stop)
		if err != nil {
			return 0, "", gt, err
		}
		defer holdIfArmed((*int32)(sp))()
		return 0, "cpu", gt, engine.CPU{Stop: (*int32)(sp)}.Run(jobs)
	}
	if encoded {
		return 0, "cpu", gt, engine.CPU{}.Run(jobs)
	}
	c := gpu.Call{Jobs: jobs, Placement: pl, ToDevice: out == 0, DeviceSources: devSrc, Timed: timed}
	if stream >= 0 {
		c.Stream, c.HasStream = uint64(stream), true
	}
	if wait >= 0 {
		c.WaitOn = []uint64{uint64(wait)}
	}
	r, err := gpu.Run(c)
	if err != nil || r.Array == nil {
		return 0, r.Ran, r.GPU, err
	}
	return arrays.add(r.Array), r.Ran, r.GPU, nil
}

// Upload copies nbytes of the NumPy array object src (C-contiguous) into a new device array on
// device ("cuda" or "cuda:N"); stream as for Execute.
func Upload(src, nbytes int64, device string, stream int64) (h int64, err error) {
	defer engine.Recover(&err)
	pl, err := placement(device)
	if err != nil {
		return 0, err
	}
	if pl.Device != "cuda" {
		return 0, &engine.Error{Code: engine.CodeInvalidArgument, Arg: "device", Msg: "must be \"cuda\" or \"cuda:N\""}
	}
	sp, err := readArrayData(src)
	if err != nil {
		return 0, err
	}
	var data []byte
	if nbytes > 0 {
		data = unsafe.Slice((*byte)(sp), nbytes)
	}
	a, err := gpu.Upload(data, max(pl.Index, 0), uint64(max(stream, 0)), stream >= 0)
	if err != nil {
		return 0, err
	}
	return arrays.add(a), nil
}

// DeviceArrayExport prepares array h for a consumer on stream (DLPack stream=; 0: no stream given).
func DeviceArrayExport(h, stream int64) (int64, error) {
	a, err := deviceArray(h)
	if err != nil {
		return 0, err
	}
	return 0, a.ExportTo(uint64(stream))
}

// DeviceArrayReadyStream is the stream array h's contents are ready on, for the CUDA array
// interface's "stream" (0: already synchronised).
func DeviceArrayReadyStream(h int64) (int64, error) {
	a, err := deviceArray(h)
	if err != nil {
		return 0, err
	}
	return int64(a.ReadyHandle), nil
}

func deviceArray(h int64) (*gpu.DeviceArray, error) {
	a, ok := arrays.get(h)
	if !ok {
		return nil, &engine.Error{Code: engine.CodeInvalidArgument, Arg: "array", Msg: "unknown or freed device array"}
	}
	return a, nil
}

// DeviceArrayPtr is the device address of array h.
func DeviceArrayPtr(h int64) (int64, error) {
	a, err := deviceArray(h)
	if err != nil {
		return 0, err
	}
	return int64(a.Ptr), nil
}

// DeviceArrayDevice is the GPU index of array h.
func DeviceArrayDevice(h int64) (int64, error) {
	a, err := deviceArray(h)
	if err != nil {
		return 0, err
	}
	return int64(a.Device), nil
}

// DeviceArrayToHost copies array h into the NumPy array object out (which must hold its bytes).
func DeviceArrayToHost(h, out, nbytes int64) (n int64, err error) {
	defer engine.Recover(&err)
	a, err := deviceArray(h)
	if err != nil {
		return 0, err
	}
	if nbytes != int64(a.Bytes) {
		return 0, &engine.Error{Code: engine.CodeBadShape, Arg: "out", Msg: "size differs from the device array"}
	}
	op, err := readArrayData(out)
	if err != nil {
		return 0, err
	}
	return 0, a.CopyToHost(unsafe.Slice((*byte)(op), a.Bytes))
}

// FreeDeviceArray returns array h's memory to the device pool; unknown handles are ignored.
func FreeDeviceArray(h int64) {
	if a, ok := arrays.remove(h); ok {
		a.Free()
	}
}

// NumDeviceArrays reports live device arrays (tests).
func NumDeviceArrays() int64 { return int64(arrays.len()) }

// TestingSimulateGPU switches in a simulated GPU (host memory, the real kernels compiled for the CPU)
// so the GPU path, fallback and breaker can be tested on machines without one. Test-only; it fails
// in an extension built without -tags cpukernel.
func TestingSimulateGPU(on bool) (int64, error) {
	ensureGPU() // probe the real devices first, so the probe cannot later replace the simulated one
	return 0, gpu.Simulate(on)
}

// SimulatedGPUAvailable reports whether TestingSimulateGPU can switch one in.
func SimulatedGPUAvailable() bool { return gpu.SimKernelsBuiltIn() }

// TestingInjectGPUFault makes the next count GPU calls fail ("oom", "launch" or "lost"). Test-only.
func TestingInjectGPUFault(kind string, count int64) error {
	return gpu.InjectFault(kind, int(count))
}

// TestingResetGPU clears GPU counters and the breaker, and sets its cool-down. Test-only.
func TestingResetGPU(cooldownMs int64) {
	gpu.ResetStats()
	gpu.SetBreakerCooldown(time.Duration(cooldownMs) * time.Millisecond)
}

// TestingSetCPUCost pins the GPU cost model's CPU figure (ns per byte and core) and returns the
// previous one (gpu.SetCPUCostForTesting). Test-only.
func TestingSetCPUCost(nsPerByte float64) float64 { return gpu.SetCPUCostForTesting(nsPerByte) }

// TestingSimTrace returns the simulated GPU's stream trace as JSON (gpu.SimTrace). Test-only.
func TestingSimTrace() (string, error) {
	b, err := json.Marshal(gpu.SimulatedTrace())
	return string(b), err
}
