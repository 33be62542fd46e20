package binding

import (
	"math"
	"strings"
	"testing"
	"unsafe"

	"github.com/goprep/goprep/gomod/engine"
)

// ColorBatch gives each item its own steps (the same bytes as engine.ColorPIL on that item alone),
// on several threads, and checks its arguments before touching the batch.
func TestColorBatchPerItemSteps(t *testing.T) {
	if _, err := SetArrayDataOffset(16); err != nil {
		t.Fatal(err)
	}
	const n, h, w, c, steps = 9, 5, 7, 3, 3
	img := make([]uint8, n*h*w*c)
	for i := range img {
		img[i] = uint8(i * 37 % 251)
	}
	ops := make([]int64, n*steps)
	fs := make([]float64, n*steps)
	for i := range n {
		ops[i*steps], fs[i*steps] = int64(engine.ColorHue), float64(i)/10-0.4
		ops[i*steps+1], fs[i*steps+1] = int64(1+i%5), 0.3+float64(i)/7
	}
	heapSink = []any{img, ops, fs} // on the heap: a stack that grows would move them from under their addresses
	want := append([]uint8(nil), img...)
	size := h * w * c
	for i := range n {
		prog := []engine.ColorStep{}
		for j := range steps {
			prog = append(prog, engine.ColorStep{Op: engine.ColorOp(ops[i*steps+j]), Factor: fs[i*steps+j]})
		}
		if err := engine.ColorPIL(want[i*size:(i+1)*size], h, w, c, prog); err != nil {
			t.Fatal(err)
		}
	}
	old := engine.NumThreads()
	defer func() { _ = engine.SetNumThreads(old) }()
	_ = engine.SetNumThreads(4)
	io, oo, fo := &fakeArray{data: unsafe.Pointer(&img[0])}, &fakeArray{data: unsafe.Pointer(&ops[0])},
		&fakeArray{data: unsafe.Pointer(&fs[0])}
	a, o, f := addr(unsafe.Pointer(io)), addr(unsafe.Pointer(oo)), addr(unsafe.Pointer(fo))
	if err := ColorBatch(a, n, h, w, c, 0, o, f, steps); err != nil {
		t.Fatal(err)
	}
	for i := range img {
		if img[i] != want[i] {
			t.Fatalf("byte %d (item %d): %d, want %d", i, i/size, img[i], want[i])
		}
	}
	before := append([]uint8(nil), img...)
	ops[5*steps+2] = 99
	if err := ColorBatch(a, n, h, w, c, 0, o, f, steps); err == nil || !strings.Contains(err.Error(), "item 5") {
		t.Errorf("unknown op: %v", err)
	}
	ops[5*steps+2] = 0
	fs[8*steps] = math.Inf(1)
	if err := ColorBatch(a, n, h, w, c, 0, o, f, steps); err == nil || !strings.Contains(err.Error(), "item 8") {
		t.Errorf("infinite factor: %v", err)
	}
	if err := ColorBatch(a, n, h, w, 4, 0, o, f, steps); err == nil || !strings.Contains(err.Error(), "shape") {
		t.Errorf("4 channels: %v", err)
	}
	for i := range img {
		if img[i] != before[i] {
			t.Fatal("a refused call changed the batch")
		}
	}
	if err := ColorBatch(a, n, h, w, c, 3, o, f, steps); err == nil || !strings.Contains(err.Error(), "numerics") {
		t.Errorf("numerics 3: %v", err)
	}
	if names := strings.Split(ColorOpNames(), ","); len(names) != int(engine.NumColorOps) || names[engine.ColorHue] != "hue" {
		t.Errorf("ColorOpNames: %q", ColorOpNames())
	}
}

var heapSink []any

// ColorBatchF32 runs each item's steps (hue included) with torchvision's tensor numerics on a float32
// batch: the same values as engine.ColorTensorF32 on each item alone, on several threads; Pillow's
// numerics (uint8 only) refused before anything runs.
func TestColorBatchF32PerItemSteps(t *testing.T) {
	if _, err := SetArrayDataOffset(16); err != nil {
		t.Fatal(err)
	}
	const n, h, w, c, steps = 7, 4, 6, 3, 3
	img := make([]float32, n*h*w*c)
	for i := range img {
		img[i] = float32(i*37%251) / 251
	}
	ops := make([]int64, n*steps)
	fs := make([]float64, n*steps)
	for i := range n {
		ops[i*steps], fs[i*steps] = int64(engine.ColorHue), float64(i)/10-0.3
		ops[i*steps+1], fs[i*steps+1] = int64(1+i%5), 0.3+float64(i)/7
	}
	heapSink = []any{img, ops, fs}
	size := h * w * c
	for _, numerics := range []int64{1, 2} {
		base := append([]float32(nil), img...)
		want := append([]float32(nil), img...)
		for i := range n {
			prog := []engine.ColorStep{}
			for j := range steps {
				prog = append(prog, engine.ColorStep{Op: engine.ColorOp(ops[i*steps+j]), Factor: fs[i*steps+j]})
			}
			if err := engine.ColorTensorF32(want[i*size:(i+1)*size], h, w, c, numerics == 2, prog); err != nil {
				t.Fatal(err)
			}
		}
		old := engine.NumThreads()
		_ = engine.SetNumThreads(3)
		io, oo, fo := &fakeArray{data: unsafe.Pointer(&img[0])}, &fakeArray{data: unsafe.Pointer(&ops[0])},
			&fakeArray{data: unsafe.Pointer(&fs[0])}
		a, o, f := addr(unsafe.Pointer(io)), addr(unsafe.Pointer(oo)), addr(unsafe.Pointer(fo))
		err := ColorBatchF32(a, n, h, w, c, numerics, o, f, steps)
		_ = engine.SetNumThreads(old)
		if err != nil {
			t.Fatal(err)
		}
		for i := range img {
			if img[i] != want[i] {
				t.Fatalf("numerics %d: value %d (item %d): %v, want %v", numerics, i, i/size, img[i], want[i])
			}
		}
		copy(img, base)
		if err := ColorBatchF32(a, n, h, w, c, 0, o, f, steps); err == nil || !strings.Contains(err.Error(), "numerics") {
			t.Errorf("float32 with Pillow's numerics: %v", err)
		}
		for i := range img {
			if img[i] != base[i] {
				t.Fatal("a refused call changed the batch")
			}
		}
	}
}
