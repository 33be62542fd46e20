package binding

import (
	"encoding/json"
	"time"
	"unsafe"

	"github.com/goprep/goprep/gomod/engine"
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
	devs, why := engine.Devices()
	if devs == nil {
		devs = []engine.DeviceInfo{}
	}
	b, err := json.Marshal(map[string]any{"devices": devs, "reason": why})
	return string(b), err
}

// GPUCount is the number of usable GPUs (probing the driver on first use).
func GPUCount() int64 {
	ensureGPU()
	devs, _ := engine.Devices()
	return int64(len(devs))
}

// GPUAutoMinBytes is the smallest call (source plus output bytes) device="auto" sends to a GPU.
func GPUAutoMinBytes() int64 { return int64(engine.GPUAutoMinBytes()) }

// GPUStats returns the GPU counters (calls, failures, fallbacks, breaker, pool) as JSON.
func GPUStats() (string, error) {
	b, err := json.Marshal(engine.Stats())
	return string(b), err
}

func placement(device string) (engine.Placement, error) {
	ensureGPU()
	return engine.ParseDevice(device)
}

// RunOn is Run on a placement ("cpu", "auto", "cuda", "cuda:N"); it returns the backend that ran,
// "cpu" or "cuda" (a GPU failure is redone on the CPU and reported as "cpu").
func RunOn(h, src, out int64, device string) (ran string, err error) {
	defer engine.Recover(&err)
	pl, err := placement(device)
	if err != nil {
		return "", err
	}
	j, err := oneJob(h, src, out)
	if err != nil {
		return "", err
	}
	return engine.Execute([]engine.Job{j}, pl)
}

// RunManyOn is RunMany on a placement.
func RunManyOn(desc, count, out int64, device string) (ran string, err error) {
	defer engine.Recover(&err)
	pl, err := placement(device)
	if err != nil {
		return "", err
	}
	jobs, err := manyJobs(desc, count, out)
	if err != nil {
		return "", err
	}
	return engine.Execute(jobs, pl)
}

var arrays handles[*engine.DeviceArray]

func gpuIndex(device string) (int, error) {
	pl, err := placement(device)
	if err != nil {
		return 0, err
	}
	if pl.Device == "cpu" {
		return 0, &engine.Error{Code: engine.CodeInvalidArgument, Arg: "output", Msg: "output=\"device\" needs device=\"cuda\", \"cuda:N\" or \"auto\""}
	}
	return pl.Index, nil
}

// RunManyToDevice runs the jobs of desc (see RunMany; output offsets ignored, outputs consecutive
// in job order) into a new device array and returns its handle.
func RunManyToDevice(desc, count int64, device string) (h int64, err error) {
	defer engine.Recover(&err)
	idx, err := gpuIndex(device)
	if err != nil {
		return 0, err
	}
	jobs, err := manyJobs(desc, count, 0)
	if err != nil {
		return 0, err
	}
	return keepArray(engine.ExecuteToDevice(jobs, idx))
}

// RunToDevice runs plan h on the array object src into a new device array.
func RunToDevice(h, src int64, device string) (a int64, err error) {
	defer engine.Recover(&err)
	idx, err := gpuIndex(device)
	if err != nil {
		return 0, err
	}
	j, err := oneJob(h, src, 0)
	if err != nil {
		return 0, err
	}
	return keepArray(engine.ExecuteToDevice([]engine.Job{j}, idx))
}

// keepArray registers a new device array under a handle.
func keepArray(arr *engine.DeviceArray, _ string, err error) (int64, error) {
	if err != nil {
		return 0, err
	}
	return arrays.add(arr), nil
}

func deviceArray(h int64) (*engine.DeviceArray, error) {
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
	return 0, engine.SimulateGPU(on)
}

// SimulatedGPUAvailable reports whether TestingSimulateGPU can switch one in.
func SimulatedGPUAvailable() bool { return engine.SimKernelsBuiltIn() }

// TestingInjectGPUFault makes the next count GPU calls fail ("oom", "launch" or "lost"). Test-only.
func TestingInjectGPUFault(kind string, count int64) error {
	return engine.InjectGPUFault(kind, int(count))
}

// TestingResetGPU clears GPU counters and the breaker, and sets its cool-down. Test-only.
func TestingResetGPU(cooldownMs int64) {
	engine.ResetGPUStats()
	engine.SetBreakerCooldown(time.Duration(cooldownMs) * time.Millisecond)
}
