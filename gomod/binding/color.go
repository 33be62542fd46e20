package binding

// The colour steps of a training batch (ColorJitter, RandomGrayscale with Pillow's numerics;
// python/goprep/transforms/_random_color.py): every item's own steps, in its own order, on the whole
// batch in one call, items spread over NumThreads goroutines (gopy releases the GIL around it).

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

var colorNumerics = [...]string{"pil", "v1", "v2"}

// ColorBatch applies item i's steps to image i of img (the array object of a contiguous uint8
// (n, h, w, c) batch, c 1 or 3) in place, with the numerics of code numerics (ColorNumerics;
// hue with Pillow's only). Step j of item i
// is ops[i, j] (an int64 array object (n, steps): engine.ColorOp codes, 0 for none) with factor
// factors[i, j] (a float64 array object of the same shape). Arguments are checked before any item
// runs: an error leaves img as it was.
func ColorBatch(img, n, h, w, c, numerics, ops, factors, steps int64) (err error) {
	defer engine.Recover(&err)
	const most = 1 << 31
	if n < 1 || h < 0 || w < 0 || (c != 1 && c != 3) || steps < 0 || steps > 64 || n*steps > most ||
		h > most/max(w*c, 1) || n > most/max(h*w*c, 1) {
		return engine.Errorf(engine.CodeInvalidArgument, "img", "bad batch shape (%d, %d, %d, %d) with %d steps",
			n, h, w, c, steps)
	}
	if numerics < 0 || numerics >= int64(len(colorNumerics)) {
		return engine.Errorf(engine.CodeInvalidArgument, "numerics", "unknown numerics code %d", numerics)
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
	pix := unsafe.Slice((*uint8)(ip), int(n)*size)
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
		if numerics != 0 && codes[i] == int64(engine.ColorHue) {
			return engine.Errorf(engine.CodeInvalidArgument, "ops", "item %d: hue with tensor numerics is not ported", int64(i)/steps)
		}
		prog[i] = engine.ColorStep{Op: engine.ColorOp(codes[i]), Factor: fs[i]}
	}
	errs := make([]error, n)
	eachItem(int(n), func(i int) {
		im, st := pix[i*size:(i+1)*size], prog[int64(i)*steps:int64(i+1)*steps]
		if numerics == 0 {
			errs[i] = engine.ColorPIL(im, int(h), int(w), int(c), st)
		} else {
			errs[i] = engine.ColorTensor(im, int(h), int(w), int(c), numerics == 2, st)
		}
	})
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
