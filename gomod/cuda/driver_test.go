//go:build cuda

package cuda

import (
	"strings"
	"testing"
)

// consistent checks that a status is ok without a reason or not ok with one, and reports ok.
func consistent(t *testing.T, name string, ok bool, reason string) bool {
	t.Helper()
	t.Logf("%s: ok=%v reason=%q", name, ok, reason)
	if ok && reason != "" {
		t.Fatalf("ok with reason %q", reason)
	}
	if !ok && reason == "" {
		t.Fatal("not ok but empty reason")
	}
	return ok
}

// On a machine without the NVIDIA driver both report not-ok with a reason
// naming the missing library; on a GPU machine only consistency is required.
func TestDriverStatus(t *testing.T) {
	ok, reason := DriverStatus()
	if consistent(t, "DriverStatus", ok, reason) {
		return
	}
	// Every failure reason names the library: dlopen error, missing cuInit,
	// or the real cuInit's error.
	if !strings.Contains(reason, "libcuda") {
		t.Fatalf("reason %q does not mention libcuda", reason)
	}
	// Stable across calls.
	ok2, reason2 := DriverStatus()
	if ok2 != ok || reason2 != reason {
		t.Fatalf("second call: %v %q, first: %v %q", ok2, reason2, ok, reason)
	}
}

func TestNVMLStatus(t *testing.T) {
	ok, reason := NVMLStatus()
	if consistent(t, "NVMLStatus", ok, reason) {
		return
	}
	// Without the library, the dlopen error must be part of the reason.
	if strings.Contains(reason, "LIBRARY_NOT_FOUND") && !strings.Contains(reason, "libnvidia-ml") {
		t.Fatalf("reason %q does not mention libnvidia-ml", reason)
	}
}
