package engine

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync/atomic"
)

// MaxThreads bounds SetNumThreads and GOPREP_NUM_THREADS alike.
const MaxThreads = 4096

var numThreads atomic.Int64

func init() {
	n := runtime.NumCPU()
	// An invalid GOPREP_NUM_THREADS is ignored here (init cannot fail); Python checks the variable with
	// ParseNumThreads when it loads the extension and raises an error naming it.
	if v, err := ParseNumThreads(os.Getenv("GOPREP_NUM_THREADS")); err == nil && v > 0 {
		n = v
	}
	numThreads.Store(int64(n))
}

// ParseNumThreads reads a GOPREP_NUM_THREADS value: 0 for an empty one, else an int in [1, MaxThreads].
func ParseNumThreads(s string) (int, error) {
	if s == "" {
		return 0, nil
	}
	v, err := strconv.Atoi(s)
	if err != nil || v < 1 || v > MaxThreads {
		return 0, errf(CodeInvalidArgument, "GOPREP_NUM_THREADS", "must be an integer between 1 and %d, got %q", MaxThreads, s)
	}
	return v, nil
}

// SetNumThreads sets how many goroutines the CPU backend splits one call across.
func SetNumThreads(n int) error {
	if n < 1 || n > MaxThreads {
		return errf(CodeInvalidArgument, "n", "must be between 1 and %d, got %d", MaxThreads, n)
	}
	numThreads.Store(int64(n))
	return nil
}

// NumThreads reports the CPU backend's parallelism.
func NumThreads() int { return int(numThreads.Load()) }

// CPU is the Go backend. Stop, when set, points at a cancel flag (an int32 in memory the caller owns,
// e.g. a NumPy array): a non-zero value stops the call between bands of rows (and between the
// images of encoded jobs) with CodeCancelled; a call it cut short never returns nil.
type CPU struct {
	Stop    *int32
	Threads int // 0: NumThreads()
}

// Run executes every job, splitting output rows of all of them across NumThreads goroutines; a call
// with encoded jobs (Job.Enc) spreads its images over them instead, one image each (decode_job.go).
func (c CPU) Run(jobs []Job) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = errf(CodeInternal, "", "engine panic: %v", r)
		}
	}()
	threads := c.Threads
	if threads <= 0 {
		threads = NumThreads()
	}
	return runCPU(jobs, threads, c.Stop)
}

// Recover turns a panic into an internal error; every binding entry point defers it.
func Recover(err *error) {
	if r := recover(); r != nil {
		*err = &Error{Code: CodeInternal, Msg: fmt.Sprintf("unexpected panic: %v", r)}
	}
}
