package gpu

import (
	"errors"
	"strings"
	"testing"
	"unsafe"

	"github.com/goprep/goprep/gomod/engine"
)

// devicePtr is src's address inside a device copy of its buffer.
func devicePtr(buf []byte, src unsafe.Pointer, arr *DeviceArray) unsafe.Pointer {
	return ptr(arr.Ptr + uint64(uintptr(src)-uintptr(unsafe.Pointer(&buf[0]))))
}

// Device-resident sources (CUDA array interface, DLPack, DeviceArray) are read in place: every case
// matches the CPU engine, into host and device outputs; on the caller's stream with a device output
// the call makes no host wait at all, and every stream-ordered free lands on the right stream.
func TestSimulatedGPUDeviceSourcesAndStreams(t *testing.T) {
	sim := useSim(t)
	for _, c := range gpuCases() {
		p, err := engine.NewPlan(c.spec)
		if err != nil {
			t.Fatal(err)
		}
		buf, src := gpuSource(p)
		want := runGuarded(t, p, src, 1)
		in, err := Upload(buf, 0, 0, false)
		if err != nil {
			t.Fatal(err)
		}
		job := engine.Job{Plan: p, Src: devicePtr(buf, src, in)}
		got := make([]byte, p.OutBytes())
		job.Out = unsafe.Pointer(&got[0])
		r, err := Run(Call{Jobs: []engine.Job{job}, Placement: Placement{Device: "auto", Index: -1}, DeviceSources: true})
		if err != nil || r.Ran != "cuda" || string(got) != string(want) {
			t.Fatalf("%s: device source, host output: ran %q err %v equal %v", c.name, r.Ran, err, string(got) == string(want))
		}
		syncs := sim.syncs.Load()
		r, err = Run(Call{Jobs: []engine.Job{{Plan: p, Src: job.Src}}, Placement: Placement{Device: "cuda", Index: 0}, ToDevice: true,
			DeviceSources: true, Stream: 7, HasStream: true, WaitOn: []uint64{5}})
		if err != nil || r.Ran != "cuda" {
			t.Fatalf("%s: stream call ran %q: %v", c.name, r.Ran, err)
		}
		if n := sim.syncs.Load() - syncs; n != 0 {
			t.Fatalf("%s: a stream= call with device input and output waited on the host %d times", c.name, n)
		}
		if w := sim.waits[len(sim.waits)-1]; w != [2]Stream{simForeign(7), simForeign(5)} {
			t.Fatalf("%s: the caller's stream did not wait for the input's stream: %v", c.name, w)
		}
		if string(unsafe.Slice((*byte)(ptr(r.Array.Ptr)), r.Array.Bytes)) != string(want) || r.Array.ReadyHandle != 7 {
			t.Fatalf("%s: device array differs (ready on %d)", c.name, r.Array.ReadyHandle)
		}
		// A DLPack consumer on stream 9: it waits for stream 7, and the free moves to stream 9.
		if err := r.Array.ExportTo(9); err != nil {
			t.Fatal(err)
		}
		if w := sim.waits[len(sim.waits)-1]; w != [2]Stream{simForeign(9), simForeign(7)} {
			t.Fatalf("%s: export did not order the consumer after the producer: %v", c.name, w)
		}
		r.Array.Free()
		if f := sim.freedOn[len(sim.freedOn)-1]; f != simForeign(9) {
			t.Fatalf("%s: freed on %v, want the consumer's stream 9", c.name, f)
		}
		in.Free()
		if f := sim.freedOn[len(sim.freedOn)-1]; f != simForeign(LegacyStream) {
			t.Fatalf("%s: an unexported array is freed on %v, want the legacy default stream", c.name, f)
		}
	}
	if s := ReadStats(); s.Failures != 0 || s.Fallbacks != 0 {
		t.Fatalf("%+v", s)
	}
}

// A failing GPU with device sources falls back: sources are copied to the host, the CPU computes,
// a device output is uploaded; an out-of-memory for the device output itself falls back too (counted).
func TestDeviceSourceFallbackAndOutputOOM(t *testing.T) {
	useSim(t)
	p, _ := engine.NewPlan(imagenetSpec(3, 40, 50))
	buf, src := gpuSource(p)
	want := runGuarded(t, p, src, 1)
	in, err := Upload(buf, 0, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Free()
	_ = InjectFault("launch", 2)
	got := make([]byte, p.OutBytes())
	r, err := Run(Call{Jobs: []engine.Job{{Plan: p, Src: devicePtr(buf, src, in), Out: unsafe.Pointer(&got[0])}}, Placement: Placement{Device: "cuda"}, DeviceSources: true})
	if err != nil || r.Ran != "cpu" || string(got) != string(want) {
		t.Fatalf("host output fallback: %q %v", r.Ran, err)
	}
	r, err = Run(Call{Jobs: []engine.Job{{Plan: p, Src: devicePtr(buf, src, in)}}, Placement: Placement{Device: "cuda"}, DeviceSources: true, ToDevice: true})
	if err != nil || r.Ran != "cpu" || string(unsafe.Slice((*byte)(ptr(r.Array.Ptr)), r.Array.Bytes)) != string(want) {
		t.Fatalf("device output fallback: %q %v", r.Ran, err)
	}
	r.Array.Free()
	// Out of device memory for the output itself: counted, the pool's idle buffers go back to the
	// driver, the CPU computes, and the output is allocated once the result exists.
	if _, err := execute([]engine.Job{{Plan: p, Src: src, Out: unsafe.Pointer(&got[0])}}, Placement{Device: "cuda"}); err != nil {
		t.Fatal(err)
	}
	if cached, _ := state.devices[0].mem.usage(); cached == 0 {
		t.Fatal("a GPU call left nothing in the pool: the trim below would prove nothing")
	}
	before := ReadStats()
	_ = InjectFault("oom", 1)
	r, err = Run(Call{Jobs: []engine.Job{{Plan: p, Src: src}}, Placement: Placement{Device: "cuda"}, ToDevice: true})
	if err != nil || r.Ran != "cpu" || string(unsafe.Slice((*byte)(ptr(r.Array.Ptr)), r.Array.Bytes)) != string(want) || r.Array.ReadyHandle != 0 {
		t.Fatalf("OOM on the output did not fall back: %q %v", r.Ran, err)
	}
	r.Array.Free()
	if s := ReadStats(); s.Failures != before.Failures+1 || s.Fallbacks != before.Fallbacks+1 || !strings.Contains(s.LastError, "out of device memory") {
		t.Fatalf("OOM on the output not counted: %+v -> %+v", before, s)
	}
	if cached, _ := state.devices[0].mem.usage(); cached != 0 {
		t.Fatalf("OOM fallback kept %d idle pool bytes", cached)
	}
	// The same from device sources on the caller's stream: the late output is ready on that stream.
	_ = InjectFault("oom", 1)
	r, err = Run(Call{Jobs: []engine.Job{{Plan: p, Src: devicePtr(buf, src, in)}}, Placement: Placement{Device: "cuda"}, DeviceSources: true, ToDevice: true, Stream: 7, HasStream: true})
	if err != nil || r.Ran != "cpu" || string(unsafe.Slice((*byte)(ptr(r.Array.Ptr)), r.Array.Bytes)) != string(want) || r.Array.ReadyHandle != 7 {
		t.Fatalf("OOM on the output with stream=: %q %v", r.Ran, err)
	}
	r.Array.Free()
	// When even the output alone cannot be allocated after the CPU computed it, there is nowhere
	// to put the result: DeviceUnavailable, counted once.
	before = ReadStats()
	_ = InjectFault("oom", 2)
	_, err = Run(Call{Jobs: []engine.Job{{Plan: p, Src: src}}, Placement: Placement{Device: "cuda"}, ToDevice: true})
	var e *engine.Error
	if !errors.As(err, &e) || e.Code != engine.CodeDeviceUnavailable || !strings.Contains(err.Error(), "even after the CPU computed it") {
		t.Fatalf("OOM twice on the output: %v", err)
	}
	if s := ReadStats(); s.Failures != before.Failures+1 || s.Fallbacks != before.Fallbacks+1 {
		t.Fatalf("OOM on the output not counted: %+v -> %+v", before, s)
	}
}
