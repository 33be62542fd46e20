package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
	"unsafe"
)

// useSim switches the simulated GPU in for one test, with small chunks so every batch is pipelined
// across both lanes, and fresh counters.
func useSim(t *testing.T) *simDevice {
	t.Helper()
	SimulateGPU(true)
	ResetGPUStats()
	old := gpuChunkBytes
	gpuChunkBytes = 1 << 16
	t.Cleanup(func() {
		gpuChunkBytes = old
		ResetGPUStats()
		SimulateGPU(false)
	})
	return gpu.devices[0].dev.(*simDevice)
}

// TestDescriptorLayout compiles kernels/goprep.h with the C compiler and compares every field offset
// and the struct sizes with the Go mirror that Encode writes and the emulator reads.
func TestDescriptorLayout(t *testing.T) {
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Fatal("no C compiler (cgo builds need one too):", err)
	}
	dir := t.TempDir()
	hdr, _ := filepath.Abs("../../kernels")
	var fields []string
	var want []string
	addAxis := func(prefix string, base uintptr) {
		a := gpAxis{}
		for _, f := range []struct {
			c string
			o uintptr
		}{{"off", unsafe.Offsetof(a.Off)}, {"wi", unsafe.Offsetof(a.WI)}, {"wf", unsafe.Offsetof(a.WF)}, {"cnt", unsafe.Offsetof(a.Cnt)},
			{"lo", unsafe.Offsetof(a.Lo)}, {"hi", unsafe.Offsetof(a.Hi)}, {"k", unsafe.Offsetof(a.K)}} {
			fields = append(fields, prefix+"."+f.c)
			want = append(want, fmt.Sprint(base+f.o))
		}
	}
	d := gpImage{}
	for _, f := range []struct {
		c string
		o uintptr
	}{{"src", unsafe.Offsetof(d.Src)}, {"out", unsafe.Offsetof(d.Out)}, {"lut", unsafe.Offsetof(d.LUT)}, {"lut16", unsafe.Offsetof(d.LUT16)},
		{"stride_c", unsafe.Offsetof(d.StrideC)}, {"mean", unsafe.Offsetof(d.Mean)}, {"std", unsafe.Offsetof(d.Std)},
		{"scale", unsafe.Offsetof(d.Scale)}, {"pad_f32", unsafe.Offsetof(d.PadF32)}, {"cmap", unsafe.Offsetof(d.CMap)},
		{"out_h", unsafe.Offsetof(d.OutH)}, {"out_w", unsafe.Offsetof(d.OutW)}, {"out_c", unsafe.Offsetof(d.OutC)}, {"in_c", unsafe.Offsetof(d.InC)},
		{"mode", unsafe.Offsetof(d.Mode)}, {"out_dtype", unsafe.Offsetof(d.OutDType)}, {"chw", unsafe.Offsetof(d.CHW)}, {"norm", unsafe.Offsetof(d.Norm)},
		{"pad_u8", unsafe.Offsetof(d.PadU8)}} {
		fields = append(fields, f.c)
		want = append(want, fmt.Sprint(f.o))
	}
	addAxis("rows", unsafe.Offsetof(d.Rows))
	addAxis("cols", unsafe.Offsetof(d.Cols))
	var prog strings.Builder
	prog.WriteString("#include <stdio.h>\n#include <stddef.h>\n#include \"goprep.h\"\nint main(void) {\n")
	for _, f := range fields {
		fmt.Fprintf(&prog, "printf(\"%%zu\\n\", offsetof(gp_image, %s));\n", f)
	}
	prog.WriteString("printf(\"%zu\\n%zu\\n\", sizeof(gp_image), sizeof(gp_axis));\nreturn 0;\n}\n")
	want = append(want, fmt.Sprint(unsafe.Sizeof(d)), fmt.Sprint(unsafe.Sizeof(gpAxis{})))
	src := filepath.Join(dir, "layout.c")
	if err := os.WriteFile(src, []byte(prog.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "layout")
	if out, err := exec.Command(cc, "-I", hdr, "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("compiling goprep.h: %v\n%s", err, out)
	}
	out, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Fields(string(out))
	names := append(fields, "sizeof(gp_image)", "sizeof(gp_axis)")
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%s: C says %s, Go says %s", names[i], got[i], want[i])
		}
	}
	if GPUImageBytes != 232 {
		t.Errorf("gp_image is %d bytes, the header documents 232", GPUImageBytes)
	}
}

// gpuCase is a plan and a source to run on both engines.
type gpuCase struct {
	name string
	spec *Spec
}

func gpuCases() []gpuCase {
	var cs []gpuCase
	add := func(name string, s *Spec) { cs = append(cs, gpuCase{name, s}) }
	for _, kind := range []string{"none", "nearest", "bilinear", "antialias"} {
		for _, dt := range []DType{U8, F32} {
			for _, norm := range []string{"", "f32-CHW", "f16-HWC"} {
				h, w, oh, ow := 37, 53, 19, 24
				if kind == "none" {
					oh, ow = h, w
				}
				if kind == "bilinear" && norm == "" {
					oh, ow = 70, 90 // upscale
				}
				k, aa := kind, false
				if kind == "antialias" {
					k, aa = "bilinear", true
				}
				s := rgbSpec(h, w, k, aa, oh, ow)
				s.In.DType = dt
				es := int64(dt.Size())
				s.In.N = 2
				s.In.Strides = [4]int64{int64(h*w*3) * es, int64(w*3) * es, 3 * es, es}
				if norm != "" {
					parts := strings.Split(norm, "-")
					s.Norm = &NormSpec{Mean: []float64{0.485, 0.456, 0.406}, Std: []float64{0.229, 0.224, 0.225}, Scale: 1.0 / 255, DType: DType(parts[0]), Layout: parts[1]}
				}
				add(fmt.Sprintf("%s-%s-%s", kind, dt, norm), s)
			}
		}
	}
	// Letterbox with padding, a vertical flip through the output view, BGR order.
	lb := rgbSpec(61, 47, "bilinear", false, 20, 15)
	lb.Canvas = CanvasSpec{H: 32, W: 32, Top: 6, Left: 8, Pad: PadValues{114}}
	lb.Post = View{31, 0, -1, 1, 32, 32}
	lb.CMap = []int{2, 1, 0}
	lb.Norm = &NormSpec{Mean: []float64{1, 2, 3}, Std: []float64{4, 5, 6}, Scale: 1, DType: F32, Layout: "CHW"}
	add("letterbox-bgr-vflip", lb)
	// A crop with a horizontal flip in the source view, and a mirrored source through negative strides.
	cr := rgbSpec(40, 30, "bilinear", false, 11, 13)
	cr.Pre = View{5, 25, 1, -1, 30, 20}
	cr.In.Strides = [4]int64{0, 90, -3, 1}
	add("crop-hflip-negative-stride", cr)
	// Gray to 3 channels and RGBA to 1 channel, float32.
	g := rgbSpec(33, 21, "bilinear", false, 9, 8)
	g.In.C, g.In.Strides = 1, [4]int64{0, 21, 1, 1}
	g.CMap = []int{0, 0, 0}
	add("gray-to-rgb", g)
	a4 := rgbSpec(33, 21, "bilinear", true, 9, 8)
	a4.In = InputSpec{DType: F32, H: 33, W: 21, C: 4, Strides: [4]int64{0, 21 * 16, 16, 4}}
	a4.CMap = []int{3}
	a4.Norm = &NormSpec{Mean: []float64{0.5}, Std: []float64{0.25}, Scale: 1, DType: F16, Layout: "CHW"}
	add("rgba-alpha-f16", a4)
	// Planar source (channel stride != 1).
	pl := rgbSpec(20, 16, "bilinear", false, 7, 9)
	pl.In.Strides = [4]int64{0, 16, 1, 320}
	add("planar-source", pl)
	return cs
}

// gpuSource fills a source buffer covering the plan's whole span, and returns the data pointer.
func gpuSource(p *Plan) ([]byte, unsafe.Pointer) {
	es := p.InDType().Size()
	buf := make([]byte, p.spanElems*es)
	if p.InDType() == F32 {
		f := unsafe.Slice((*float32)(unsafe.Pointer(&buf[0])), p.spanElems)
		for i := range f {
			f[i] = float32((i*37)%251) / 250
		}
	} else {
		for i := range buf {
			buf[i] = uint8(i*31 + i/7)
		}
	}
	return buf, unsafe.Pointer(&buf[-p.minOff*es])
}

func TestSimulatedGPUMatchesCPU(t *testing.T) {
	sim := useSim(t)
	for _, c := range gpuCases() {
		t.Run(c.name, func(t *testing.T) {
			p, err := NewPlan(c.spec)
			if err != nil {
				t.Fatal(err)
			}
			_, src := gpuSource(p)
			want := runGuarded(t, p, src, 1)
			got := make([]byte, p.OutBytes())
			ran, err := Execute([]Job{{p, src, unsafe.Pointer(&got[0])}}, Placement{Device: "cuda"})
			if err != nil || ran != "cuda" {
				t.Fatalf("ran on %q: %v", ran, err)
			}
			if string(got) != string(want) {
				t.Fatal("GPU kernels (emulated) differ from the CPU engine")
			}
			arr, ran, err := ExecuteToDevice([]Job{{Plan: p, Src: src}}, 0)
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
	if s := Stats(); s.PoolInUse != 0 || s.Failures != 0 || s.Fallbacks != 0 {
		t.Fatalf("after all calls: %+v", s)
	}
	// Every live allocation is an idle pooled buffer: nothing leaked.
	gpu.devices[0].mem.trim(0)
	hp := gpu.devices[0].host
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
	var jobs, cpuJobs []Job
	var outs, wants [][]byte
	var keep [][]byte
	for i, hw := range [][2]int{{50, 70}, {31, 17}, {224, 224}, {8, 300}} {
		s := imagenetSpec(0, hw[0], hw[1])
		if i == 1 {
			s.Resize.Antialias = true
		}
		p, err := NewPlan(s)
		if err != nil {
			t.Fatal(err)
		}
		buf, src := gpuSource(p)
		keep = append(keep, buf)
		o, w := make([]byte, p.OutBytes()), make([]byte, p.OutBytes())
		outs, wants = append(outs, o), append(wants, w)
		jobs = append(jobs, Job{p, src, unsafe.Pointer(&o[0])})
		cpuJobs = append(cpuJobs, Job{p, src, unsafe.Pointer(&w[0])})
	}
	if err := (CPU{}).Run(cpuJobs); err != nil {
		t.Fatal(err)
	}
	if ran, err := Execute(jobs, Placement{Device: "cuda"}); err != nil || ran != "cuda" {
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
	small, _ := NewPlan(rgbSpec(16, 16, "bilinear", false, 8, 8))
	large, _ := NewPlan(imagenetSpec(16, 512, 512))
	for _, c := range []struct {
		p    *Plan
		want string
	}{{small, "cpu"}, {large, "cuda"}} {
		buf, src := gpuSource(c.p)
		out := make([]byte, c.p.OutBytes())
		ran, err := Execute([]Job{{c.p, src, unsafe.Pointer(&out[0])}}, Placement{Device: "auto"})
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
	p, _ := NewPlan(imagenetSpec(3, 64, 80))
	_, src := gpuSource(p)
	want := runGuarded(t, p, src, 1)
	run := func() string {
		t.Helper()
		got := make([]byte, p.OutBytes())
		ran, err := Execute([]Job{{p, src, unsafe.Pointer(&got[0])}}, Placement{Device: "cuda"})
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Fatalf("result after %s run is wrong", ran)
		}
		return ran
	}
	if err := InjectGPUFault("launch", 1); err != nil {
		t.Fatal(err)
	}
	if ran := run(); ran != "cpu" {
		t.Fatal("a failed launch did not fall back to the CPU")
	}
	if ran := run(); ran != "cuda" {
		t.Fatal("one failure must not stop GPU use")
	}
	_ = InjectGPUFault("oom", 3)
	for i := 0; i < 3; i++ {
		if ran := run(); ran != "cpu" {
			t.Fatalf("call %d under OOM ran on %s", i, ran)
		}
	}
	s := Stats()
	if !s.BreakerOpen || s.BreakerTrips != 1 || s.Failures != 4 || s.Fallbacks != 4 || !strings.Contains(s.LastError, "out of device memory") {
		t.Fatalf("stats after 3 consecutive failures: %+v", s)
	}
	calls := s.Calls
	if ran := run(); ran != "cpu" || Stats().Calls != calls {
		t.Fatal("an open breaker must keep calls off the GPU")
	}
	time.Sleep(250 * time.Millisecond)
	if ran := run(); ran != "cuda" || Stats().BreakerOpen {
		t.Fatal("the breaker did not close after its cool-down")
	}
	// Device output falls back too: computed on the CPU, then uploaded.
	_ = InjectGPUFault("launch", 1)
	arr, ran, err := ExecuteToDevice([]Job{{Plan: p, Src: src}}, 0)
	if err != nil || ran != "cpu" || string(unsafe.Slice((*byte)(ptr(arr.Ptr)), arr.Bytes)) != string(want) {
		t.Fatalf("device-output fallback: %s %v", ran, err)
	}
	arr.Free()
	if err := InjectGPUFault("bogus", 1); err == nil {
		t.Fatal("unknown fault kind accepted")
	}
}

func TestDevicePoolIsBounded(t *testing.T) {
	sim := useSim(t)
	d := gpu.devices[0]
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
	for in, want := range map[string]Placement{"cpu": {"cpu", 0}, "auto": {"auto", 0}, "cuda": {"cuda", 0}, "cuda:3": {"cuda", 3}} {
		if got, err := ParseDevice(in); err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%q: %+v %v", in, got, err)
		}
	}
	for _, in := range []string{"gpu", "cuda:", "cuda:-1", "cuda:01", "CUDA", "cuda:1x"} {
		var e *Error
		if _, err := ParseDevice(in); !errors.As(err, &e) || e.Arg != "device" {
			t.Errorf("%q accepted: %v", in, err)
		}
	}
}

func TestNoDeviceIsAnError(t *testing.T) {
	if simOn {
		t.Skip("simulated GPU active")
	}
	gpu.mu.Lock()
	n := len(gpu.devices)
	gpu.mu.Unlock()
	if n > 0 {
		return // a real GPU is registered (CUDA build on a GPU machine): nothing to check here
	}
	_, err := Execute([]Job{{Plan: &Plan{N: 1}, Src: unsafe.Pointer(&n), Out: unsafe.Pointer(&n)}}, Placement{Device: "cuda"})
	var e *Error
	if !errors.As(err, &e) || e.Code != CodeDeviceUnavailable {
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
	p, _ := NewPlan(imagenetSpec(16, 200, 180))
	_, src := gpuSource(p)
	want := runGuarded(t, p, src, 2)
	got := make([]byte, p.OutBytes())
	if ran, err := Execute([]Job{{p, src, unsafe.Pointer(&got[0])}}, Placement{Device: "cuda"}); err != nil || ran != "cuda" {
		t.Fatalf("%s %v", ran, err)
	}
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
	p, _ := NewPlan(imagenetSpec(2, 64, 80))
	_, src := gpuSource(p)
	want := runGuarded(t, p, src, 1)
	_ = InjectGPUFault("lost", 1)
	for i := 0; i < 5; i++ {
		got := make([]byte, p.OutBytes())
		ran, err := Execute([]Job{{p, src, unsafe.Pointer(&got[0])}}, Placement{Device: "cuda"})
		if err != nil || ran != "cpu" || string(got) != string(want) {
			t.Fatalf("call %d after loss: ran %q err %v", i, ran, err)
		}
	}
	if s := Stats(); s.Calls != 1 || s.Fallbacks != 5 {
		t.Fatalf("only the first call may reach the lost device: %+v", s)
	}
	devs, why := Devices()
	if len(devs) != 0 || !strings.Contains(why, "cuda:0 was lost") {
		t.Fatalf("devices %v reason %q", devs, why)
	}
	big, _ := NewPlan(imagenetSpec(16, 512, 512))
	if _, ok := wantGPU([]Job{{Plan: big}}); ok {
		t.Fatal("auto placement chose a lost device")
	}
}

// randomSpec draws a pipeline spec over the whole space the tracer can produce: dtypes, channel
// counts, batch, strides (contiguous, mirrored, planar), crop windows with flips, every resize
// kind, letterbox canvases, output flips, channel maps, normalisation dtypes and layouts.
func randomSpec(r *rand.Rand) *Spec {
	dt := []DType{U8, F32}[r.Intn(2)]
	es := int64(dt.Size())
	c := []int{1, 3, 4}[r.Intn(3)]
	h, w := 1+r.Intn(48), 1+r.Intn(48)
	n := []int{0, 0, 1, 3}[r.Intn(4)]
	s := &Spec{In: InputSpec{DType: dt, N: n, H: h, W: w, C: c}}
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
	s.Pre = View{Y0: y0, X0: x0, SY: 1, SX: 1, H: ph, W: pw}
	if r.Intn(2) == 0 {
		s.Pre.Y0, s.Pre.SY = y0+ph-1, -1
	}
	if r.Intn(2) == 0 {
		s.Pre.X0, s.Pre.SX = x0+pw-1, -1
	}
	kind := []string{"none", "nearest", "bilinear", "bilinear"}[r.Intn(4)]
	s.Resize = ResizeSpec{Kind: kind, H: ph, W: pw}
	if kind != "none" {
		s.Resize.H, s.Resize.W = 1+r.Intn(64), 1+r.Intn(64)
		s.Resize.Antialias = kind == "bilinear" && r.Intn(2) == 0
	}
	s.Canvas = CanvasSpec{H: s.Resize.H, W: s.Resize.W}
	if r.Intn(3) == 0 { // letterbox
		s.Canvas.H += r.Intn(9)
		s.Canvas.W += r.Intn(9)
		s.Canvas.Top, s.Canvas.Left = r.Intn(s.Canvas.H-s.Resize.H+1), r.Intn(s.Canvas.W-s.Resize.W+1)
		s.Canvas.Pad = PadValues{float64(r.Intn(256))}
	}
	s.Post = View{Y0: 0, X0: 0, SY: 1, SX: 1, H: s.Canvas.H, W: s.Canvas.W}
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
	if r.Intn(3) != 0 {
		nm := &NormSpec{Scale: []float64{1, 1.0 / 255}[r.Intn(2)], DType: []DType{F32, F16}[r.Intn(2)], Layout: []string{"CHW", "HWC"}[r.Intn(2)]}
		for i := 0; i < oc; i++ {
			nm.Mean = append(nm.Mean, r.Float64())
			nm.Std = append(nm.Std, 0.1+r.Float64())
		}
		s.Norm = nm
	}
	return s
}

// Random specs: the GPU path (emulated kernels, real descriptors, chunked pipeline) returns the CPU
// engine's bytes for every one of them.
func TestSimulatedGPURandomSpecs(t *testing.T) {
	useSim(t)
	r := rand.New(rand.NewSource(20261201))
	valid := 0
	for i := 0; i < 400; i++ {
		s := randomSpec(r)
		p, err := NewPlan(s)
		if err != nil {
			continue
		}
		valid++
		_, src := gpuSource(p)
		want := runGuarded(t, p, src, 1)
		got := make([]byte, p.OutBytes())
		if ran, err := Execute([]Job{{p, src, unsafe.Pointer(&got[0])}}, Placement{Device: "cuda"}); err != nil || ran != "cuda" {
			t.Fatalf("spec %d: ran %q: %v", i, ran, err)
		}
		if string(got) != string(want) {
			js, _ := json.Marshal(s)
			t.Fatalf("spec %d: GPU differs from CPU\n%s", i, js)
		}
	}
	t.Logf("%d of 400 random specs valid and identical", valid)
	if valid < 300 {
		t.Fatalf("only %d of 400 random specs were valid: the generator drifted from Validate", valid)
	}
}
