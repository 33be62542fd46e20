package gpu

import (
	"fmt"
	"math/rand"
	"slices"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/goprep/goprep/gomod/engine"
)

// Large chunks stage many images at once through parallelCopy.
func TestSimulatedGPULargeChunkParallelStaging(t *testing.T) {
	sim := useSim(t)
	old := gpuChunkBytes
	gpuChunkBytes = 1 << 24
	t.Cleanup(func() { gpuChunkBytes = old })
	p, _ := engine.NewPlan(imagenetSpec(16, 200, 180))
	got, want := onSimGPU(t, p, 2)
	if string(got) != string(want) {
		t.Fatal("differs from the CPU engine")
	}
	if n := sim.launches.Load(); n != 1 {
		t.Fatalf("%d launches, want 1", n)
	}
}

// Host images whose plan reads only some source rows are staged as those rows alone: 1080p -> 224
// bilinear moves 448 of 1080 rows (plus the tables), and the result is still the CPU engine's.
func TestStagingOnlyTouchedRows(t *testing.T) {
	sim := useSim(t)
	p, err := engine.NewPlan(imagenetSpec(2, 1080, 1920))
	if err != nil {
		t.Fatal(err)
	}
	if p.GPUStage() == nil || p.GPUStage().Rows() != 448 {
		t.Fatalf("1080p -> 224 stages %v rows, want 448", p.GPUStage())
	}
	before := sim.h2d.Load() // gpuSource and the CPU run in onSimGPU copy nothing to the device
	got, want := onSimGPU(t, p, 2)
	if string(got) != string(want) {
		t.Fatal("staged rows: GPU differs from the CPU engine")
	}
	moved, full := sim.h2d.Load()-before, int64(2*1080*1920*3)
	t.Logf("host to device: %d bytes, %.0f%% of the images", moved, 100*float64(moved)/float64(full))
	if moved > full/2 {
		t.Fatalf("moved %d bytes for %d bytes of images: rows were not staged selectively", moved, full)
	}
	// Across the random specs, both staging layouts occur (the equivalence test covers them).
	r := rand.New(rand.NewSource(20261201))
	staged, whole := 0, 0
	for i := 0; i < 400; i++ {
		if p, err := engine.NewPlan(randomSpec(r)); err == nil {
			if p.GPUStage() != nil {
				staged++
			} else {
				whole++
			}
		}
	}
	if staged < 20 || whole < 20 {
		t.Fatalf("random specs: %d staged, %d whole: the equivalence test does not cover both", staged, whole)
	}
}

// Each host image's copy to the device is queued as soon as it is staged, not after its whole
// chunk: the trace of a 1080p batch (one thread, so the order is deterministic) alternates staging
// and copy starts, and with several threads no copy ever precedes the staging of its bytes. Tiny
// images are sent together (at least minSend bytes a copy), and results stay the CPU engine's.
func TestEachImageCopiedAsSoonAsStaged(t *testing.T) {
	useSim(t)
	gpuChunkBytes = 16 << 20 // six 1080p images (2.6 MB of staged rows each) per chunk
	threads := engine.NumThreads()
	t.Cleanup(func() { _ = engine.SetNumThreads(threads); stageTrace = nil })
	var mu sync.Mutex
	var trace []string
	stageTrace = func(ev string, a, b int) {
		mu.Lock()
		defer mu.Unlock()
		trace = append(trace, fmt.Sprintf("%s %d %d", ev, a, b))
	}
	run := func(p *engine.Plan) {
		t.Helper()
		trace = nil
		got, want := onSimGPU(t, p, 2)
		if string(got) != string(want) {
			t.Fatal("GPU differs from the CPU engine")
		}
	}
	p, err := engine.NewPlan(imagenetSpec(8, 1080, 1920))
	if err != nil {
		t.Fatal(err)
	}
	per := p.GPUStage().Elems() // bytes (u8) staged per image
	_ = engine.SetNumThreads(1)
	run(p)
	var want []string
	for _, chunk := range []int{6, 2} {
		want = append(want, fmt.Sprintf("chunk %d 0", chunk))
		for i := 0; i < chunk; i++ {
			want = append(want, fmt.Sprintf("staged %d %d", i, i), fmt.Sprintf("h2d %d %d", i*per, (i+1)*per))
		}
	}
	if !slices.Equal(trace, want) {
		t.Fatalf("one thread: trace\n%v\nwant\n%v", trace, want)
	}
	_ = engine.SetNumThreads(4)
	for _, c := range []struct {
		p     *engine.Plan
		large bool // images of at least minSend staged bytes
	}{{p, true}, {must(engine.NewPlan(imagenetSpec(64, 96, 128))), false}} {
		run(c.p)
		var staged []bool // this chunk's images staged so far
		total, sends, next := 0, 0, 0
		sz := c.p.StagedElems()
		for _, ev := range trace {
			var kind string
			var a, b int
			_, _ = fmt.Sscanf(ev, "%s %d %d", &kind, &a, &b)
			switch kind {
			case "chunk":
				staged, next = make([]bool, a), 0
			case "staged":
				staged[a] = true
				total++
			case "h2d":
				sends++
				if a != next {
					t.Fatalf("copies out of buffer order: %v", trace)
				}
				next = b
				for i := a / sz; i < b/sz; i++ {
					if !staged[i] {
						t.Fatalf("copy [%d, %d) queued before image %d was staged: %v", a, b, i, trace)
					}
				}
			}
		}
		if total != c.p.N {
			t.Fatalf("%d of %d images staged", total, c.p.N)
		}
		// Large images staged out of order go in one copy once the gap before them is staged, so
		// with several threads only "at least one copy per chunk" is certain.
		if c.large && sends < 2 {
			t.Fatalf("%d copies for %d large images in two chunks: %v", sends, c.p.N, trace)
		}
		if !c.large && (sends < 1 || sends >= c.p.N) {
			t.Fatalf("%d copies for %d tiny images: they are not sent together", sends, c.p.N)
		}
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// A timed call reports the device time of its copies and kernels: on the simulated GPU the real
// time of each memcpy and CPU-compiled kernel, so both are positive and within the call's time.
func TestTimedCallReportsCopyAndKernelTime(t *testing.T) {
	useSim(t)
	p := must(engine.NewPlan(imagenetSpec(4, 480, 640)))
	_, src := gpuSource(p)
	got := make([]byte, p.OutBytes())
	start := time.Now()
	r, err := Run(Call{Jobs: []engine.Job{{Plan: p, Src: src, Out: unsafe.Pointer(&got[0])}}, Placement: Placement{Device: "cuda"}, Timed: true})
	wall := time.Since(start).Nanoseconds()
	if err != nil || r.Ran != "cuda" {
		t.Fatalf("%s %v", r.Ran, err)
	}
	if r.GPU.CopyNs <= 0 || r.GPU.KernelNs <= 0 || r.GPU.CopyNs+r.GPU.KernelNs > wall {
		t.Fatalf("times %+v for a %d ns call", r.GPU, wall)
	}
	t.Logf("sim: copies %.2f ms, kernels %.2f ms of a %.2f ms call", float64(r.GPU.CopyNs)/1e6, float64(r.GPU.KernelNs)/1e6, float64(wall)/1e6)
	r, err = Run(Call{Jobs: []engine.Job{{Plan: p, Src: src, Out: unsafe.Pointer(&got[0])}}, Placement: Placement{Device: "cuda"}})
	if err != nil || r.GPU != (Times{}) {
		t.Fatalf("an untimed call reported %+v (%v)", r.GPU, err)
	}
	_ = InjectFault("launch", 1)
	r, err = Run(Call{Jobs: []engine.Job{{Plan: p, Src: src, Out: unsafe.Pointer(&got[0])}}, Placement: Placement{Device: "cuda"}, Timed: true})
	if err != nil || r.Ran != "cpu" || r.GPU != (Times{}) {
		t.Fatalf("a fallback reported GPU time %+v (%s %v)", r.GPU, r.Ran, err)
	}
}
