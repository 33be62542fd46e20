package binding

import (
	"runtime"
	"strings"
	"testing"
	"time"
	"unsafe"
)

// The finish timestamps must be on a clock that advances with real time (CLOCK_MONOTONIC; Python's
// side of the cross-check is in tests/test_profile.py).
func TestMonotonicNsAdvancesWithTime(t *testing.T) {
	a, start := MonotonicNs(), time.Now()
	time.Sleep(20 * time.Millisecond)
	b, el := MonotonicNs(), time.Since(start)
	if d := time.Duration(b - a); d < 20*time.Millisecond || d > el+5*time.Millisecond {
		t.Fatalf("clock advanced %v over a %v sleep", d, el)
	}
}

func TestTimedEntryPointsFillTheRecord(t *testing.T) {
	// On the heap, which Go never moves (a stack array can move when the stack grows, and its address
	// passed as an integer would then point at the old copy); Python's buffers are C memory.
	rec := new([recFields + 1]int64)
	defer runtime.KeepAlive(rec)
	rec[recFields] = -7 // a guard: the engine writes only its own fields
	addr := int64(uintptr(unsafePointer(&rec[0])))
	before := MonotonicNs()
	if _, err := RunTimed(987654, 0, 0, addr); err == nil {
		t.Fatal("unknown plan handle must fail")
	}
	if rec[recStart] < before || rec[recFinish] < rec[recStart] || rec[recFinish] > MonotonicNs() || rec[recDevice] != 0 {
		t.Fatalf("RunTimed record %v: finish not within [%d, now] or device not cpu", rec, before)
	}
	rec[recDevice] = 5
	before = MonotonicNs()
	if _, err := ExecuteTimed(0, 1, 1, "cpu", false, -1, -1, addr); err == nil {
		t.Fatal("a missing job table must fail")
	}
	if rec[recStart] < before || rec[recFinish] < rec[recStart] || rec[recFinish] > MonotonicNs() || rec[recDevice] != 0 ||
		rec[recFields] != -7 {
		t.Fatalf("ExecuteTimed record %v", rec)
	}
	if _, err := RunTimed(987654, 0, 0, 0); err == nil { // no record: nothing written, still an error
		t.Fatal("unknown plan handle must fail")
	}
}

func TestProfileLayoutMatchesOffsets(t *testing.T) {
	fields, devs, ok := strings.Cut(ProfileLayout(), ";")
	if !ok || len(strings.Split(fields, ",")) != recFields || strings.Split(fields, ",")[recFinish] != "finish" ||
		strings.Split(fields, ",")[recStart] != "start" ||
		strings.Split(fields, ",")[recDevice] != "device" || strings.Split(devs, ",")[0] != "cpu" {
		t.Fatalf("ProfileLayout %q does not match the record offsets", ProfileLayout())
	}
}

func unsafePointer(p *int64) unsafe.Pointer { return unsafe.Pointer(p) }
