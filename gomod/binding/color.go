package binding

// The colour steps of a training batch (ColorJitter, RandomGrayscale with Pillow's or torchvision's
// tensor numerics, on uint8 or float32 images; python/goprep/transforms/_random_color.py): every
// item's own steps, in its own order, on the whole batch in one call, items spread over NumThreads
// goroutines (gopy releases the GIL around it).

import (
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/goprep/goprep/gomod/engine"
)

// ColorOpNames is the colour ops' names, comma-separated, at their codes' positions (engine.ColorOp;
// 0, none, is empty): the one list Python's colour programs are written with.
func ColorOpNames() string {
	return strings.Join(colorOpNames[:], ",")
}

var colorOpNames = [engine.NumColorOps]string{
	engine.ColorBrightness: "brightness", engine.ColorContrast: "contrast", engine.ColorSaturation: "saturation",
	engine.ColorHue: "hue", engine.ColorGray: "gray",
}

// ColorNumerics is the numerics ColorBatch takes, comma-separated at their codes' positions:
// Pillow's (engine.ColorPIL), torchvision v1's and v2's tensor code (engine.ColorTensor).
func ColorNumerics() string { return strings.Join(colorNumerics[:], ",") }

var colorNumerics = [engine.NumNumerics]string{
	engine.NumericsPIL: "pil", engine.NumericsTensorV1: "v1", engine.NumericsTensorV2: "v2",
}

// ColorBatch applies item i's steps to image i of img (the array object of a contiguous uint8
// (n, h, w, c) batch, c 1 or 3) in place, with the numerics of code numerics (ColorNumerics). Step j
// of item i is ops[i, j] (an int64 array object (n, steps): engine.ColorOp codes, 0 for none) with
// factor factors[i, j] (a float64 array object of the same shape). Arguments are checked before any
// item runs: an error leaves img as it was.
func ColorBatch(img, n, h, w, c, numerics, ops, factors, steps int64) (err error) {
	defer engine.Recover(&err)
	return colorBatch(img, n, h, w, c, numerics, ops, factors, steps, false)
}

// ColorBatchF32 is ColorBatch on a float32 batch (values in [0, 1]) with torchvision's tensor
// numerics (v1 or v2: engine.ColorTensorF32; Pillow's take uint8 only).
func ColorBatchF32(img, n, h, w, c, numerics, ops, factors, steps int64) (err error) {
	defer engine.Recover(&err)
	return colorBatch(img, n, h, w, c, numerics, ops, factors, steps, true)
}

// colorBatch is ColorBatch (f32 false) and ColorBatchF32: the arguments checked, the items' programs
// read, each item run on goroutines of eachItem.
func colorBatch(img, n, h, w, c, numerics, ops, factors, steps int64, f32 bool) error {
	const most = 1 << 31
	if n < 1 || h < 0 || w < 0 || (c != 1 && c != 3) || steps < 0 || steps > 64 || n*steps > most ||
		h > most/max(w*c, 1) || n > most/max(h*w*c, 1) {
		return engine.Errorf(engine.CodeInvalidArgument, "img", "bad batch shape (%d, %d, %d, %d) with %d steps",
			n, h, w, c, steps)
	}
	if numerics < 0 || numerics >= int64(len(colorNumerics)) || (f32 && numerics == 0) {
		return engine.Errorf(engine.CodeInvalidArgument, "numerics", "unknown numerics code %d (float32 images: v1 or v2)",
			numerics)
	}
	ip, err := readArrayData(img)
	if err != nil {
		return err
	}
	op, err := readArrayData(ops)
	if err != nil {
		return err
	}
	fp, err := readArrayData(factors)
	if err != nil {
		return err
	}
	size := int(h * w * c)
	codes := unsafe.Slice((*int64)(op), n*steps)
	fs := unsafe.Slice((*float64)(fp), n*steps)
	prog := make([]engine.ColorStep, n*steps)
	for i := range prog {
		if codes[i] < 0 || codes[i] >= int64(engine.NumColorOps) {
			return engine.Errorf(engine.CodeInvalidArgument, "ops", "item %d: unknown colour op %d", int64(i)/steps, codes[i])
		}
		if math.IsNaN(fs[i]) || math.IsInf(fs[i], 0) {
			return engine.Errorf(engine.CodeInvalidArgument, "factors", "item %d: factor %v is not finite", int64(i)/steps, fs[i])
		}
		prog[i] = engine.ColorStep{Op: engine.ColorOp(codes[i]), Factor: fs[i]}
	}
	errs := make([]error, n)
	var run func(i int, st []engine.ColorStep) error
	switch {
	case f32:
		pix := unsafe.Slice((*float32)(ip), int(n)*size)
		run = func(i int, st []engine.ColorStep) error {
			return engine.ColorTensorF32(pix[i*size:(i+1)*size], int(h), int(w), int(c), numerics == 2, st)
		}
	case numerics == 0:
		pix := unsafe.Slice((*uint8)(ip), int(n)*size)
		run = func(i int, st []engine.ColorStep) error {
			return engine.ColorPIL(pix[i*size:(i+1)*size], int(h), int(w), int(c), st)
		}
	default:
		pix := unsafe.Slice((*uint8)(ip), int(n)*size)
		run = func(i int, st []engine.ColorStep) error {
			return engine.ColorTensor(pix[i*size:(i+1)*size], int(h), int(w), int(c), numerics == 2, st)
		}
	}
	eachItem(int(n), func(i int) { errs[i] = run(i, prog[int64(i)*steps:int64(i+1)*steps]) })
	for i, e := range errs {
		if e != nil {
			return engine.Errorf(engine.CodeInternal, "img", "item %d: %v", i, e)
		}
	}
	return nil
}

// eachItem calls fn(i) for every i in [0, n), on up to NumThreads goroutines taking items in turn
// (the calling one included); ColorBatch's items and PlanVariants' plans.
func eachItem(n int, fn func(i int)) {
	var next atomic.Int64
	work := func() {
		for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
			fn(i)
		}
	}
	var wg sync.WaitGroup
	for range min(engine.NumThreads(), n) - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
}
