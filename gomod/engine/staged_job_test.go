package engine

import (
	"bytes"
	"errors"
	"math"
	"sync/atomic"
	"testing"
	"unsafe"
)

// stagedPlans is a staged chain's plans: h x w uint8 RGB -> crop + resize to 20x24 uint8 HWC
// (flipped when flip), then 20x24 uint8 -> normalized float32 CHW.
func stagedPlans(t *testing.T, h, w int, flip bool) (*Plan, *Plan) {
	t.Helper()
	s := rgbSpec(h, w, "bilinear", true, 20, 24)
	s.Pre = View{1, 2, 1, 1, h - 3, w - 5}
	if flip {
		s.Post = View{0, 23, 1, -1, 20, 24}
	}
	p1, err := NewPlan(s)
	if err != nil {
		t.Fatal(err)
	}
	s2 := rgbSpec(20, 24, "none", false, 20, 24)
	s2.Norm = &NormSpec{Mean: []float64{0.485, 0.456, 0.406}, Std: []float64{0.229, 0.224, 0.225}, Scale: 1.0 / 255, DType: F32, Layout: "CHW"}
	p2, err := NewPlan(s2)
	if err != nil {
		t.Fatal(err)
	}
	return p1, p2
}

// itemSteps is item i's colour program: its own factors and order, hue and grayscale among them.
func itemSteps(i int) []ColorStep {
	// each product rounded before the add (scripts/check_fma.sh: the same factors on every architecture)
	st := []ColorStep{{ColorBrightness, 0.7 + float64(0.05*float64(i))}, {ColorContrast, 1.3 - float64(0.04*float64(i))},
		{ColorSaturation, 0.6 + float64(0.1*float64(i))}, {ColorHue, -0.1 + float64(0.03*float64(i))}}
	st[0], st[i%4] = st[i%4], st[0]
	if i%3 == 2 {
		st = append(st, ColorStep{ColorGray, 0})
	}
	return st
}

// A staged job equals its three steps run one after the other (plan 1, the colour steps, plan 2),
// bit for bit, for Pillow's and both tensor numerics, array and encoded sources, any thread count.
func TestStagedJobsEqualThreeSteps(t *testing.T) {
	const n = 6
	for _, num := range []int{NumericsPIL, NumericsTensorV1, NumericsTensorV2} {
		for _, threads := range []int{1, 3} {
			p2s := make([]*Plan, n)
			jobs := make([]Job, n)
			step := 3 * 20 * 24 * 4
			want := make([]byte, n*step)
			got := bytes.Repeat([]byte{0xAB}, n*step)
			srcs := make([][]byte, n)
			for i := range n {
				f := &fakeEncoded{seed: byte(i * 29)}
				p1, p2 := stagedPlans(t, 37+i, 53-i, i%2 == 1)
				p2s[i] = p2
				srcs[i] = f.image((37 + i) * (53 - i) * 3)
				mid := make([]byte, 20*24*3)
				if err := runCPU([]Job{{Plan: p1, Src: unsafe.Pointer(&srcs[i][0]), Out: unsafe.Pointer(&mid[0])}}, 1, nil); err != nil {
					t.Fatal(err)
				}
				var err error
				if num == NumericsPIL {
					err = ColorPIL(mid, 20, 24, 3, itemSteps(i))
				} else {
					err = ColorTensor(mid, 20, 24, 3, num == NumericsTensorV2, itemSteps(i))
				}
				if err != nil {
					t.Fatal(err)
				}
				if err := runCPU([]Job{{Plan: p2, Src: unsafe.Pointer(&mid[0]), Out: unsafe.Pointer(&want[i*step])}}, 1, nil); err != nil {
					t.Fatal(err)
				}
				stages := []Stage{{Numerics: num, Steps: itemSteps(i), Plan: p2}}
				if err := CheckStages(p1, stages); err != nil {
					t.Fatal(err)
				}
				jobs[i] = Job{Plan: p1, Out: unsafe.Pointer(&got[i*step]), Stages: stages}
				if i%2 == 0 {
					jobs[i].Enc = f
				} else {
					jobs[i].Src = unsafe.Pointer(&srcs[i][0])
				}
			}
			if err := (CPU{Threads: threads}).Run(jobs); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("numerics %d, threads %d: the staged call differs from the three steps", num, threads)
			}
		}
	}
}

// f32Plan is the plan of a contiguous float32 h x w RGB source resized (kind) to oh x ow with norm.
func f32Plan(t *testing.T, h, w int, kind string, oh, ow int, norm *NormSpec) *Plan {
	t.Helper()
	s := rgbSpec(h, w, kind, false, oh, ow)
	s.In.DType, s.In.Strides = F32, [4]int64{0, int64(w * 3 * 4), 3 * 4, 4}
	s.Norm = norm
	p, err := NewPlan(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// float32 scratch images take the tensor numerics' float kernels (ColorTensorF32), bit for bit.
func TestStagedJobsFloat32(t *testing.T) {
	p1 := f32Plan(t, 31, 29, "bilinear", 16, 12, &NormSpec{Mean: []float64{0, 0, 0}, Std: []float64{1, 1, 1}, Scale: 1, DType: F32, Layout: "HWC"})
	p2 := f32Plan(t, 16, 12, "none", 16, 12, &NormSpec{Mean: []float64{0.5, 0.5, 0.5}, Std: []float64{0.25, 0.5, 0.75}, Scale: 1, DType: F32, Layout: "CHW"})
	src := make([]float32, 31*29*3)
	for i := range src {
		src[i] = float32(i%97) / 96
	}
	mid := make([]float32, 16*12*3)
	want := make([]float32, 16*12*3)
	got := make([]float32, 16*12*3)
	steps := itemSteps(2)
	if err := runCPU([]Job{{Plan: p1, Src: unsafe.Pointer(&src[0]), Out: unsafe.Pointer(&mid[0])}}, 1, nil); err != nil {
		t.Fatal(err)
	}
	if err := ColorTensorF32(mid, 16, 12, 3, true, steps); err != nil {
		t.Fatal(err)
	}
	if err := runCPU([]Job{{Plan: p2, Src: unsafe.Pointer(&mid[0]), Out: unsafe.Pointer(&want[0])}}, 1, nil); err != nil {
		t.Fatal(err)
	}
	stages := []Stage{{Numerics: NumericsTensorV2, Steps: steps, Plan: p2}}
	if err := CheckStages(p1, stages); err != nil {
		t.Fatal(err)
	}
	if err := runCPU([]Job{{Plan: p1, Src: unsafe.Pointer(&src[0]), Out: unsafe.Pointer(&got[0]), Stages: stages}}, 1, nil); err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("element %d: %v, want %v", i, got[i], want[i])
		}
	}
	if err := CheckStages(p1, []Stage{{Numerics: NumericsPIL, Steps: steps, Plan: p2}}); err == nil {
		t.Fatal("Pillow's numerics took a float32 image")
	}
}

// CheckStages refuses a stage whose plan does not read the image before it, one after a CHW output,
// an unknown op or numerics, and a non-finite factor.
func TestCheckStagesRefuses(t *testing.T) {
	p1, p2 := stagedPlans(t, 40, 40, false)
	other, _ := stagedPlans(t, 40, 40, false) // reads 40x40, not the 20x24 before it
	inf := math.Inf(1)
	cases := map[string][]Stage{
		"wrong size":   {{Plan: other}},
		"after CHW":    {{Plan: p2}, {Plan: p2}},
		"unknown op":   {{Plan: p2, Steps: []ColorStep{{NumColorOps, 1}}}},
		"numerics":     {{Plan: p2, Numerics: NumNumerics}},
		"infinite":     {{Plan: p2, Steps: []ColorStep{{ColorContrast, inf}}}},
		"missing plan": {{}},
	}
	for name, st := range cases {
		var e *Error
		if err := CheckStages(p1, st); !errors.As(err, &e) || e.Code != CodeInvalidArgument {
			t.Errorf("%s: got %v", name, err)
		}
	}
	if err := CheckStages(p1, []Stage{{Plan: p2}}); err != nil {
		t.Fatal(err)
	}
}

// The stop flag ends a staged call between images: a call it cut short returns CodeCancelled, and on
// one thread the later items are never written.
func TestStagedJobsCancel(t *testing.T) {
	p1, p2 := stagedPlans(t, 40, 40, false)
	const n = 5
	step := 3 * 20 * 24 * 4
	for _, threads := range []int{1, 3} {
		var stop int32
		out := bytes.Repeat([]byte{0xAB}, n*step)
		jobs := make([]Job, n)
		for i := range n {
			f := &fakeEncoded{seed: byte(i)}
			if i == 0 {
				f.onStart = func() { atomic.StoreInt32(&stop, 1) }
			}
			jobs[i] = Job{Plan: p1, Enc: f, Out: unsafe.Pointer(&out[i*step]), Stages: []Stage{{Plan: p2, Steps: itemSteps(i)}}}
		}
		var e *Error
		if err := (CPU{Threads: threads, Stop: &stop}).Run(jobs); !errors.As(err, &e) || e.Code != CodeCancelled {
			t.Fatalf("threads=%d: got %v, want cancelled", threads, err)
		}
		if threads == 1 && !bytes.Equal(out[step:], bytes.Repeat([]byte{0xAB}, (n-1)*step)) {
			t.Fatalf("threads=%d: a later item was written after the stop", threads)
		}
	}
}

// Staged jobs never run on the GPU kernels.
func TestStagedJobsNotGPUCapable(t *testing.T) {
	p1, p2 := stagedPlans(t, 40, 40, false)
	var b [4]byte
	if GPUCapable([]Job{{Plan: p1, Src: unsafe.Pointer(&b[0]), Out: unsafe.Pointer(&b[0]), Stages: []Stage{{Plan: p2}}}}) {
		t.Fatal("a staged job was GPU capable")
	}
}

// bigStagePlans is a staged chain whose scratch image is bigger than bigDecodeBuf: a 4800x4800 RGB
// uint8 source copied by plan 1 (69 MB), then resized to 8x8 by the stage's plan.
func bigStagePlans(t *testing.T) (*Plan, *Plan) {
	t.Helper()
	p1, err := NewPlan(rgbSpec(4800, 4800, "none", false, 4800, 4800))
	if err != nil {
		t.Fatal(err)
	}
	p2, err := NewPlan(rgbSpec(4800, 4800, "bilinear", false, 8, 8))
	if err != nil {
		t.Fatal(err)
	}
	return p1, p2
}

// A staged call whose scratch image is bigger than bigDecodeBuf leaves no such image in the pool of
// decode buffers (the buffer itself is kept: its decode buffer is small).
func TestStagedBigStageImageNotPooled(t *testing.T) {
	p1, p2 := bigStagePlans(t)
	if int64(p1.OutImageElems()) <= bigDecodeBuf {
		t.Fatalf("the stage image (%d bytes) is not above bigDecodeBuf", p1.OutImageElems())
	}
	ReleaseDecodeBuffers()
	t.Cleanup(ReleaseDecodeBuffers)
	src := make([]byte, 4800*4800*3)
	out := make([]byte, 8*8*3)
	jobs := []Job{{Plan: p1, Src: unsafe.Pointer(&src[0]), Out: unsafe.Pointer(&out[0]), Stages: []Stage{{Plan: p2}}}}
	if err := (CPU{Threads: 1}).Run(jobs); err != nil {
		t.Fatal(err)
	}
	decodeBufs.Lock()
	defer decodeBufs.Unlock()
	if len(decodeBufs.free) == 0 {
		t.Fatal("the worker's buffer was not pooled")
	}
	for _, b := range decodeBufs.free {
		for k, s := range b.stage {
			if cap(s) > bigDecodeBuf {
				t.Fatalf("a pooled buffer kept a %d-byte stage image %d", cap(s), k)
			}
		}
	}
}

// A staged job's two scratch images count against MaxPlanBytes: a call with big stage images runs
// on fewer threads, at most MaxPlanBytes of rows and images live at once; without stages the policy
// is the rows' alone.
func TestStagedImagesLimitThreads(t *testing.T) {
	p1, p2 := bigStagePlans(t)
	j := Job{Plan: p1, Stages: []Stage{{Plan: p2}}}
	images := stagedImages(&j)
	if want := int64(2 * 4800 * 4800 * 3); images != want {
		t.Fatalf("stagedImages = %d, want %d", images, want)
	}
	if n := stagedImages(&Job{Plan: p1}); n != 0 {
		t.Fatalf("a job without stages holds %d bytes of stage images", n)
	}
	scratch := max(p1.est.Scratch, stagesScratch(j.Stages))
	ws, threads := scratchWorkers(scratch, images, 64)
	if !ws.pooled || threads < 1 || threads >= 64 || int64(threads)*(scratch+images) > MaxPlanBytes {
		t.Fatalf("pooled=%v threads=%d for %d bytes per worker", ws.pooled, threads, scratch+images)
	}
	if _, all := scratchWorkers(scratch, 0, 64); all != 64 {
		t.Fatalf("the rows alone limited the threads to %d", all)
	}
}

// The stop flag set between a staged job's stages (by plan 1's output: the test pools a decode
// buffer whose first scratch image holds the flag) cancels the call before the stage's plan runs:
// the call returns CodeCancelled, no output is written and the later items are never decoded.
func TestStagedJobsCancelBetweenStages(t *testing.T) {
	p1, p2 := stagedPlans(t, 40, 40, false)
	const n, size = 3, 20 * 24 * 3
	step := 3 * 20 * 24 * 4
	f0 := &fakeEncoded{seed: 0}
	steps := itemSteps(0)
	// mid: item 0's image after plan 1 and its colour steps; the flag goes at a word plan 1 makes
	// nonzero and the colour steps keep nonzero.
	src := f0.image(40 * 40 * 3)
	first, mid := make([]byte, size), make([]byte, size)
	if err := runCPU([]Job{{Plan: p1, Src: unsafe.Pointer(&src[0]), Out: unsafe.Pointer(&first[0])}}, 1, nil); err != nil {
		t.Fatal(err)
	}
	copy(mid, first)
	if err := ColorPIL(mid, 20, 24, 3, steps); err != nil {
		t.Fatal(err)
	}
	off := -1
	for o := size - 4; o >= 0; o -= 4 {
		if !bytes.Equal(first[o:o+4], make([]byte, 4)) && !bytes.Equal(mid[o:o+4], make([]byte, 4)) {
			off = o
			break
		}
	}
	if off < 0 {
		t.Fatal("plan 1's output has no word that stays nonzero")
	}
	ReleaseDecodeBuffers()
	t.Cleanup(ReleaseDecodeBuffers) // the seeded buffer holds the flag: no later call may get it
	scratch := make([]byte, size)
	stop := (*int32)(unsafe.Pointer(&scratch[off]))
	decodeBufs.Lock()
	decodeBufs.free = append(decodeBufs.free, &decodeBuf{stage: [2][]byte{scratch[:size:size], nil}})
	decodeBufs.Unlock()

	out := bytes.Repeat([]byte{0xAB}, n*step)
	encs := make([]*fakeEncoded, n)
	jobs := make([]Job, n)
	for i := range n {
		encs[i] = &fakeEncoded{seed: byte(i)}
		st := itemSteps(i)
		if i == 0 {
			st = steps
		}
		jobs[i] = Job{Plan: p1, Enc: encs[i], Out: unsafe.Pointer(&out[i*step]), Stages: []Stage{{Plan: p2, Steps: st}}}
	}
	var e *Error
	if err := (CPU{Threads: 1, Stop: stop}).Run(jobs); !errors.As(err, &e) || e.Code != CodeCancelled {
		t.Fatalf("got %v, want cancelled", err)
	}
	if !bytes.Equal(scratch, mid) {
		t.Fatal("item 0's plan 1 and colour steps did not run to the end before the stop")
	}
	if !bytes.Equal(out, bytes.Repeat([]byte{0xAB}, n*step)) {
		t.Fatal("an output was written after the stop")
	}
	for i := 1; i < n; i++ {
		if d := encs[i].decoded.Load(); d != 0 {
			t.Fatalf("item %d was decoded %d times after the stop", i, d)
		}
	}
}
