package binding

import (
	"sync"
	"sync/atomic"
	"time"
)

// Test hooks of the run path (goprep.testing.hold_calls / wait_held). A held call is provably still
// running when a test interrupts it: it has entered the engine and waits there, on its cancel flag,
// until the caller cancels it (Ctrl-C), so the test needs no timing guess about how long a call takes.

// holdLimit bounds a held call's wait, so a test whose interrupt never comes fails instead of hanging.
const holdLimit = 60 * time.Second

var (
	holdArmed atomic.Bool // fast check on the cancellable path: any call to hold?
	holdMu    sync.Mutex
	holdLeft  int64                     // cancellable calls still to hold
	held      = make(chan struct{}, 64) // one token per call that started waiting
)

// TestingHoldCalls makes the next n cancellable calls (Execute with a cancel flag: the long CPU calls
// Ctrl-C can stop) wait, once inside the engine, until their cancel flag is set (at most holdLimit),
// and then run, which the set flag stops at once with code "cancelled". n <= 0 disarms. Test-only.
func TestingHoldCalls(n int64) {
	holdMu.Lock()
	defer holdMu.Unlock()
	for len(held) > 0 {
		<-held
	}
	holdLeft = max(n, 0)
	holdArmed.Store(holdLeft > 0)
}

// TestingWaitHeld waits up to timeoutMs for a held call to start waiting, and reports whether one did.
// Test-only.
func TestingWaitHeld(timeoutMs int64) bool {
	t := time.NewTimer(time.Duration(timeoutMs) * time.Millisecond)
	defer t.Stop()
	select {
	case <-held:
		return true
	case <-t.C:
		return false
	}
}

// holdIfArmed holds a cancellable call whose cancel flag is stop, if TestingHoldCalls asked for it.
func holdIfArmed(stop *int32) {
	if !holdArmed.Load() {
		return
	}
	holdMu.Lock()
	take := holdLeft > 0
	if take {
		holdLeft--
		holdArmed.Store(holdLeft > 0)
	}
	holdMu.Unlock()
	if !take {
		return
	}
	select {
	case held <- struct{}{}:
	default:
	}
	deadline := time.Now().Add(holdLimit)
	for atomic.LoadInt32(stop) == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
}
