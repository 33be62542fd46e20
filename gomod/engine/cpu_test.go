package engine

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"
)

// A set cancel flag stops a long call within a band of rows, on both the inline and threaded paths,
// and the plan still runs correctly afterwards.
func TestCancelStopsCall(t *testing.T) {
	s := rgbSpec(1080, 1920, "bilinear", true, 1080, 1920)
	s.In.N, s.In.Strides[0] = 24, 1080*1920*3
	p, err := NewPlan(s)
	if err != nil {
		t.Fatal(err)
	}
	src := make([]uint8, 24*1080*1920*3)
	out := make([]uint8, p.OutBytes())
	for _, threads := range []int{1, 2} {
		var stop int32
		timer := time.AfterFunc(30*time.Millisecond, func() { atomic.StoreInt32(&stop, 1) })
		t0 := time.Now()
		err := runCPU([]Job{{p, unsafe.Pointer(&src[0]), unsafe.Pointer(&out[0])}}, threads, &stop)
		took := time.Since(t0)
		timer.Stop()
		var e *Error
		if !errors.As(err, &e) || e.Code != CodeCancelled {
			t.Fatalf("threads=%d: got %v after %v, want cancelled", threads, err, took)
		}
		if took > 500*time.Millisecond {
			t.Fatalf("threads=%d: cancel took %v", threads, took)
		}
	}
	small, _ := NewPlan(rgbSpec(61, 47, "bilinear", false, 13, 9))
	src2 := make([]uint8, 61*47*3)
	var stop int32
	if err := runCPU([]Job{{small, unsafe.Pointer(&src2[0]), unsafe.Pointer(&out[0])}}, 2, &stop); err != nil {
		t.Fatal(err)
	}
}
