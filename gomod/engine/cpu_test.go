package engine

import (
	"bytes"
	"errors"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"
)

// A set cancel flag stops a long call within a band of rows, on both the inline and threaded paths,
// and the plan still runs correctly afterwards.
func TestCancelStopsCall(t *testing.T) {
	// A mild antialiased bicubic downscale: both passes do full work in every kernel set (an
	// identity-size resize, used before, became a near-copy once aaU8 served it: ~30 ms at 2 threads,
	// so the stop landed after the call had ended).
	s := rgbSpec(1080, 1920, "bicubic", true, 1079, 1917)
	s.In.N, s.In.Strides[0] = 24, 1080*1920*3
	p, err := NewPlan(s)
	if err != nil {
		t.Fatal(err)
	}
	src := make([]uint8, 24*1080*1920*3)
	out := make([]uint8, p.OutBytes())
	// Stopped 30 ms into a call that takes far longer (24 1080p images, 0.4-0.8 s unloaded): the call returns cancelled
	// with part of its output never written (a sentinel left; the zero source writes zeros). This
	// proves the stop is honoured mid-call without timing anything, so a loaded machine (the race
	// detector on 2 cores) cannot fail it.
	for _, threads := range []int{1, 2} {
		for i := range out {
			out[i] = 0xAB
		}
		var stop int32
		timer := time.AfterFunc(30*time.Millisecond, func() { atomic.StoreInt32(&stop, 1) })
		err := runCPU([]Job{{Plan: p, Src: unsafe.Pointer(&src[0]), Out: unsafe.Pointer(&out[0])}}, threads, &stop)
		timer.Stop()
		var e *Error
		if !errors.As(err, &e) || e.Code != CodeCancelled {
			t.Fatalf("threads=%d: got %v, want cancelled", threads, err)
		}
		if bytes.IndexByte(out, 0xAB) < 0 {
			t.Fatalf("threads=%d: every output byte was written: the stop did not end the call early", threads)
		}
	}
	// Stopped before it starts: nothing is written.
	for i := range out {
		out[i] = 0xAB
	}
	stopped := int32(1)
	if err := runCPU([]Job{{Plan: p, Src: unsafe.Pointer(&src[0]), Out: unsafe.Pointer(&out[0])}}, 2, &stopped); err == nil {
		t.Fatal("a call stopped before it started ran")
	}
	if bytes.Count(out, []byte{0xAB}) != len(out) {
		t.Fatal("a call stopped before it started wrote output")
	}
	small, _ := NewPlan(rgbSpec(61, 47, "bilinear", false, 13, 9))
	src2 := make([]uint8, 61*47*3)
	var stop int32
	if err := runCPU([]Job{{Plan: small, Src: unsafe.Pointer(&src2[0]), Out: unsafe.Pointer(&out[0])}}, 2, &stop); err != nil {
		t.Fatal(err)
	}
}
