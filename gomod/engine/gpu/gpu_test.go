package gpu

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"reflect"
	"strings"
	"testing"
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
	for _, kind := range []string{"none", "nearest", "bilinear", "antialias", "bicubic", "bicubic-aa", "lanczos", "area", "area-2x"} {
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
				case "lanczos": // Pillow's LANCZOS: antialias only
					aa = true
				case "area-2x": // integer factors (resizeAreaFast_'s 2x2 rule on uint8)
					k, h, w, oh, ow = "area", 38, 54, 19, 27
				}
				if (kind == "bicubic" || kind == "bicubic-aa" || kind == "lanczos") && norm == "" {
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
	kinds := []string{"none", "nearest", "nearest-exact", "nearest-pil", "nearest-torch", "bilinear", "bilinear", "bicubic", "bicubic", "lanczos", "area", "area"}
	kind := kinds[r.Intn(len(kinds))]
	s.Resize = engine.ResizeSpec{Kind: kind, H: ph, W: pw}
	if kind != "none" {
		s.Resize.H, s.Resize.W = 1+r.Intn(64), 1+r.Intn(64)
		s.Resize.Antialias = (kind == "bilinear" || kind == "bicubic") && r.Intn(2) == 0 || kind == "lanczos"
		s.Resize.TorchU8 = (kind == "bilinear" || kind == "bicubic" || kind == "lanczos") && dt == engine.U8 && r.Intn(3) == 0
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
