//go:build cuda

package cuda

import (
	"strings"
	"testing"
)

// On a machine without the NVIDIA driver both report not-ok with a reason
// naming the missing library; on a GPU machine only consistency is required.
func TestDriverStatus(t *testing.T) {
	ok, reason := DriverStatus()
	t.Logf("DriverStatus: ok=%v reason=%q", ok, reason)
	if ok {
		if reason != "" {
			t.Fatalf("ok with reason %q", reason)
		}
		return
	}
	if reason == "" {
		t.Fatal("not ok but empty reason")
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
	t.Logf("NVMLStatus: ok=%v reason=%q", ok, reason)
	if ok {
		if reason != "" {
			t.Fatalf("ok with reason %q", reason)
		}
		return
	}
	if reason == "" {
		t.Fatal("not ok but empty reason")
	}
	// Without the library, the dlopen error must be part of the reason.
	if strings.Contains(reason, "LIBRARY_NOT_FOUND") && !strings.Contains(reason, "libnvidia-ml") {
		t.Fatalf("reason %q does not mention libnvidia-ml", reason)
	}
}
