//go:build linux

package engine

import (
	"bytes"
	"errors"
	"math"
	"os"
	"syscall"
	"testing"
	"unsafe"
)

// Fuzz targets for the three layers a bad input crosses: spec parsing, plan construction and
// execution. CI runs each for a bounded time (.ci/run); seeds live in testdata/fuzz/<target>/.
//
//	go test ./gomod/engine -run '^$' -fuzz '^FuzzExecute$' -fuzztime 300000x  (a count: see .ci/run)
//
// Execution reads and writes through buffers placed against PROT_NONE guard pages, so a read or write
// one byte outside the source or output is a fault the fuzzer reports, not silent corruption.

// fuzzBytes decodes fuzz input into bounded choices; past the end every choice is 0.
type fuzzBytes struct{ b []byte }

func (z *fuzzBytes) byte() int {
	if len(z.b) == 0 {
		return 0
	}
	v := z.b[0]
	z.b = z.b[1:]
	return int(v)
}

// in returns a value in [lo, hi].
func (z *fuzzBytes) in(lo, hi int) int {
	if hi <= lo {
		return lo
	}
	v := z.byte() | z.byte()<<8
	return lo + v%(hi-lo+1)
}

func (z *fuzzBytes) bit() bool { return z.byte()&1 == 1 }

// view draws a window of a parent of ph x pw with steps of +-1 that stays inside it.
func (z *fuzzBytes) view(ph, pw int) View {
	v := View{SY: 1, SX: 1}
	if z.bit() {
		v.SY = -1
	}
	if z.bit() {
		v.SX = -1
	}
	v.Y0, v.X0 = z.in(0, ph-1), z.in(0, pw-1)
	if v.SY > 0 {
		v.H = z.in(1, ph-v.Y0)
	} else {
		v.H = z.in(1, v.Y0+1)
	}
	if v.SX > 0 {
		v.W = z.in(1, pw-v.X0)
	} else {
		v.W = z.in(1, v.X0+1)
	}
	return v
}

// fuzzSpec draws a valid spec (small enough to run in microseconds): any dtype, batch, channel
// count, memory layout (axis order, padding, negative strides), crops, flips, resize, canvas,
// channel map and normalisation.
func fuzzSpec(z *fuzzBytes) *Spec {
	s := &Spec{}
	in := &s.In
	in.DType = U8
	if z.bit() {
		in.DType = F32
	}
	in.N = z.in(0, 3)
	in.H, in.W = z.in(1, 24), z.in(1, 24)
	in.C = []int{1, 3, 4}[z.in(0, 2)]
	es := int64(in.DType.Size())
	// Axis order h, w, c in memory (innermost last), with optional padding, signs and a batch stride.
	dims := [3]int{in.H, in.W, in.C}
	order := [][3]int{{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}}[z.in(0, 5)]
	var strides [3]int64
	step := es
	for k := 2; k >= 0; k-- {
		ax := order[k]
		strides[ax] = step
		step *= int64(dims[ax] + z.in(0, 2))
	}
	for ax := range strides {
		if z.in(0, 3) == 0 {
			strides[ax] = -strides[ax]
		}
	}
	batch := step + es*int64(z.in(0, 3))
	if z.bit() {
		batch = -batch
	}
	in.Strides = [4]int64{batch, strides[0], strides[1], strides[2]}
	if z.in(0, 7) == 0 && in.N <= 1 {
		in.Strides[0] = int64(z.in(0, 1<<15)) << 40 // a size-1 batch axis may have any stride
	}
	s.Pre = z.view(in.H, in.W)
	r := &s.Resize
	r.Kind = []string{"none", "nearest", "bilinear", "bicubic", "area", "nearest-exact", "nearest-pil", "nearest-torch", "lanczos"}[z.in(0, 8)]
	if r.Kind == "none" {
		r.H, r.W = s.Pre.H, s.Pre.W
	} else {
		r.H, r.W = z.in(1, 40), z.in(1, 40)
		r.Antialias = (r.Kind == "bilinear" || r.Kind == "bicubic") && z.bit() || r.Kind == "lanczos" // lanczos: antialias only
		r.TorchU8 = (r.Kind == "bilinear" || r.Kind == "bicubic" || r.Kind == "lanczos") && in.DType == U8 && z.in(0, 3) == 0
	}
	c := &s.Canvas
	c.H, c.W = r.H+z.in(0, 6), r.W+z.in(0, 6)
	c.Top, c.Left = z.in(0, c.H-r.H), z.in(0, c.W-r.W)
	if in.DType == U8 {
		c.Pad = PadValues{float64(z.in(0, 255))}
	} else {
		c.Pad = PadValues{float64(z.in(0, 2000)-1000) / 7}
	}
	s.Post = z.view(c.H, c.W)
	s.CMap = make([]int, []int{1, 3, 4}[z.in(0, 2)])
	for i := range s.CMap {
		s.CMap[i] = z.in(0, in.C-1)
	}
	if z.bit() {
		n := &NormSpec{Scale: float64(z.in(1, 1000)) / 997, DType: F32, Layout: "HWC"}
		if z.bit() {
			n.DType = F16
		}
		if z.bit() {
			n.Layout = "CHW"
		}
		for range s.CMap {
			n.Mean = append(n.Mean, float64(z.in(0, 1000))/1000)
			n.Std = append(n.Std, float64(z.in(1, 1000))/500)
		}
		s.Norm = n
	}
	if z.in(0, 3) == 3 {
		fuzzYUV(z, s)
	}
	return s
}

// fuzzYUV makes s read a YUV frame of its size (yuv.go) when some format fits it: planes in any
// memory order, padded rows, gaps, a batch stride of either sign.
func fuzzYUV(z *fuzzBytes, s *Spec) {
	in := &s.In
	var ok []string
	for _, f := range []string{"nv12", "nv21", "i420", "yuyv", "uyvy"} {
		if g := yuvFormats[f]; !(g.evenW && in.W%2 != 0) && !(g.evenH && in.H%2 != 0) {
			ok = append(ok, f)
		}
	}
	if len(ok) == 0 {
		return
	}
	y := &YUVSpec{Format: ok[z.in(0, len(ok)-1)], Matrix: []string{"bt601", "bt709", "bt2020"}[z.in(0, 2)],
		Range: []string{"limited", "full"}[z.in(0, 1)]}
	y.OpenCV = y.Matrix == "bt601" && y.Range == "limited" && z.bit()
	g := yuvFormats[y.Format]
	at, first := int64(0), z.in(0, g.planes-1) // the plane laid out first in memory
	y.Planes = make([]YUVPlane, g.planes)
	for k := range g.planes {
		i := (first + k) % g.planes
		rows, bytes := yuvPlaneSize(g, i, in.H, in.W)
		y.Planes[i] = YUVPlane{Off: at, Stride: int64(bytes + z.in(0, 3))}
		at += int64(rows-1)*y.Planes[i].Stride + int64(bytes+z.in(0, 5))
	}
	y0 := y.Planes[0].Off
	for i := range y.Planes {
		y.Planes[i].Off -= y0 // offsets from the Y plane's origin: negative for planes before it
	}
	in.DType, in.C, in.YUV = U8, 3, y
	batch := at + int64(z.in(0, 3))
	if z.bit() {
		batch = -batch
	}
	in.Strides = [4]int64{batch, 0, 0, 0}
	s.Resize.TorchU8 = s.Resize.TorchU8 || (s.Resize.Kind == "bilinear" || s.Resize.Kind == "bicubic") && z.in(0, 3) == 0
	s.Canvas.Pad = PadValues{float64(z.in(0, 255))}
	for i := range s.CMap {
		s.CMap[i] %= 3
	}
}

// corrupt overwrites one field of a valid spec with an arbitrary value, as a hand-written or hostile
// spec would: NewPlan must refuse it with an *Error or build a plan that is still safe to run.
func corrupt(z *fuzzBytes, s *Spec) {
	vals := []int{0, -1, 1, 2, math.MaxInt32, math.MinInt32, 1 << 30, 1<<30 + 1, 1 << 40, math.MaxInt64, math.MinInt64}
	v := vals[z.in(0, len(vals)-1)]
	if z.bit() {
		v = z.in(0, 1<<16) - 1<<15
	}
	fields := []*int{&s.In.N, &s.In.H, &s.In.W, &s.In.C, &s.Pre.Y0, &s.Pre.X0, &s.Pre.SY, &s.Pre.SX, &s.Pre.H, &s.Pre.W,
		&s.Resize.H, &s.Resize.W, &s.Canvas.H, &s.Canvas.W, &s.Canvas.Top, &s.Canvas.Left,
		&s.Post.Y0, &s.Post.X0, &s.Post.SY, &s.Post.SX, &s.Post.H, &s.Post.W}
	switch k := z.in(0, len(fields)+5); {
	case k == len(fields)+4 && s.In.YUV != nil: // a plane's offset or stride
		pl := &s.In.YUV.Planes[z.in(0, len(s.In.YUV.Planes)-1)]
		if z.bit() {
			pl.Off = int64(v)
		} else {
			pl.Stride = int64(v)
		}
	case k == len(fields)+5 && s.In.YUV != nil:
		y := s.In.YUV
		switch z.in(0, 3) {
		case 0:
			y.Format = []string{"", "nv16", "i420", "yuyv", "nv12"}[z.in(0, 4)]
		case 1:
			y.Matrix = []string{"", "bt470", "bt709"}[z.in(0, 2)]
		case 2:
			y.Range = []string{"", "tv", "full"}[z.in(0, 2)]
		default:
			y.OpenCV = !y.OpenCV
		}
	case k < len(fields):
		*fields[k] = v
	case k == len(fields):
		s.In.Strides[z.in(0, 3)] = int64(v)
	case k == len(fields)+1 && len(s.CMap) > 0:
		s.CMap[z.in(0, len(s.CMap)-1)] = v
	case k == len(fields)+2 && s.Norm != nil:
		s.Norm.Mean = s.Norm.Mean[:z.in(0, len(s.Norm.Mean))]
	default:
		s.Resize.Kind = []string{"", "cubic", "none", "nearest"}[z.in(0, 3)]
	}
}

// guarded returns n bytes placed against a PROT_NONE page: at the end of the mapping (atEnd: an
// overrun faults) or at its start (an underrun faults).
func guarded(t testing.TB, n int, atEnd bool) []byte {
	page := os.Getpagesize()
	size := (n+page-1)/page*page + 2*page
	mem, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Munmap(mem) })
	if err := syscall.Mprotect(mem[:page], syscall.PROT_NONE); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mprotect(mem[size-page:], syscall.PROT_NONE); err != nil {
		t.Fatal(err)
	}
	start := page
	if atEnd {
		start = size - page - n
	}
	return mem[start : start+n : start+n]
}

// executeGuarded runs p on the inline, threaded and cancellable paths over guarded buffers, and checks
// that all three agree.
func executeGuarded(t *testing.T, p *Plan, atEnd bool) {
	es := p.Spec.In.DType.Size()
	src := guarded(t, p.spanElems*es, atEnd)
	for i := range src {
		src[i] = byte(i*131 + i>>7)
	}
	if p.Spec.In.DType == F32 {
		f := unsafe.Slice((*float32)(unsafe.Pointer(&src[0])), len(src)/4)
		for i := range f {
			f[i] = float32(i%509) / 7
		}
	}
	origin := unsafe.Add(unsafe.Pointer(&src[0]), -p.minOff*es)
	var outs [3][]byte
	var zero int32
	for k, run := range []func(o unsafe.Pointer) error{
		func(o unsafe.Pointer) error { return runCPU([]Job{{Plan: p, Src: origin, Out: o}}, 1, nil) },
		func(o unsafe.Pointer) error { return runCPU([]Job{{Plan: p, Src: origin, Out: o}}, 3, nil) },
		func(o unsafe.Pointer) error { return runCPU([]Job{{Plan: p, Src: origin, Out: o}}, 2, &zero) },
	} {
		out := guarded(t, p.OutBytes(), atEnd != (k == 1))
		if err := run(unsafe.Pointer(&out[0])); err != nil {
			t.Fatalf("path %d: %v\nspec %+v", k, err, p.Spec)
		}
		outs[k] = append([]byte(nil), out...)
	}
	if string(outs[0]) != string(outs[1]) || string(outs[0]) != string(outs[2]) {
		t.Fatalf("inline, threaded and cancellable runs disagree\nspec %+v", p.Spec)
	}
}

func checkRefusal(t *testing.T, err error, s *Spec) {
	var e *Error
	if !errors.As(err, &e) || e.Code == "" || e.Code == CodeInternal {
		t.Fatalf("NewPlan failed without a typed, non-internal error: %v\nspec %+v", err, s)
	}
}

// FuzzParseSpec: any text either parses into a spec or is refused with invalid_argument; parsed specs
// go through NewPlan, which never panics.
func FuzzParseSpec(f *testing.F) {
	f.Add(`{"in":{"dtype":"u8","n":0,"h":4,"w":5,"c":3,"strides":[0,15,3,1]},"pre":{"y0":0,"x0":0,"sy":1,"sx":1,"h":4,"w":5},` +
		`"resize":{"kind":"bilinear","antialias":false,"h":2,"w":3},"canvas":{"h":2,"w":3,"top":0,"left":0,"pad":0},` +
		`"post":{"y0":0,"x0":0,"sy":1,"sx":1,"h":2,"w":3},"cmap":[2,1,0],"norm":null}`)
	f.Add(`{"in":{"dtype":"f32","n":2,"h":1,"w":1,"c":1,"strides":[4,4,4,4]},"norm":{"mean":[1],"std":[0],"scale":1e300,"dtype":"f16","layout":"CHW"}}`)
	f.Add(`{"in":{"h":1e99}}`)
	f.Add(`[]`)
	f.Fuzz(func(t *testing.T, text string) {
		s, err := ParseSpec(text)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Code != CodeInvalidArgument || e.Arg != "spec" {
				t.Fatalf("parse error %v", err)
			}
			return
		}
		if p, err := NewPlan(s); err != nil {
			checkRefusal(t, err, s)
		} else if p.OutBytes() <= 0 {
			t.Fatalf("plan with no output: %+v", s)
		}
	})
}

// FuzzNewPlan: valid specs with one field overwritten by an arbitrary value are refused with a typed
// error before anything big is allocated, or give a plan whose tables stay inside the source and whose
// allocation the estimate bounds.
func FuzzNewPlan(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Add([]byte{255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255})
	f.Add([]byte("\x01\x03\x10\x00\x10\x00\x01\x02\x00\x00\x02\x07\x00\x09\x00\x05\x00\x02\x01\x01\x03\x00\x00\x00\x00"))
	f.Add(bytes.Repeat([]byte{3}, 80))       // a YUV source (fuzzYUV)
	f.Add(bytes.Repeat([]byte{3, 7, 1}, 40)) // an array source with a long byte stream
	f.Fuzz(func(t *testing.T, data []byte) {
		z := &fuzzBytes{data}
		s := fuzzSpec(z)
		if z.bit() {
			corrupt(z, s)
		}
		est := EstimatePlan(s)
		var p *Plan
		var err error
		got := allocated(func() { p, err = NewPlan(s) })
		if err != nil {
			checkRefusal(t, err, s)
			if got > 1<<20 {
				t.Fatalf("refusing allocated %d bytes: %+v", got, s)
			}
			return
		}
		if got > est.Tables {
			t.Fatalf("NewPlan allocated %d bytes, estimate %d: %+v", got, est.Tables, s)
		}
		if err := p.checkBounds(); err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzExecute: valid plans run over guarded buffers without touching a byte outside them, and the
// inline, threaded and cancellable paths agree.
func FuzzExecute(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Add([]byte{1, 3, 20, 0, 20, 0, 2, 5, 1, 1, 1, 0, 2, 1, 1, 9, 1, 3})
	f.Add([]byte("\x00\x02\x17\x00\x05\x00\x01\x03\x01\x00\x00\x01\x01\x02\x00\x01\x00\x02\x01\x0f\x00\x02\x00\x01\x00\x01\x01\x01"))
	f.Add(bytes.Repeat([]byte{3}, 80))       // a YUV source (fuzzYUV)
	f.Add(bytes.Repeat([]byte{3, 7, 1}, 40)) // an array source with a long byte stream
	old := inlineElems
	inlineElems = 0 // every multi-thread run takes the threaded path, however small
	f.Cleanup(func() { inlineElems = old })
	f.Fuzz(func(t *testing.T, data []byte) {
		z := &fuzzBytes{data}
		s := fuzzSpec(z)
		atEnd := z.bit()
		p, err := NewPlan(s)
		if err != nil {
			t.Fatalf("valid spec refused: %v\n%+v", err, s)
		}
		executeGuarded(t, p, atEnd)
	})
}
