package binding

import (
	"strconv"
	"strings"
	"unsafe" // also for go:linkname

	"github.com/goprep/goprep/gomod/engine/gpu"
)

// The profiler's entry points (goprep.set_profiling). Each wraps an existing entry point unchanged and
// also writes the moment the engine finished, on CLOCK_MONOTONIC (the clock Python's
// time.perf_counter_ns reads on Linux), into the caller's profile record. Python notes when it holds
// the GIL again, so the difference is the measured GIL wait of that call. The unprofiled entry points
// do not read the clock at all.
//
// A record is a row of a per-thread buffer Python preallocates (python/goprep/_profile.py): the
// caller passes the buffer's address and the row's index, and the engine writes its fields into that
// row in place instead of returning them through gopy, so a profiled call builds no Python objects
// for them (the "<backend> <ns>" string this returned before had to be built, returned and parsed per
// call), and Python does no address arithmetic per call (passing the row index costs the C wrapper
// one more integer; computing base + 8*stride*row on Python ints cost more, measured ~30 ns). The
// row's layout is ProfileLayout: Python reads the field offsets and the row stride from it, so the
// two sides share one definition, and fields can be added here without touching the call path.

// Offsets (in int64s) of the fields the engine writes in its row.
const (
	recStart     = iota // CLOCK_MONOTONIC ns when the engine was entered
	recFinish           // CLOCK_MONOTONIC ns when the engine finished
	recDevice           // index into profileDevices of the backend that ran
	recGPUCopy          // device ns of the call's copies when the GPU ran (gpu.Times), else 0
	recGPUKernel        // device ns of the call's kernels when the GPU ran, else 0
	// More fields go here, named in ProfileLayout: Python sums every field named "<x>_ns" per
	// pipeline and reports it as "<x>_s" in goprep.stats().
	recFields // how many fields the engine owns
)

// recStride is the row stride in int64s: one 64-byte cache line, with room for more fields.
const recStride = 8

var _ [recStride - recFields]struct{} // compile-time check: the fields fit a row

// profileRows is how many rows a thread's buffer holds (Python allocates that many: ProfileLayout).
// record refuses a row past it, so a bookkeeping slip on the Python side cannot make the engine
// write past the buffer (one such slip, a raising tracing hook, once did).
const profileRows = 4096

// profileDevices names the backends a record's device field indexes (gpu.Result.Ran values).
var profileDevices = []string{"cpu", "cuda"}

// ProfileLayout describes the engine's rows: "field,field,...;device,device,...;stride;rows", fields
// in offset order, stride in int64s, rows per thread buffer.
func ProfileLayout() string {
	return "start,finish,device,gpu_copy_ns,gpu_kernel_ns;" + strings.Join(profileDevices, ",") + ";" +
		strconv.Itoa(recStride) + ";" + strconv.Itoa(profileRows)
}

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

// record is row `row` of the profile buffer at address buf (0, or a row outside [0, profileRows):
// none), which the caller keeps alive for the call (the calling thread's buffer, outside Go's heap,
// holding profileRows rows).
func record(buf, row int64) *[recFields]int64 {
	if buf == 0 || row < 0 || row >= profileRows {
		return nil
	}
	rec := buf + 8*recStride*row
	// Reinterpret the integer's bits as a pointer, as readArrayData does: the buffer is C memory.
	return *(**[recFields]int64)(unsafe.Pointer(&rec))
}

// finish fills a record when the engine finished (start: when it was entered); the finish time is
// read before anything else.
func finish(r *[recFields]int64, start int64, ran string, gt gpu.Times) {
	t := nanotime()
	if r == nil {
		return
	}
	dev := int64(0)
	for i, d := range profileDevices {
		if d == ran {
			dev = int64(i)
		}
	}
	r[recStart], r[recFinish], r[recDevice] = start, t, dev
	r[recGPUCopy], r[recGPUKernel] = gt.CopyNs, gt.KernelNs
}

// RunTimed is Run that also fills row `row` of the profile buffer at buf.
func RunTimed(h, src, out, buf, row int64) (int64, error) {
	start := nanotime()
	_, err := Run(h, src, out)
	finish(record(buf, row), start, "cpu", gpu.Times{})
	return 0, err
}
