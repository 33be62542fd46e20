package binding

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"
)

// A held call waits inside Execute until its cancel flag is set, then stops with "cancelled"; the
// flag is what releases it, not time.
func TestHeldCallWaitsForItsCancelFlag(t *testing.T) {
	if _, err := SetArrayDataOffset(16); err != nil {
		t.Fatal(err)
	}
	src, out := make([]uint8, 6), make([]uint8, 6)
	h := copyPlan1x2(t)
	defer FreePlan(h)
	var stop int32
	desc := make([]int64, JobCols)
	so := &fakeArray{data: unsafe.Pointer(&src[0])}
	desc[jobPlan], desc[jobSrc] = h, addr(unsafe.Pointer(so))
	do := &fakeArray{data: unsafe.Pointer(&desc[0])}
	oo := &fakeArray{data: unsafe.Pointer(&out[0])}
	fo := &fakeArray{data: unsafe.Pointer(&stop)}

	TestingHoldCalls(1, false)
	done := make(chan error, 1)
	go func() {
		_, err := Execute(addr(unsafe.Pointer(do)), 1, addr(unsafe.Pointer(oo)), "cpu", false, -1, -1, addr(unsafe.Pointer(fo)), 0, 0)
		done <- err
	}()
	if !TestingWaitHeld(5000) {
		t.Fatal("the cancellable call was not held")
	}
	select {
	case err := <-done:
		t.Fatalf("a held call returned before its cancel flag was set: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	if TestingHeldInFlight() != 1 {
		t.Fatalf("%d held calls in flight, want 1", TestingHeldInFlight())
	}
	atomic.StoreInt32(&stop, 1)
	if err := <-done; err == nil || !strings.HasPrefix(err.Error(), "goprep[cancelled]") {
		t.Fatalf("want a cancelled error, got %v", err)
	}
	if TestingHeldInFlight() != 0 {
		t.Fatalf("%d held calls in flight after it returned, want 0", TestingHeldInFlight())
	}
	// disarmed after one: the next cancellable call runs at once
	stop = 0
	if _, err := Execute(addr(unsafe.Pointer(do)), 1, addr(unsafe.Pointer(oo)), "cpu", false, -1, -1, addr(unsafe.Pointer(fo)), 0, 0); err != nil {
		t.Fatal(err)
	}
	if TestingWaitHeld(1) {
		t.Fatal("a call was held after the hook was used up")
	}
	// a cancel flag applies to CPU host calls only
	if _, err := Execute(addr(unsafe.Pointer(do)), 1, 0, "cpu", false, -1, -1, addr(unsafe.Pointer(fo)), 0, 0); err == nil {
		t.Fatal("a cancel flag with a device output was accepted")
	}
}
