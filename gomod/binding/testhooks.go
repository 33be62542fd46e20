package binding

import (
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Test hooks of the run path (goprep.testing.hold_calls / wait_held). A held call is provably still
// running when a test interrupts it: it has entered the engine and waits there, on its cancel flag,
// until the caller cancels it (Ctrl-C), so the test needs no timing guess about how long a call takes.

// holdLimit bounds a held call's wait, so a test whose interrupt never comes fails instead of hanging.
const holdLimit = 60 * time.Second

var (
	holdArmed     atomic.Bool // fast check on the cancellable path: any call to hold?
	holdMu        sync.Mutex
	holdLeft      int64                     // cancellable calls still to hold
	holdInterrupt bool                      // a held call sends SIGINT to the process itself
	held          = make(chan struct{}, 64) // one token per call that started waiting
	heldInFlight  atomic.Int64              // held calls that have not returned from Execute
)

// TestingHoldCalls makes the next n cancellable calls (Execute with a cancel flag: the long CPU calls
// Ctrl-C can stop) wait, once inside the engine, until their cancel flag is set (at most holdLimit),
// and then run, which the set flag stops at once with code "cancelled". With interrupt, each held
// call, as soon as it waits, sends SIGINT to this process (the Ctrl-C a user would press, at the
// earliest moment the call can be interrupted). n <= 0 disarms. Test-only.
func TestingHoldCalls(n int64, interrupt bool) {
	holdMu.Lock()
	defer holdMu.Unlock()
	for len(held) > 0 {
		<-held
	}
	holdLeft = max(n, 0)
	holdInterrupt = interrupt
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

// TestingHeldInFlight is how many held calls have not yet returned from Execute: 0 once every
// interrupted call has really stopped. Test-only.
func TestingHeldInFlight() int64 { return heldInFlight.Load() }

// holdIfArmed holds a cancellable call whose cancel flag is stop, if TestingHoldCalls asked for it,
// and returns what the call runs as it returns from Execute (deferred: it counts the held call out).
func holdIfArmed(stop *int32) (returned func()) {
	if !holdArmed.Load() {
		return noop
	}
	holdMu.Lock()
	take, interrupt := holdLeft > 0, holdInterrupt
	if take {
		holdLeft--
		holdArmed.Store(holdLeft > 0)
	}
	holdMu.Unlock()
	if !take {
		return noop
	}
	heldInFlight.Add(1)
	select {
	case held <- struct{}{}:
	default:
	}
	if interrupt {
		_ = syscall.Kill(os.Getpid(), syscall.SIGINT)
	}
	deadline := time.Now().Add(holdLimit)
	for atomic.LoadInt32(stop) == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	return func() { heldInFlight.Add(-1) }
}

func noop() {}
