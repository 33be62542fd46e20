package binding

import (
	"runtime"
	"strconv"
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
	const rows = 3
	buf := new([rows * recStride]int64)
	defer runtime.KeepAlive(buf)
	for i := range buf {
		buf[i] = -7 // guards: the engine writes only its own fields of the row it was given
	}
	addr := int64(uintptr(unsafePointer(&buf[0])))
	rec := buf[recStride : 2*recStride] // row 1
	guards := func() bool {
		for i, v := range buf {
			if row, f := i/recStride, i%recStride; (row != 1 || f >= recFields) && v != -7 {
				return false
			}
		}
		return true
	}
	before := MonotonicNs()
	if _, err := RunTimed(987654, 0, 0, addr, 1); err == nil {
		t.Fatal("unknown plan handle must fail")
	}
	if rec[recStart] < before || rec[recFinish] < rec[recStart] || rec[recFinish] > MonotonicNs() || rec[recDevice] != 0 ||
		rec[recGPUCopy] != 0 || !guards() {
		t.Fatalf("RunTimed record %v: finish not within [%d, now], device not cpu, or another field written", buf, before)
	}
	rec[recDevice] = 5
	before = MonotonicNs()
	if _, err := Execute(0, 1, 1, "cpu", false, -1, -1, 0, addr, 1); err == nil {
		t.Fatal("a missing job table must fail")
	}
	if rec[recStart] < before || rec[recFinish] < rec[recStart] || rec[recFinish] > MonotonicNs() || rec[recDevice] != 0 || !guards() {
		t.Fatalf("Execute's record %v", buf)
	}
	saved := *buf
	if _, err := RunTimed(987654, 0, 0, 0, 1); err == nil { // no buffer: nothing written, still an error
		t.Fatal("unknown plan handle must fail")
	}
	if _, err := RunTimed(987654, 0, 0, addr, -1); err == nil { // no row: nothing written
		t.Fatal("unknown plan handle must fail")
	}
	if *buf != saved {
		t.Fatal("a call without a record wrote into the buffer")
	}
}

func TestProfileLayoutMatchesOffsets(t *testing.T) {
	parts := strings.Split(ProfileLayout(), ";")
	if len(parts) != 4 || parts[2] != strconv.Itoa(recStride) || parts[3] != strconv.Itoa(profileRows) {
		t.Fatalf("ProfileLayout %q: want fields;devices;%d;%d", ProfileLayout(), recStride, profileRows)
	}
	fields, devs := parts[0], parts[1]
	if len(strings.Split(fields, ",")) != recFields || strings.Split(fields, ",")[recFinish] != "finish" ||
		strings.Split(fields, ",")[recStart] != "start" ||
		strings.Split(fields, ",")[recDevice] != "device" || strings.Split(devs, ",")[0] != "cpu" {
		t.Fatalf("ProfileLayout %q does not match the record offsets", ProfileLayout())
	}
}

func unsafePointer(p *int64) unsafe.Pointer { return unsafe.Pointer(p) }

// A row past the buffer's profileRows rows gets no record (nothing is written), the last one does.
func TestRecordRefusesRowsPastTheBuffer(t *testing.T) {
	const buf = 1 << 20 // record only computes the address; nothing is dereferenced here
	for _, row := range []int64{-1, profileRows, profileRows + 1, 1 << 40} {
		if record(buf, row) != nil {
			t.Fatalf("record(buf, %d) must be nil", row)
		}
	}
	if r := record(buf, profileRows-1); r == nil || uintptr(unsafe.Pointer(r)) != buf+8*recStride*(profileRows-1) {
		t.Fatalf("record(buf, profileRows-1) = %p", r)
	}
}
