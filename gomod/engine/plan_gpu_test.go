package engine

import (
	"testing"
	"unsafe"
)

// Modes the GPU kernels lack (Plan.GPUSupported) run on the CPU engine whatever the placement, so
// device="auto" and "cuda" give CPU-identical results and are not counted as GPU fallbacks. The gather
// rules (nearest-exact, nearest-pil) are table-driven and do run on the (simulated) GPU.
func TestUnsupportedModesStayOnCPU(t *testing.T) {
	useSim(t)
	old := gpuAutoMinBytes
	gpuAutoMinBytes = 0 // every call is big enough for auto placement
	t.Cleanup(func() { gpuAutoMinBytes = old })
	cases := []struct {
		kind    string
		aa, f32 bool
		oh, ow  int
		onGPU   bool
	}{
		{"bicubic", false, false, 20, 31, false}, {"bicubic", true, false, 20, 31, false},
		{"bicubic", false, true, 50, 70, false}, {"bicubic", true, true, 20, 31, false},
		{"area", false, false, 20, 15, false}, {"area", false, false, 30, 24, false}, {"area", false, true, 70, 50, false},
		{"nearest-exact", false, false, 20, 70, true}, {"nearest-pil", false, true, 70, 15, true},
	}
	for _, c := range cases {
		s := rgbSpec(60, 48, c.kind, c.aa, c.oh, c.ow)
		if c.f32 {
			s.In.DType, s.In.Strides = F32, [4]int64{0, 4 * 3 * 48, 12, 4}
		}
		p, err := NewPlan(s)
		if err != nil {
			t.Fatal(err)
		}
		if ok, why := p.GPUSupported(); ok != c.onGPU || (!ok && why == "") {
			t.Fatalf("%+v: GPUSupported = %v %q", c, ok, why)
		}
		_, src := gpuSource(p)
		want := runGuarded(t, p, src, 1)
		wantRan := map[bool]string{true: "cuda", false: "cpu"}[c.onGPU]
		for _, dev := range []string{"auto", "cuda"} {
			got := make([]byte, p.OutBytes())
			ran, err := Execute([]Job{{p, src, unsafe.Pointer(&got[0])}}, Placement{Device: dev})
			if err != nil || ran != wantRan {
				t.Fatalf("%+v on %s: ran on %q (%v), want %s", c, dev, ran, err, wantRan)
			}
			if string(got) != string(want) {
				t.Fatalf("%+v on %s: differs from the CPU engine", c, dev)
			}
		}
		arr, ran, err := ExecuteToDevice([]Job{{Plan: p, Src: src}}, 0)
		if err != nil || ran != wantRan {
			t.Fatalf("%+v to device: ran on %q (%v)", c, ran, err)
		}
		if string(unsafe.Slice((*byte)(ptr(arr.Ptr)), arr.Bytes)) != string(want) {
			t.Fatalf("%+v: device array differs from the CPU engine", c)
		}
		arr.Free()
	}
	if s := Stats(); s.Fallbacks != 0 || s.Failures != 0 {
		t.Fatalf("declined modes counted as GPU trouble: %+v", s)
	}
}
