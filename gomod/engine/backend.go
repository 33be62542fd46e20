package engine

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync/atomic"
)

// Backend executes plans. The CPU backend is always present; a CUDA backend registers itself when the
// extension was built with it and a device is usable. Both run the same Plan, so results are identical.
type Backend interface {
	Name() string
	Run(jobs []Job) error
}

var numThreads atomic.Int64

func init() {
	n := runtime.NumCPU()
	if v, err := strconv.Atoi(os.Getenv("GOPREP_NUM_THREADS")); err == nil && v > 0 {
		n = v
	}
	numThreads.Store(int64(n))
}

// SetNumThreads sets how many goroutines the CPU backend splits one call across.
func SetNumThreads(n int) error {
	if n < 1 || n > 4096 {
		return errf(CodeInvalidArgument, "n", "must be between 1 and 4096, got %d", n)
	}
	numThreads.Store(int64(n))
	return nil
}

// NumThreads reports the CPU backend's parallelism.
func NumThreads() int { return int(numThreads.Load()) }

// CPU is the Go backend.
type CPU struct{}

func (CPU) Name() string { return "cpu" }

// Run executes every job, splitting output rows of all of them across NumThreads goroutines.
func (CPU) Run(jobs []Job) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = errf(CodeInternal, "", "engine panic: %v", r)
		}
	}()
	return runCPU(jobs, NumThreads())
}

// Recover turns a panic into an internal error; every binding entry point defers it.
func Recover(err *error) {
	if r := recover(); r != nil {
		*err = &Error{Code: CodeInternal, Msg: fmt.Sprintf("unexpected panic: %v", r)}
	}
}
