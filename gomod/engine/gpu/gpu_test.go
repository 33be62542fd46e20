package gpu

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/goprep/goprep/gomod/engine"
)

// useSim switches the simulated GPU in for one test, with small chunks so every batch is pipelined
// across both lanes, and fresh counters.
func useSim(t *testing.T) *simDevice {
	t.Helper()
	if err := Simulate(true); err != nil {
		t.Fatal(err)
	}
	ResetStats()
	old := gpuChunkBytes
	gpuChunkBytes = 1 << 16
	t.Cleanup(func() {
		gpuChunkBytes = old
		ResetStats()
		_ = Simulate(false)
	})
	return state.devices[0].dev.(*simDevice)
}

// execute and executeToDevice are Run with host outputs and with a device output.
func execute(jobs []engine.Job, pl Placement) (string, error) {
	r, err := Run(Call{Jobs: jobs, Placement: pl})
	return r.Ran, err
}

func executeToDevice(jobs []engine.Job, index int) (*DeviceArray, string, error) {
	r, err := Run(Call{Jobs: jobs, Placement: Placement{Device: "cuda", Index: index}, ToDevice: true})
	return r.Array, r.Ran, err
}

// gpuCase is a plan and a source to run on both engines.
type gpuCase struct {
	name string
	spec *engine.Spec
}

func gpuCases() []gpuCase {
	var cs []gpuCase
	add := func(name string, s *engine.Spec) { cs = append(cs, gpuCase{name, s}) }
	for _, kind := range []string{"none", "nearest", "bilinear", "antialias", "bicubic", "bicubic-aa", "area", "area-2x"} {
		for _, dt := range []engine.DType{engine.U8, engine.F32} {
			for _, norm := range []string{"", "f32-CHW", "f16-HWC"} {
				h, w, oh, ow := 37, 53, 19, 24
				if kind == "none" {
					oh, ow = h, w
				}
				if kind == "bilinear" && norm == "" {
					oh, ow = 70, 90 // upscale
				}
				k, aa := kind, false
				switch kind {
				case "antialias":
					k, aa = "bilinear", true
				case "bicubic-aa":
					k, aa = "bicubic", true
				case "area-2x": // integer factors (resizeAreaFast_'s 2x2 rule on uint8)
					k, h, w, oh, ow = "area", 38, 54, 19, 27
				}
				if (kind == "bicubic" || kind == "bicubic-aa") && norm == "" {
					oh, ow = 70, 90 // upscale
				}
				s := rgbSpec(h, w, k, aa, oh, ow)
				s.In.DType = dt
				es := int64(dt.Size())
				s.In.N = 2
				s.In.Strides = [4]int64{int64(h*w*3) * es, int64(w*3) * es, 3 * es, es}
				if norm != "" {
					parts := strings.Split(norm, "-")
					s.Norm = &engine.NormSpec{Mean: []float64{0.485, 0.456, 0.406}, Std: []float64{0.229, 0.224, 0.225}, Scale: 1.0 / 255, DType: engine.DType(parts[0]), Layout: parts[1]}
				}
				add(fmt.Sprintf("%s-%s-%s", kind, dt, norm), s)
			}
		}
	}
	// Letterbox with padding, a vertical flip through the output view, BGR order.
	lb := rgbSpec(61, 47, "bilinear", false, 20, 15)
	lb.Canvas = engine.CanvasSpec{H: 32, W: 32, Top: 6, Left: 8, Pad: engine.PadValues{114}}
	lb.Post = engine.View{Y0: 31, X0: 0, SY: -1, SX: 1, H: 32, W: 32}
	lb.CMap = []int{2, 1, 0}
	lb.Norm = &engine.NormSpec{Mean: []float64{1, 2, 3}, Std: []float64{4, 5, 6}, Scale: 1, DType: engine.F32, Layout: "CHW"}
	add("letterbox-bgr-vflip", lb)
	// A crop with a horizontal flip in the source view, and a mirrored source through negative strides.
	cr := rgbSpec(40, 30, "bilinear", false, 11, 13)
	cr.Pre = engine.View{Y0: 5, X0: 25, SY: 1, SX: -1, H: 30, W: 20}
	cr.In.Strides = [4]int64{0, 90, -3, 1}
	add("crop-hflip-negative-stride", cr)
	// Gray to 3 channels and RGBA to 1 channel, float32.
	g := rgbSpec(33, 21, "bilinear", false, 9, 8)
	g.In.C, g.In.Strides = 1, [4]int64{0, 21, 1, 1}
	g.CMap = []int{0, 0, 0}
	add("gray-to-rgb", g)
	a4 := rgbSpec(33, 21, "bilinear", true, 9, 8)
	a4.In = engine.InputSpec{DType: engine.F32, H: 33, W: 21, C: 4, Strides: [4]int64{0, 21 * 16, 16, 4}}
	a4.CMap = []int{3}
	a4.Norm = &engine.NormSpec{Mean: []float64{0.5}, Std: []float64{0.25}, Scale: 1, DType: engine.F16, Layout: "CHW"}
	add("rgba-alpha-f16", a4)
	// Planar source (channel stride != 1).
	pl := rgbSpec(20, 16, "bilinear", false, 7, 9)
	pl.In.Strides = [4]int64{0, 16, 1, 320}
	add("planar-source", pl)
	return cs
}

// gpuSource fills a source buffer covering the plan's whole span, and returns the data pointer.
func gpuSource(p *engine.Plan) ([]byte, unsafe.Pointer) {
	es := p.InDType().Size()
	minOff, span := p.SourceExtent()
	buf := make([]byte, span*es)
	if p.InDType() == engine.F32 {
		f := unsafe.Slice((*float32)(unsafe.Pointer(&buf[0])), span)
		for i := range f {
			f[i] = float32((i*37)%251) / 250
		}
	} else {
		for i := range buf {
			buf[i] = uint8(i*31 + i/7)
		}
	}
	return buf, unsafe.Pointer(&buf[-minOff*es])
}

// onSimGPU runs p over gpuSource's image on the (simulated) GPU, failing unless it ran there, and on
// the CPU engine with `threads` workers into a guarded output: the two results to compare.
func onSimGPU(t *testing.T, p *engine.Plan, threads int) (got, want []byte) {
	t.Helper()
	_, src := gpuSource(p)
	want = runGuarded(t, p, src, threads)
	got = make([]byte, p.OutBytes())
	if ran, err := execute([]engine.Job{{Plan: p, Src: src, Out: unsafe.Pointer(&got[0])}}, Placement{Device: "cuda"}); err != nil || ran != "cuda" {
		t.Fatalf("ran on %q: %v", ran, err)
	}
	return got, want
}

func TestSimulatedGPUMatchesCPU(t *testing.T) {
	sim := useSim(t)
	for _, c := range gpuCases() {
		t.Run(c.name, func(t *testing.T) {
			p, err := engine.NewPlan(c.spec)
			if err != nil {
				t.Fatal(err)
			}
			_, src := gpuSource(p)
			want := runGuarded(t, p, src, 1)
			got := make([]byte, p.OutBytes())
			ran, err := execute([]engine.Job{{Plan: p, Src: src, Out: unsafe.Pointer(&got[0])}}, Placement{Device: "cuda"})
			if err != nil || ran != "cuda" {
				t.Fatalf("ran on %q: %v", ran, err)
			}
			if string(got) != string(want) {
				t.Fatal("GPU kernels (emulated) differ from the CPU engine")
			}
			arr, ran, err := executeToDevice([]engine.Job{{Plan: p, Src: src}}, 0)
			if err != nil || ran != "cuda" {
				t.Fatalf("device output ran on %q: %v", ran, err)
			}
			if string(unsafe.Slice((*byte)(ptr(arr.Ptr)), arr.Bytes)) != string(want) {
				t.Fatal("device array differs from the CPU engine")
			}
			arr.Free()
			arr.Free() // idempotent
		})
	}
	if s := ReadStats(); s.PoolInUse != 0 || s.Failures != 0 || s.Fallbacks != 0 {
		t.Fatalf("after all calls: %+v", s)
	}
	// Every live allocation is an idle pooled buffer: nothing leaked.
	state.devices[0].mem.trim(0)
	hp := state.devices[0].host
	hp.mu.Lock()
	for c, l := range hp.idle {
		for _, p := range l {
			sim.HostFree(p)
		}
		delete(hp.idle, c)
	}
	hp.mu.Unlock()
	if n := sim.allocated(); n != 0 {
		t.Fatalf("%d simulated allocations leaked", n)
	}
}

// Differently sized images in one call are one batch (one launch per chunk) through the per-image
// descriptor table.
func TestSimulatedGPUMixedBatch(t *testing.T) {
	sim := useSim(t)
	old, oldBytes := maxChunkImages, gpuChunkBytes
	maxChunkImages, gpuChunkBytes = 3, 1<<24 // four images: two launches although the bytes fit one
	t.Cleanup(func() { maxChunkImages, gpuChunkBytes = old, oldBytes })
	var jobs, cpuJobs []engine.Job
	var outs, wants [][]byte
	var keep [][]byte
	for i, hw := range [][2]int{{50, 70}, {31, 17}, {224, 224}, {8, 300}} {
		s := imagenetSpec(0, hw[0], hw[1])
		if i == 1 {
			s.Resize.Antialias = true
		}
		p, err := engine.NewPlan(s)
		if err != nil {
			t.Fatal(err)
		}
		buf, src := gpuSource(p)
		keep = append(keep, buf)
		o, w := make([]byte, p.OutBytes()), make([]byte, p.OutBytes())
		outs, wants = append(outs, o), append(wants, w)
		jobs = append(jobs, engine.Job{Plan: p, Src: src, Out: unsafe.Pointer(&o[0])})
		cpuJobs = append(cpuJobs, engine.Job{Plan: p, Src: src, Out: unsafe.Pointer(&w[0])})
	}
	if err := (engine.CPU{}).Run(cpuJobs); err != nil {
		t.Fatal(err)
	}
	if ran, err := execute(jobs, Placement{Device: "cuda"}); err != nil || ran != "cuda" {
		t.Fatalf("%s %v", ran, err)
	}
	for i := range outs {
		if string(outs[i]) != string(wants[i]) {
			t.Fatalf("image %d differs", i)
		}
	}
	if n := sim.launches.Load(); n != 2 {
		t.Fatalf("%d launches, want 2 (3 images, then 1)", n)
	}
	_ = keep
}

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

func TestDevicePoolIsBounded(t *testing.T) {
	sim := useSim(t)
	d := state.devices[0]
	d.mem.limit = 8 << 20
	t.Cleanup(func() { d.mem.limit = gpuPoolBytes })
	var live []devBuf
	for i := 1; i <= 40; i++ {
		b, err := d.mem.get(i * 700_000) // many different sizes, as varying input shapes give
		if err != nil {
			t.Fatal(err)
		}
		live = append(live, b)
		if i%4 == 0 {
			for _, b := range live {
				d.mem.release(b)
			}
			live = live[:0]
		}
		if c, _ := d.mem.usage(); c > 8<<20 {
			t.Fatalf("pool caches %d bytes, limit %d", c, 8<<20)
		}
	}
	for _, b := range live {
		d.mem.release(b)
	}
	d.mem.trim(0)
	if c, u := d.mem.usage(); c != 0 || u != 0 || sim.allocated() != 0 {
		t.Fatalf("cached %d in use %d allocations %d", c, u, sim.allocated())
	}
}

func TestParseDevice(t *testing.T) {
	for in, want := range map[string]Placement{"cpu": {"cpu", -1}, "auto": {"auto", -1}, "cuda": {"cuda", -1}, "cuda:3": {"cuda", 3}} {
		if got, err := ParseDevice(in); err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%q: %+v %v", in, got, err)
		}
	}
	for _, in := range []string{"gpu", "cuda:", "cuda:-1", "cuda:01", "CUDA", "cuda:1x"} {
		var e *engine.Error
		if _, err := ParseDevice(in); !errors.As(err, &e) || e.Arg != "device" {
			t.Errorf("%q accepted: %v", in, err)
		}
	}
}

func TestNoDeviceIsAnError(t *testing.T) {
	if simOn {
		t.Skip("simulated GPU active")
	}
	state.mu.Lock()
	n := len(state.devices)
	state.mu.Unlock()
	if n > 0 {
		return // a real GPU is registered (CUDA build on a GPU machine): nothing to check here
	}
	_, err := execute([]engine.Job{{Plan: &engine.Plan{N: 1}, Src: unsafe.Pointer(&n), Out: unsafe.Pointer(&n)}}, Placement{Device: "cuda"})
	var e *engine.Error
	if !errors.As(err, &e) || e.Code != engine.CodeDeviceUnavailable {
		t.Fatalf("got %v", err)
	}
	if devs, why := Devices(); len(devs) != 0 || why == "" {
		t.Fatalf("devices %v reason %q", devs, why)
	}
}

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

// randomSpec draws a pipeline spec over the whole space the tracer can produce: dtypes, channel
// counts, batch, strides (contiguous, mirrored, planar), crop windows with flips, every resize
// kind, letterbox canvases, output flips, channel maps, normalisation dtypes and layouts.
func randomSpec(r *rand.Rand) *engine.Spec {
	dt := []engine.DType{engine.U8, engine.F32}[r.Intn(2)]
	es := int64(dt.Size())
	c := []int{1, 3, 4}[r.Intn(3)]
	h, w := 1+r.Intn(48), 1+r.Intn(48)
	n := []int{0, 0, 1, 3}[r.Intn(4)]
	s := &engine.Spec{In: engine.InputSpec{DType: dt, N: n, H: h, W: w, C: c}}
	hw, cc := int64(h*w), int64(c)
	switch r.Intn(3) {
	case 0: // contiguous HWC
		s.In.Strides = [4]int64{hw * cc * es, int64(w) * cc * es, cc * es, es}
	case 1: // mirrored columns (a[:, ::-1])
		s.In.Strides = [4]int64{hw * cc * es, int64(w) * cc * es, -cc * es, es}
	default: // planar (CHW memory viewed as HWC)
		s.In.Strides = [4]int64{hw * cc * es, int64(w) * es, es, hw * es}
	}
	ph, pw := 1+r.Intn(h), 1+r.Intn(w)
	y0, x0 := r.Intn(h-ph+1), r.Intn(w-pw+1)
	s.Pre = engine.View{Y0: y0, X0: x0, SY: 1, SX: 1, H: ph, W: pw}
	if r.Intn(2) == 0 {
		s.Pre.Y0, s.Pre.SY = y0+ph-1, -1
	}
	if r.Intn(2) == 0 {
		s.Pre.X0, s.Pre.SX = x0+pw-1, -1
	}
	kinds := []string{"none", "nearest", "nearest-exact", "nearest-pil", "nearest-torch", "bilinear", "bilinear", "bicubic", "bicubic", "area", "area"}
	kind := kinds[r.Intn(len(kinds))]
	s.Resize = engine.ResizeSpec{Kind: kind, H: ph, W: pw}
	if kind != "none" {
		s.Resize.H, s.Resize.W = 1+r.Intn(64), 1+r.Intn(64)
		s.Resize.Antialias = (kind == "bilinear" || kind == "bicubic") && r.Intn(2) == 0
		s.Resize.TorchU8 = (kind == "bilinear" || kind == "bicubic") && dt == engine.U8 && r.Intn(3) == 0
	}
	if kind == "area" && r.Intn(2) == 0 { // integer factors where the crop allows: cv2's resizeAreaFast_
		fy, fx := 1+r.Intn(4), 1+r.Intn(4)
		if r.Intn(3) == 0 && ph >= 2 && pw >= 2 { // uint8 2x2 blocks have a rounding rule of their own
			fy, fx = 2, 2
			ph, pw = ph&^1, pw&^1 // a shorter view stays inside the image, flipped or not
			s.Pre.H, s.Pre.W = ph, pw
		}
		s.Resize.H, s.Resize.W = max(ph/fy, 1), max(pw/fx, 1)
	}
	s.Canvas = engine.CanvasSpec{H: s.Resize.H, W: s.Resize.W}
	if r.Intn(3) == 0 { // letterbox
		s.Canvas.H += r.Intn(9)
		s.Canvas.W += r.Intn(9)
		s.Canvas.Top, s.Canvas.Left = r.Intn(s.Canvas.H-s.Resize.H+1), r.Intn(s.Canvas.W-s.Resize.W+1)
		s.Canvas.Pad = engine.PadValues{float64(r.Intn(256))}
	}
	s.Post = engine.View{Y0: 0, X0: 0, SY: 1, SX: 1, H: s.Canvas.H, W: s.Canvas.W}
	if r.Intn(2) == 0 {
		s.Post.Y0, s.Post.SY = s.Canvas.H-1, -1
	}
	if r.Intn(2) == 0 {
		s.Post.X0, s.Post.SX = s.Canvas.W-1, -1
	}
	oc := []int{1, 3, 4}[r.Intn(3)]
	for i := 0; i < oc; i++ {
		s.CMap = append(s.CMap, r.Intn(c))
	}
	if c == 4 && oc == 4 && r.Intn(2) == 0 { // RGBA in order: the kernels' vector pixel loads
		s.CMap = []int{0, 1, 2, 3}
	}
	if len(s.Canvas.Pad) == 1 && r.Intn(2) == 0 { // one pad value per output channel
		s.Canvas.Pad = nil
		for i := 0; i < oc; i++ {
			s.Canvas.Pad = append(s.Canvas.Pad, float64(r.Intn(256)))
		}
	}
	if r.Intn(3) != 0 {
		nm := &engine.NormSpec{Scale: []float64{1, 1.0 / 255}[r.Intn(2)], DType: []engine.DType{engine.F32, engine.F16}[r.Intn(2)], Layout: []string{"CHW", "HWC"}[r.Intn(2)]}
		for i := 0; i < oc; i++ {
			nm.Mean = append(nm.Mean, r.Float64())
			nm.Std = append(nm.Std, 0.1+float64(r.Float64()))
		}
		s.Norm = nm
	}
	return s
}

// Random specs: the GPU path (emulated kernels, real descriptors, chunked pipeline) returns the CPU
// engine's bytes for every one of them; a plan the kernels decline (GPUSupported) runs on the CPU.
func TestSimulatedGPURandomSpecs(t *testing.T) {
	useSim(t)
	r := rand.New(rand.NewSource(20261201))
	valid := 0
	seen := map[string]int{} // what the specs exercised: each kind, the kernel modes and end rules
	for i := 0; i < 800; i++ {
		s := randomSpec(r)
		p, err := engine.NewPlan(s)
		if err != nil {
			continue
		}
		valid++
		mode, e, vec := p.GPUDescriptorKind()
		seen[s.Resize.Kind]++
		seen[fmt.Sprintf("mode %d %s", mode, s.In.DType)]++
		seen[fmt.Sprintf("end %d %s", e, s.In.DType)]++
		if len(s.Canvas.Pad) > 1 {
			seen["per-channel pad"]++
		}
		if s.Resize.TorchU8 && !s.Resize.Antialias {
			seen["torch plain"]++
		}
		if vec {
			seen["vector loads "+string(s.In.DType)]++
		}
		_, src := gpuSource(p)
		want := runGuarded(t, p, src, 1)
		got := make([]byte, p.OutBytes())
		device := "cuda"
		if ok, _ := p.GPUSupported(); !ok { // Pillow's vertical-first order: the CPU engine runs it
			device = "cpu"
			seen["declined"]++
		}
		if ran, err := execute([]engine.Job{{Plan: p, Src: src, Out: unsafe.Pointer(&got[0])}}, Placement{Device: "cuda"}); err != nil || ran != device {
			t.Fatalf("spec %d: ran %q (want %q): %v", i, ran, device, err)
		}
		if string(got) != string(want) {
			js, _ := json.Marshal(s)
			t.Fatalf("spec %d: GPU differs from CPU\n%s", i, js)
		}
	}
	t.Logf("%d of 800 random specs valid and identical: %v", valid, seen)
	if valid < 600 {
		t.Fatalf("only %d of 800 random specs were valid: the generator drifted from Validate", valid)
	}
	for _, k := range []string{"none", "nearest", "nearest-exact", "nearest-pil", "nearest-torch", "bilinear", "bicubic", "area", "per-channel pad", "torch plain",
		"mode 0 u8", "mode 1 u8", "mode 2 u8", "mode 3 u8", "mode 0 f32", "mode 1 f32", "mode 2 f32", "mode 3 f32",
		"end 1 u8", "end 2 u8", "end 1 f32", "vector loads u8", "vector loads f32", "declined"} {
		if seen[k] < 5 {
			t.Errorf("random specs exercised %q only %d times", k, seen[k])
		}
	}
}

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

// RGBA in order, read one pixel per vector load (engine/gpu_desc.go: vecPixels; engine's
// TestGPUDescriptorVectorLoads proves the descriptor selects it) in every mode when the source
// address is aligned, otherwise (a misaligned source, another channel order) per channel: both give
// the CPU engine's bytes.
func TestSimulatedGPUVectorPixelLoads(t *testing.T) {
	useSim(t)
	kinds := []struct {
		kind string
		aa   bool
	}{{"none", false}, {"nearest", false}, {"bilinear", false}, {"bilinear", true}, {"bicubic", false}, {"bicubic", true}, {"area", false}}
	for _, k := range kinds {
		for _, dt := range []engine.DType{engine.U8, engine.F32} {
			for _, variant := range []string{"aligned", "misaligned", "bgra"} {
				name := fmt.Sprintf("%s aa=%v %s %s", k.kind, k.aa, dt, variant)
				h, w, oh, ow := 37, 29, 16, 12
				if k.kind == "none" {
					oh, ow = h, w
				}
				s := rgbSpec(h, w, k.kind, k.aa, oh, ow)
				es := int64(dt.Size())
				s.In = engine.InputSpec{DType: dt, N: 2, H: h, W: w, C: 4, Strides: [4]int64{int64(h*w*4) * es, int64(w*4) * es, 4 * es, es}}
				s.CMap = []int{0, 1, 2, 3}
				if variant == "bgra" {
					s.CMap = []int{2, 1, 0, 3}
				}
				s.Canvas = engine.CanvasSpec{H: oh + 3, W: ow + 2, Top: 1, Left: 2, Pad: engine.PadValues{1, 2, 3, 4}}
				s.Post = engine.View{Y0: oh + 2, X0: 0, SY: -1, SX: 1, H: oh + 3, W: ow + 2}
				p, err := engine.NewPlan(s)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				buf, src := gpuSource(p)
				if variant == "misaligned" { // the same pixels one element further on: not 4-element aligned
					buf2 := make([]byte, len(buf)+int(es)*5)
					at := int(es)
					for uintptr(unsafe.Pointer(&buf2[at]))%uintptr(4*es) == 0 {
						at += int(es)
					}
					copy(buf2[at:], buf)
					src = unsafe.Pointer(&buf2[at])
				}
				want := runGuarded(t, p, src, 1)
				got := make([]byte, p.OutBytes())
				if ran, err := execute([]engine.Job{{Plan: p, Src: src, Out: unsafe.Pointer(&got[0])}}, Placement{Device: "cuda"}); err != nil || ran != "cuda" {
					t.Fatalf("%s: ran %q: %v", name, ran, err)
				}
				if string(got) != string(want) {
					t.Fatalf("%s: GPU differs from CPU", name)
				}
			}
		}
	}
}
