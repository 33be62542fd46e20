package gpu

import (
	"math"
	"testing"
	"unsafe"

	"github.com/goprep/goprep/gomod/engine"
)

func TestAutoPlacementCostModel(t *testing.T) {
	useSim(t)
	// The decision, not this machine's speed, is under test: a measured CPU figure made the large case
	// flip to "cpu" once the AVX2 kernels got faster. 0.5 ns per byte and core is a plain CPU engine.
	cpuNsPerByte()
	old := cpuCost.Load()
	t.Cleanup(func() { cpuCost.Store(old) })
	cpuCost.Store(math.Float64bits(0.5))
	small, _ := engine.NewPlan(rgbSpec(16, 16, "bilinear", false, 8, 8))
	large, _ := engine.NewPlan(imagenetSpec(16, 512, 512))
	for _, c := range []struct {
		p    *engine.Plan
		want string
	}{{small, "cpu"}, {large, "cuda"}} {
		buf, src := gpuSource(c.p)
		out := make([]byte, c.p.OutBytes())
		ran, err := execute([]engine.Job{{Plan: c.p, Src: src, Out: unsafe.Pointer(&out[0])}}, Placement{Device: "auto"})
		if err != nil || ran != c.want {
			t.Fatalf("auto ran %q (%v), want %q", ran, err, c.want)
		}
		_ = buf
	}
}

// The cost model decides by the measured figures: pinned bandwidth against CPU cost per byte, for
// host outputs and (CPU preprocessing plus upload of the result) for device outputs.
func TestCostModelDecides(t *testing.T) {
	useSim(t)
	d := state.devices[0]
	cpuNsPerByte() // measure once, then override for the test
	old := cpuCost.Load()
	t.Cleanup(func() { cpuCost.Store(old) })
	p, _ := engine.NewPlan(imagenetSpec(8, 1080, 1920))
	jobs := []engine.Job{{Plan: p}}
	up, down, cpuBytes := callBytes(jobs)
	if up >= 8*1080*1920*3/2 || down != p.OutBytes() {
		t.Fatalf("up %d down %d", up, down)
	}
	cpuCost.Store(math.Float64bits(1.0)) // a slow CPU: 1 ns per byte and core
	if !wantGPU(d, jobs) || !d.gpuFasterToDevice(cpuBytes, up, down) {
		t.Fatal("a slow CPU must lose to a 25 GB/s link")
	}
	cpuCost.Store(math.Float64bits(0.001)) // an absurdly fast CPU
	if wantGPU(d, jobs) || d.gpuFasterToDevice(cpuBytes, up, down) {
		t.Fatal("a CPU 1000x faster must win")
	}
	// With a device output, the CPU-then-upload choice still returns the right device array.
	_, src := gpuSource(p)
	want := runGuarded(t, p, src, 2)
	r, err := Run(Call{Jobs: []engine.Job{{Plan: p, Src: src}}, Placement: Placement{Device: "auto", Index: -1}, ToDevice: true})
	if err != nil || r.Ran != "cpu" || string(unsafe.Slice((*byte)(ptr(r.Array.Ptr)), r.Array.Bytes)) != string(want) {
		t.Fatalf("CPU then upload: ran %q err %v", r.Ran, err)
	}
	r.Array.Free()
	if s := ReadStats(); s.Fallbacks != 0 || s.Costs.H2DBytesPerSec != 25e9 || !s.Costs.H2DNominal || s.Costs.CPUNsPerByte != 0.001 {
		t.Fatalf("a cost-model choice is not a fallback, and the figures are reported: %+v", s)
	}
}

// The kernel measurement a real GPU gets (the simulated one reports nominal figures instead) runs a
// device-resident calibration batch and yields a positive cost.
func TestKernelMeasurement(t *testing.T) {
	useSim(t)
	if v := state.devices[0].measureKernel(); v <= 0 {
		t.Fatalf("kernel cost %v", v)
	}
	if s := ReadStats(); s.Failures != 0 {
		t.Fatalf("%+v", s)
	}
}
