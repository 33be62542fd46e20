package gpu

import (
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/goprep/goprep/gomod/engine"
)

func TestFaultsFallBackAndOpenTheBreaker(t *testing.T) {
	useSim(t)
	SetBreakerCooldown(200 * time.Millisecond)
	t.Cleanup(func() { SetBreakerCooldown(30 * time.Second) })
	p, _ := engine.NewPlan(imagenetSpec(3, 64, 80))
	_, src := gpuSource(p)
	want := runGuarded(t, p, src, 1)
	run := func() string {
		t.Helper()
		got := make([]byte, p.OutBytes())
		ran, err := execute([]engine.Job{{Plan: p, Src: src, Out: unsafe.Pointer(&got[0])}}, Placement{Device: "cuda"})
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Fatalf("result after %s run is wrong", ran)
		}
		return ran
	}
	if err := InjectFault("launch", 1); err != nil {
		t.Fatal(err)
	}
	if ran := run(); ran != "cpu" {
		t.Fatal("a failed launch did not fall back to the CPU")
	}
	if ran := run(); ran != "cuda" {
		t.Fatal("one failure must not stop GPU use")
	}
	_ = InjectFault("oom", 3)
	for i := 0; i < 3; i++ {
		if ran := run(); ran != "cpu" {
			t.Fatalf("call %d under OOM ran on %s", i, ran)
		}
	}
	s := ReadStats()
	if !s.BreakerOpen || s.BreakerTrips != 1 || s.Failures != 4 || s.Fallbacks != 4 || !strings.Contains(s.LastError, "out of device memory") {
		t.Fatalf("stats after 3 consecutive failures: %+v", s)
	}
	calls := s.Calls
	if ran := run(); ran != "cpu" || ReadStats().Calls != calls {
		t.Fatal("an open breaker must keep calls off the GPU")
	}
	time.Sleep(250 * time.Millisecond)
	if ran := run(); ran != "cuda" || ReadStats().BreakerOpen {
		t.Fatal("the breaker did not close after its cool-down")
	}
	// Device output falls back too: computed on the CPU, then uploaded.
	_ = InjectFault("launch", 1)
	arr, ran, err := executeToDevice([]engine.Job{{Plan: p, Src: src}}, 0)
	if err != nil || ran != "cpu" || string(unsafe.Slice((*byte)(ptr(arr.Ptr)), arr.Bytes)) != string(want) {
		t.Fatalf("device-output fallback: %s %v", ran, err)
	}
	arr.Free()
	if err := InjectFault("bogus", 1); err == nil {
		t.Fatal("unknown fault kind accepted")
	}
}

// A sticky error loses the device for the rest of the process: that call and every later one run on
// the CPU with correct results, and Devices() reports the loss.
func TestLostDeviceStaysOnCPU(t *testing.T) {
	useSim(t)
	p, _ := engine.NewPlan(imagenetSpec(2, 64, 80))
	_, src := gpuSource(p)
	want := runGuarded(t, p, src, 1)
	_ = InjectFault("lost", 1)
	for i := 0; i < 5; i++ {
		got := make([]byte, p.OutBytes())
		ran, err := execute([]engine.Job{{Plan: p, Src: src, Out: unsafe.Pointer(&got[0])}}, Placement{Device: "cuda"})
		if err != nil || ran != "cpu" || string(got) != string(want) {
			t.Fatalf("call %d after loss: ran %q err %v", i, ran, err)
		}
	}
	if s := ReadStats(); s.Calls != 1 || s.Fallbacks != 5 {
		t.Fatalf("only the first call may reach the lost device: %+v", s)
	}
	devs, why := Devices()
	if len(devs) != 0 || !strings.Contains(why, "cuda:0 was lost") {
		t.Fatalf("devices %v reason %q", devs, why)
	}
	big, _ := engine.NewPlan(imagenetSpec(16, 512, 512))
	if wantGPU(state.devices[0], []engine.Job{{Plan: big}}) {
		t.Fatal("auto placement chose a lost device")
	}
}
