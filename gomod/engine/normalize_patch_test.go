package engine

import (
	"errors"
	"math"
	"math/rand"
	"testing"
	"unsafe"
)

// patchCase is one spec run twice: in CHW and in the patch layout.
type patchCase struct {
	name         string
	dt           DType
	n, h, w      int
	kind         string
	aa, torchU8  bool
	oh, ow       int
	cmap         []int
	size, merge  int
	temporal     int
	letterboxPad bool // the content placed on a larger canvas (padding rows and columns)
}

func (c patchCase) spec(patch bool) *Spec {
	es := int64(c.dt.Size())
	s := &Spec{
		In:     InputSpec{DType: c.dt, N: c.n, H: c.h, W: c.w, C: 3, Strides: [4]int64{es * int64(c.h*c.w*3), es * int64(c.w*3), es * 3, es}},
		Pre:    View{0, 0, 1, 1, c.h, c.w},
		Resize: ResizeSpec{Kind: c.kind, Antialias: c.aa, TorchU8: c.torchU8, H: c.oh, W: c.ow},
		Canvas: CanvasSpec{H: c.oh, W: c.ow},
		Post:   View{0, 0, 1, 1, c.oh, c.ow},
		CMap:   c.cmap,
	}
	if c.letterboxPad { // content shrunk by one patch each way, centred: padding on all four sides
		d := c.size
		s.Resize.H, s.Resize.W = c.oh-d, c.ow-d
		s.Canvas = CanvasSpec{H: c.oh, W: c.ow, Top: d / 2, Left: d / 2, Pad: PadValues{7}}
	}
	mean, std := make([]float64, len(c.cmap)), make([]float64, len(c.cmap))
	for i := range mean {
		mean[i], std[i] = 0.4+float64(0.03*float64(i)), 0.2+float64(0.01*float64(i)) // products rounded: no FMA (scripts/check_fma.sh)
	}
	s.Norm = &NormSpec{Mean: mean, Std: std, Scale: 1.0 / 255, DType: F32, Layout: "CHW"}
	if patch {
		s.Norm.Patch = &PatchSpec{Size: c.size, Merge: c.merge, Temporal: c.temporal}
	}
	return s
}

// patchReference lays a (n, C, H, W) result out as Qwen2-VL's processor does, written as its
// reshape(n, c, gh/m, m, p, gw/m, m, p).permute(0, 2, 5, 3, 6, 1, 4, 7) with the temporal copies after
// the channel axis: the values in the order of the permuted axes (b, A, C, B, D, c, t, I, J).
func patchReference(chw []float32, n, c, h, w, p, m, t int) []float32 {
	out := make([]float32, 0, n*c*t*h*w)
	gh, gw := h/p, w/p
	for b := 0; b < n; b++ {
		for A := 0; A < gh/m; A++ {
			for C := 0; C < gw/m; C++ {
				for B := 0; B < m; B++ {
					for D := 0; D < m; D++ {
						for ch := 0; ch < c; ch++ {
							for k := 0; k < t; k++ {
								for I := 0; I < p; I++ {
									for J := 0; J < p; J++ {
										y, x := (A*m+B)*p+I, (C*m+D)*p+J
										out = append(out, chw[((b*c+ch)*h+y)*w+x])
									}
								}
							}
						}
					}
				}
			}
		}
	}
	return out
}

func asF32(b []byte) []float32 { return unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), len(b)/4) }

// The patch layout equals the CHW result rearranged by the processor's permute, bit for bit, on every
// emit path (uint8 sources through the lookup tables, float32 sources through the computed
// normalisation), for 1, 3 and 4 output channels, T = 1 and 2, batches, padding, and kinds whose CHW
// plans take the fast kernels (bilinear: fastRow; Pillow antialias: aaRow), on 1 and 3 threads.
func TestPatchLayoutEqualsPermutedCHW(t *testing.T) {
	forceThreads(t)
	rgb := []int{0, 1, 2}
	cases := []patchCase{
		{name: "u8-aa-bicubic-T2", dt: U8, h: 37, w: 61, kind: "bicubic", aa: true, oh: 56, ow: 84, cmap: rgb, size: 14, merge: 2, temporal: 2},
		{name: "u8-torch-bicubic-batch", dt: U8, n: 3, h: 50, w: 41, kind: "bicubic", aa: true, torchU8: true, oh: 28, ow: 56, cmap: rgb, size: 14, merge: 2, temporal: 2},
		{name: "u8-bilinear-T1", dt: U8, n: 2, h: 33, w: 20, kind: "bilinear", oh: 24, ow: 36, cmap: rgb, size: 4, merge: 3, temporal: 1},
		{name: "u8-none-gray", dt: U8, h: 12, w: 18, kind: "none", oh: 12, ow: 18, cmap: []int{1}, size: 3, merge: 2, temporal: 2},
		{name: "u8-four-channels-T3", dt: U8, n: 2, h: 30, w: 30, kind: "bilinear", aa: true, oh: 20, ow: 10, cmap: []int{2, 1, 0, 1}, size: 5, merge: 1, temporal: 3},
		{name: "u8-letterbox", dt: U8, h: 40, w: 25, kind: "bilinear", oh: 16, ow: 24, cmap: rgb, size: 4, merge: 2, temporal: 2, letterboxPad: true},
		{name: "u8-size16-T2", dt: U8, h: 45, w: 70, kind: "bilinear", aa: true, oh: 32, ow: 64, cmap: rgb, size: 16, merge: 2, temporal: 2},
		{name: "f32-size16-batch", dt: F32, n: 2, h: 20, w: 21, kind: "bicubic", oh: 16, ow: 48, cmap: rgb, size: 16, merge: 1, temporal: 2},
		{name: "f32-bicubic-T2", dt: F32, n: 2, h: 31, w: 29, kind: "bicubic", oh: 28, ow: 56, cmap: rgb, size: 14, merge: 2, temporal: 2},
		{name: "f32-gray-T1", dt: F32, h: 9, w: 16, kind: "bilinear", oh: 8, ow: 16, cmap: []int{0}, size: 2, merge: 2, temporal: 1},
		{name: "f32-four-channels", dt: F32, h: 7, w: 11, kind: "nearest", oh: 12, ow: 6, cmap: []int{0, 1, 2, 2}, size: 3, merge: 2, temporal: 2},
		{name: "f32-letterbox", dt: F32, n: 2, h: 10, w: 13, kind: "bilinear", aa: true, oh: 12, ow: 12, cmap: rgb, size: 2, merge: 3, temporal: 2, letterboxPad: true},
	}
	rng := rand.New(rand.NewSource(40))
	var tookAA, tookFast bool // the CHW plans the cases compare against took the fast kernels
	t.Cleanup(func() {
		if !tookAA || !tookFast {
			t.Errorf("no case's CHW plan took aaRow (%v) or fastRow (%v): the cases no longer cover them", tookAA, tookFast)
		}
	})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			imgs := max(c.n, 1)
			var src unsafe.Pointer
			if c.dt == U8 {
				b := make([]uint8, imgs*c.h*c.w*3)
				for i := range b {
					b[i] = uint8(rng.Intn(256))
				}
				src = unsafe.Pointer(&b[0])
			} else {
				b := make([]float32, imgs*c.h*c.w*3)
				for i := range b {
					b[i] = float32(rng.Intn(256)) + rng.Float32()
				}
				src = unsafe.Pointer(&b[0])
			}
			plain, patch := mustNewPlan(t, c.spec(false)), mustNewPlan(t, c.spec(true))
			tookAA, tookFast = tookAA || plain.aa != nil, tookFast || plain.fast != nil
			oc := len(c.cmap)
			if got, want := patch.OutBytes(), imgs*oc*c.temporal*c.oh*c.ow*4; got != want {
				t.Fatalf("OutBytes %d, want %d (C*T*H*W float32 per image)", got, want)
			}
			if patch.fast != nil {
				t.Fatal("a patch plan took fastRow, which writes planes straight into the output")
			}
			if (patch.aa != nil) != (plain.aa != nil) {
				t.Fatalf("aaRow taken by the CHW plan %v, by the patch plan %v", plain.aa != nil, patch.aa != nil)
			}
			if ok, why := patch.GPUSupported(); ok || why == "" {
				t.Fatalf("GPUSupported of a patch plan: %v %q; the GPU kernels have no patch layout", ok, why)
			}
			chw := asF32(runGuarded(t, plain, src, 1))
			want := patchReference(chw, imgs, oc, c.oh, c.ow, c.size, c.merge, c.temporal)
			for _, threads := range []int{1, 3} {
				got := asF32(runGuarded(t, patch, src, threads))
				if len(got) != len(want) {
					t.Fatalf("%d values, want %d", len(got), len(want))
				}
				for i := range want {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("threads %d: value %d is %v, the permuted CHW result %v", threads, i, got[i], want[i])
					}
				}
			}
		})
	}
}

// Bad patch layouts are refused by Validate with the argument named: fields out of range, a layout
// other than CHW float32, and output sizes that are not multiples of size * merge.
func TestPatchLayoutRejects(t *testing.T) {
	good := patchCase{dt: U8, h: 30, w: 30, kind: "bilinear", oh: 28, ow: 56, cmap: []int{0, 1, 2}, size: 14, merge: 2, temporal: 2}
	if _, err := NewPlan(good.spec(true)); err != nil {
		t.Fatalf("the good spec: %v", err)
	}
	cases := []struct {
		name, arg string
		edit      func(s *Spec)
	}{
		{"size 0", "patch_size", func(s *Spec) { s.Norm.Patch.Size = 0 }},
		{"merge negative", "merge_size", func(s *Spec) { s.Norm.Patch.Merge = -2 }},
		{"temporal huge", "temporal_patch_size", func(s *Spec) { s.Norm.Patch.Temporal = MaxPatchParam + 1 }},
		{"HWC", "patch", func(s *Spec) { s.Norm.Layout = "HWC" }},
		{"float16", "patch", func(s *Spec) { s.Norm.DType = F16 }},
		{"height", "patch", func(s *Spec) { s.Resize.H, s.Canvas.H, s.Post.H = 42, 42, 42 }},
		{"width", "patch", func(s *Spec) { s.Resize.W, s.Canvas.W, s.Post.W = 14, 14, 14 }},
		{"merge too big for the size", "patch", func(s *Spec) { s.Norm.Patch.Merge = 3 }},
	}
	for _, c := range cases {
		s := good.spec(true)
		c.edit(s)
		_, err := NewPlan(s)
		var e *Error
		if !errors.As(err, &e) || e.Arg != c.arg {
			t.Errorf("%s: error %v, want one naming %q", c.name, err, c.arg)
		}
	}
	s, err := ParseSpec(`{"in":{"dtype":"u8","n":0,"h":4,"w":4,"c":3,"strides":[0,12,3,1]},"pre":{"y0":0,"x0":0,"sy":1,"sx":1,"h":4,"w":4},` +
		`"resize":{"kind":"none","antialias":false,"h":4,"w":4},"canvas":{"h":4,"w":4,"top":0,"left":0,"pad":0},` +
		`"post":{"y0":0,"x0":0,"sy":1,"sx":1,"h":4,"w":4},"cmap":[0,1,2],` +
		`"norm":{"mean":[0,0,0],"std":[1,1,1],"scale":1,"dtype":"f32","layout":"CHW","patch":{"size":2,"merge":2,"temporal":2}}}`)
	if err != nil {
		t.Fatal(err)
	}
	if p := mustNewPlan(t, s); p.patch == nil || p.OutImageElems() != 3*2*4*4 {
		t.Fatalf("the JSON spec's patch layout was not read: %+v", s.Norm.Patch)
	}
}
