package gpu

import (
	"errors"
	"strings"
	"testing"
	"unsafe"

	"github.com/goprep/goprep/gomod/engine"
)

// MovedBytes bounds callBytes' up + down from above without building the row staging: Python's
// once-per-signature "stays on the CPU" then never contradicts wantGPU, and a CPU-only process builds
// no GPU-only plan data.
func TestMovedBytesBoundsWithoutStaging(t *testing.T) {
	p, err := engine.NewPlan(imagenetSpec(0, 1080, 1920)) // reads 448 of 1080 rows: a staged plan
	if err != nil {
		t.Fatal(err)
	}
	bound := MovedBytes(p)
	if p.StageBuilt() {
		t.Fatal("MovedBytes built the GPU row staging")
	}
	up, down, _ := callBytes([]engine.Job{{Plan: p}})
	if !p.StageBuilt() {
		t.Fatal("callBytes should have built the staging it counts")
	}
	if bound < up+down || bound != 1080*1920*3+p.OutBytes() {
		t.Fatalf("MovedBytes = %d; staged up+down = %d, whole image + output = %d", bound, up+down, 1080*1920*3+p.OutBytes())
	}
	if up+down >= bound {
		t.Fatalf("the staged count %d should be below the whole-image bound %d for a plan reading 448 rows", up+down, bound)
	}
}

// Device sources are checked against the allocation behind them before any copy or launch: a wild
// pointer or a plan reading past the allocation is an invalid_argument error naming src, and the
// process reads nothing it does not own (the simulated GPU's memory is host memory).
func TestDeviceSourcesCheckedAgainstTheirAllocation(t *testing.T) {
	useSim(t)
	p, _ := engine.NewPlan(imagenetSpec(3, 40, 50))
	buf, src := gpuSource(p)
	in, err := Upload(buf, 0, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Free()
	got := make([]byte, p.OutBytes())
	call := func(s unsafe.Pointer) error {
		_, err := Run(Call{Jobs: []engine.Job{{Plan: p, Src: s, Out: unsafe.Pointer(&got[0])}}, Placement: Placement{Device: "cuda"}, DeviceSources: true})
		return err
	}
	if err := call(devicePtr(buf, src, in)); err != nil {
		t.Fatalf("a valid device source: %v", err)
	}
	small, err := Upload(buf[:len(buf)/2], 0, 0, false) // half the bytes the plan reads
	if err != nil {
		t.Fatal(err)
	}
	defer small.Free()
	for name, s := range map[string]unsafe.Pointer{
		"past its allocation": devicePtr(buf, src, small),
		"wild":                ptr(in.Ptr + 1<<40),
		"null":                nil,
	} {
		var e *engine.Error
		if err := call(s); !errors.As(err, &e) || e.Code != engine.CodeInvalidArgument || e.Arg != "src" {
			t.Errorf("%s pointer: %v", name, err)
		}
	}
}

// device="cpu" never touches GPU memory: Run refuses device sources (invalid_argument naming device)
// and a device output (naming output, also with device sources), having written nothing, even with
// a GPU there whose memory the CPU engine could reach (the simulated GPU's is host memory); host to
// host it runs on the CPU. Go's one check of the rule (binding.Execute relies on it).
func TestCPUPlacementRefusesGPUMemory(t *testing.T) {
	useSim(t)
	p, _ := engine.NewPlan(imagenetSpec(3, 40, 50))
	buf, src := gpuSource(p)
	in, err := Upload(buf, 0, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Free()
	const guard = 0xA5
	got := make([]byte, p.OutBytes())
	for _, c := range []struct {
		name          string
		devSrc, toDev bool
		arg, mustSay  string
	}{
		{"device sources", true, false, "device", `device="cpu" cannot read GPU memory`},
		{"device output", false, true, "output", `device="cpu" cannot write GPU memory`},
		{"device sources and output", true, true, "output", `device="cpu" cannot write GPU memory`},
	} {
		for i := range got {
			got[i] = guard
		}
		job := engine.Job{Plan: p, Src: src}
		if c.devSrc {
			job.Src = devicePtr(buf, src, in)
		}
		if !c.toDev {
			job.Out = unsafe.Pointer(&got[0])
		}
		r, err := Run(Call{Jobs: []engine.Job{job}, Placement: Placement{Device: "cpu"}, DeviceSources: c.devSrc, ToDevice: c.toDev})
		var e *engine.Error
		if !errors.As(err, &e) || e.Code != engine.CodeInvalidArgument || e.Arg != c.arg || !strings.Contains(e.Msg, c.mustSay) {
			t.Errorf("%s on device=\"cpu\": %v, want invalid_argument naming %s and saying %q", c.name, err, c.arg, c.mustSay)
		}
		if r.Array != nil || r.Ran != "" {
			t.Errorf("%s on device=\"cpu\": a refused call returned %+v", c.name, r)
		}
		for i, b := range got {
			if b != guard {
				t.Fatalf("%s on device=\"cpu\": the refused call wrote output byte %d", c.name, i)
			}
		}
	}
	want := runGuarded(t, p, src, 1)
	r, err := Run(Call{Jobs: []engine.Job{{Plan: p, Src: src, Out: unsafe.Pointer(&got[0])}}, Placement: Placement{Device: "cpu"}})
	if err != nil || r.Ran != "cpu" || string(got) != string(want) {
		t.Fatalf("host to host on device=\"cpu\": ran %q, err %v, equal %v", r.Ran, err, string(got) == string(want))
	}
}
