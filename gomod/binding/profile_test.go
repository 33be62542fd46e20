package binding

import (
	"strconv"
	"strings"
	"testing"
	"time"
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

func TestTimedEntryPointsReportFinish(t *testing.T) {
	before := MonotonicNs()
	if _, err := RunTimed(987654, 0, 0); err == nil {
		t.Fatal("unknown plan handle must fail")
	}
	ran, err := ExecuteTimed(0, 1, 1, "cpu", false, -1, -1)
	if err == nil {
		t.Fatal("a missing job table must fail")
	}
	_, tail, ok := strings.Cut(ran, " ") // "<backend> <ns>", backend empty on error
	if !ok {
		t.Fatalf("ExecuteTimed = %q, want \"<backend> <ns>\"", ran)
	}
	ns, err := strconv.ParseInt(tail, 10, 64)
	if err != nil || ns < before || ns > MonotonicNs() {
		t.Fatalf("finish %d not within [%d, now]", ns, before)
	}
}
