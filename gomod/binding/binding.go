// Package binding is the flat surface that gopy wraps into goprep's CPython extension. It takes only
// integers and strings: Python passes plan handles and the addresses of NumPy array objects, because
// every richer type gopy supports costs microseconds per call (see readArrayData).
//
// Every entry point recovers panics into errors; gopy releases the GIL around each call and raises a Go
// error as RuntimeError, whose "goprep[code]" prefix the Python side turns into a typed exception.
package binding

import (
	"encoding/json"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"unsafe"

	"github.com/goprep/goprep/gomod/engine"
)

// Version returns the engine version.
func Version() string { return version }

var plans handles[*engine.Plan]

// NewPlan validates a JSON plan spec and returns a handle for Run.
func NewPlan(spec string) (h int64, err error) {
	defer engine.Recover(&err)
	s, err := engine.ParseSpec(spec)
	if err != nil {
		return 0, err
	}
	p, err := engine.NewPlan(s)
	if err != nil {
		return 0, err
	}
	return plans.add(p), nil
}

// FreePlan releases a handle; unknown handles are ignored. Freeing a big plan returns its memory to
// the OS at once, so RSS does not stay at its high-water mark after one huge call.
func FreePlan(h int64) {
	p, ok := plans.remove(h)
	if ok && p.Bytes().Tables > engine.BigPlanBytes {
		debug.FreeOSMemory()
	}
}

// ReleaseMemory returns the free part of Go's heap to the OS at once (debug.FreeOSMemory, a full GC):
// Python calls it after evicting its plan caches, so the evicted plans' memory does not stay resident
// until the background scavenger gets to it.
func ReleaseMemory() {
	engine.ReleaseDecodeBuffers() // the decoders' kept buffers go too
	debug.FreeOSMemory()
}

// PlanBytes is the plan's memory estimate (tables plus one worker's scratch); Python keeps plans of
// more than BigPlanBytes out of its caches, so they are freed right after their call.
func PlanBytes(h int64) (int64, error) {
	p, err := lookup(h)
	if err != nil {
		return 0, err
	}
	b := p.Bytes()
	return b.Tables + b.Scratch, nil
}

// BigPlanBytes is engine.BigPlanBytes.
func BigPlanBytes() int64 { return engine.BigPlanBytes }

// NumPlans reports live plan handles (tests use it to prove Python's caches are bounded).
func NumPlans() int { return plans.len() }

// ErrorCodes is every error code goprep raises, comma-separated: the one list Python's exception map
// is checked against (engine.Codes).
func ErrorCodes() string {
	s := make([]string, len(engine.Codes))
	for i, c := range engine.Codes {
		s[i] = string(c)
	}
	return strings.Join(s, ",")
}

// MaxDim is the engine's per-dimension limit, which Python's size checks use.
func MaxDim() int64 { return engine.MaxDim }

// MaxThreads is the largest thread count SetNumThreads and GOPREP_NUM_THREADS accept.
func MaxThreads() int64 { return engine.MaxThreads }

// CheckNumThreadsEnv validates a GOPREP_NUM_THREADS value with the rule the engine applies at start-up.
func CheckNumThreadsEnv(v string) (int64, error) {
	n, err := engine.ParseNumThreads(v)
	return int64(n), err
}

func lookup(h int64) (*engine.Plan, error) {
	p, ok := plans.get(h)
	if !ok {
		return nil, &engine.Error{Code: engine.CodeInternal, Arg: "plan", Msg: "unknown plan handle"}
	}
	return p, nil
}

// dataOffset is where a NumPy array object keeps its data pointer (PyArrayObject.data), measured by
// Python at load time against ndarray.ctypes.data and set with SetArrayDataOffset; -1 until then.
var dataOffset atomic.Int64

func init() {
	dataOffset.Store(-1)
	// Every Python thread that calls goprep is an OS thread entering Go through cgo, and needs one of
	// GOMAXPROCS Ps to run. With Ps = cores (Go's default), callers beyond the core count queue in
	// Go's scheduler and Ps are handed between threads by futex wake-ups, leaving cores idle: 8 Python
	// threads serving 512x512 requests on 2 cores kept 1.37 cores busy (0.94-1.06x the 1-thread
	// throughput). With enough Ps every caller runs at once and the OS shares the cores, as it does for
	// a C library: 1.90-1.96 cores busy, 1.4-1.8x. The engine's own parallelism is set separately
	// (SetNumThreads), so more Ps do not mean more engine goroutines.
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(max(runtime.NumCPU(), callerProcs))
	}
}

// callerProcs is enough Ps for the Python threads a server typically runs.
const callerProcs = 64

// SetArrayDataOffset records the measured offset of PyArrayObject.data. Functions that can fail return
// (int64, error) rather than a bare error: gopy's wrapper for a bare error leaks a C string per call.
func SetArrayDataOffset(off int64) (int64, error) {
	if off < 0 || off > 256 || off%8 != 0 {
		return 0, &engine.Error{Code: engine.CodeInvalidArgument, Arg: "off", Msg: "implausible offset"}
	}
	dataOffset.Store(off)
	return off, nil
}

// readArrayData returns the data pointer of the NumPy array whose object address (Python's id()) is
// obj. Reading the field directly is what keeps a call under 5 us: ndarray.ctypes.data costs ~1.6 us
// and __array_interface__ ~2.8 us per array on this machine, more than the whole rest of the call.
// The caller holds a reference to the array for the duration of the call, so the object is alive.
func readArrayData(obj int64) (unsafe.Pointer, error) {
	off := dataOffset.Load()
	if off < 0 || obj == 0 {
		return nil, &engine.Error{Code: engine.CodeInternal, Msg: "array data offset not initialised"}
	}
	// Reinterpret the integer's bits as a pointer: the object lives in C memory, outside Go's heap.
	base := *(*unsafe.Pointer)(unsafe.Pointer(&obj))
	return *(*unsafe.Pointer)(unsafe.Add(base, off)), nil
}

// ArrayDataPtr exposes readArrayData for the load-time self check.
func ArrayDataPtr(obj int64) (int64, error) {
	p, err := readArrayData(obj)
	return int64(uintptr(p)), err
}

// The run entries are three: Run (one host job on the CPU, the common small call), RunTimed (Run
// for a profiled call, profile.go) and Execute (everything else: several jobs, placement, device
// sources and outputs, encoded sources (decode.go), streams, a cancel flag, a profile record;
// gpu.go). python/goprep/_run.py is their only caller.

// Run executes plan h reading the array object src and writing the array object out.
func Run(h, src, out int64) (n int64, err error) {
	defer engine.Recover(&err)
	j, err := oneJob(h, src, out)
	if err != nil {
		return 0, err
	}
	job := [1]engine.Job{j}
	return 0, engine.CPU{}.Run(job[:])
}

// oneJob resolves a plan handle and array objects into a Job.
func oneJob(h, src, out int64) (engine.Job, error) {
	p, err := lookup(h)
	if err != nil {
		return engine.Job{}, err
	}
	sp, err := readArrayData(src)
	if err != nil {
		return engine.Job{}, err
	}
	op, err := readArrayData(out)
	if err != nil {
		return engine.Job{}, err
	}
	return engine.Job{Plan: p, Src: sp, Out: op}, nil
}

// Execute's job table columns (its desc argument, int64 (count, JobCols)).
const (
	jobPlan   = iota // plan handle
	jobSrc           // source: a NumPy array object, or with devSrc a device address (0: encoded)
	jobOut           // output byte offset into out
	jobBatch         // decode batch handle (DecodeOpen), 0: the source is jobSrc
	jobItem          // the item of that batch
	jobScale         // its decode options: JPEG DCT scale 1, 2, 4 or 8,
	jobMode          // codec.Mode,
	jobOrient        // 1: apply the EXIF orientation
	jobStages        // a staged job's stage program (an int64 array object, staged.go), 0: none
	JobCols
)

// JobColumns is the job table's width, read by Python (one source).
func JobColumns() int64 { return JobCols }

// decodeJobs decodes Execute's job table; out == 0 leaves every Job.Out nil (device outputs); with
// devSrc the source column holds device addresses rather than array objects. encoded reports
// whether a row names an encoded source (encodedJob).
func decodeJobs(desc, count, out int64, devSrc bool) (jobs []engine.Job, encoded bool, err error) {
	dp, err := readArrayData(desc)
	if err != nil {
		return nil, false, err
	}
	var op unsafe.Pointer
	if out != 0 {
		if op, err = readArrayData(out); err != nil {
			return nil, false, err
		}
	}
	if count < 1 || count > 1<<24 {
		return nil, false, &engine.Error{Code: engine.CodeInvalidArgument, Arg: "count", Msg: "out of range"}
	}
	d := unsafe.Slice((*int64)(dp), JobCols*count)
	jobs = make([]engine.Job, count)
	for i := range jobs {
		row := d[JobCols*i : JobCols*(i+1)]
		p, err := lookup(row[jobPlan])
		if err != nil {
			return nil, false, err
		}
		jobs[i].Plan = p
		switch {
		case row[jobBatch] != 0:
			if devSrc {
				return nil, false, &engine.Error{Code: engine.CodeInvalidArgument, Arg: "src", Msg: "encoded sources are host data"}
			}
			if jobs[i].Enc, err = encodedJob(p, row); err != nil {
				return nil, false, err
			}
			encoded = true
		case devSrc:
			a := row[jobSrc] // a device address, outside Go's heap: reinterpret its bits
			jobs[i].Src = *(*unsafe.Pointer)(unsafe.Pointer(&a))
		default:
			if jobs[i].Src, err = readArrayData(row[jobSrc]); err != nil {
				return nil, false, err
			}
		}
		if row[jobStages] != 0 {
			if devSrc {
				return nil, false, &engine.Error{Code: engine.CodeInvalidArgument, Arg: "src", Msg: "staged jobs read host data"}
			}
			if jobs[i].Stages, err = stagesJob(p, row[jobStages], i); err != nil {
				return nil, false, err
			}
		}
		if op != nil {
			jobs[i].Out = unsafe.Add(op, row[jobOut])
		}
	}
	return jobs, encoded, nil
}

// SetNumThreads sets the CPU backend's parallelism.
func SetNumThreads(n int64) (int64, error) { return n, engine.SetNumThreads(int(n)) }

// NumThreads reports the CPU backend's parallelism.
func NumThreads() int64 { return int64(engine.NumThreads()) }

// SIMD reports which row kernels this build and CPU use.
func SIMD() string { return engine.SIMDLevel() }

// Kernels reports, as a JSON object, the row kernel each CPU pass runs in plans made now (the
// engine's kernel set: goprep.info()["kernels"]).
func Kernels() string {
	b, _ := json.Marshal(engine.KernelNames()) // a map of strings always marshals
	return string(b)
}
