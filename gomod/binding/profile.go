package binding

import (
	"strconv"
	_ "unsafe" // go:linkname
)

// The profiler's entry points (goprep.set_profiling). Each wraps an existing entry point unchanged and
// also returns the moment the engine finished, on CLOCK_MONOTONIC: the clock Python's
// time.perf_counter_ns reads on Linux. Python notes when it holds the GIL again, so the difference is
// the measured GIL wait of that call. The unprofiled entry points do not read the clock at all.

// nanotime is the Go runtime's CLOCK_MONOTONIC reading (vDSO clock_gettime on Linux, ~20 ns). The
// runtime keeps it linkname-able on purpose ("Do not remove or change the type signature",
// go.dev/issue/67401); time.Now offers only an opaque monotonic reading, and x/sys/unix.ClockGettime
// is a real syscall (no vDSO) plus a new module dependency. tests/test_profile.py proves the reading
// lies between two perf_counter_ns calls made around it.
//
//go:linkname nanotime runtime.nanotime
func nanotime() int64

// MonotonicNs is the engine's clock, for the cross-check against time.perf_counter_ns.
func MonotonicNs() int64 { return nanotime() }

// RunTimed is Run returning the engine's finish time in ns.
func RunTimed(h, src, out int64) (int64, error) {
	_, err := Run(h, src, out)
	return nanotime(), err
}

// ExecuteTimed is Execute into a host output (out != 0), returning "<backend that ran> <finish ns>",
// and when the GPU ran it " <copy ns> <kernel ns>": the device time of its copies and kernels
// (engine.GPUTimes), so the profiler can split gpu_s.
func ExecuteTimed(desc, count, out int64, device string, devSrc bool, stream, wait int64) (string, error) {
	_, ran, gt, err := execute(desc, count, out, device, devSrc, stream, wait, true)
	fin := nanotime()
	if ran == "cuda" {
		return ran + " " + strconv.FormatInt(fin, 10) + " " + strconv.FormatInt(gt.CopyNs, 10) + " " + strconv.FormatInt(gt.KernelNs, 10), err
	}
	return ran + " " + strconv.FormatInt(fin, 10), err
}
