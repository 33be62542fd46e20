package binding

// Plan variants: a training batch's per-item plans built from one traced template each, in Go, in
// parallel (python/goprep/transforms/_random.py). Items of a batch differ only in their source's size
// and the crop their random draws chose; tracing each item in Python and building its plan one by
// one took about as long as decoding and resizing it (docs/perf/2026-12-06-train-batch.md). A
// template is a plan Python traced for one item whose spec reads a contiguous uint8 source through
// its crop window (CropTemplate checks it); a variant is that spec with another source size and
// window, which is the spec tracing would give that item when the rest of the chain does not depend
// on them (Python groups items so, and its tests compare variants with traced plans bit for bit).

import (
	"unsafe"

	"github.com/goprep/goprep/gomod/engine"
)

// Variant table columns (PlanVariants' rows argument, int64 (count, VariantCols)).
const (
	varTemplate = iota // the template plan's handle
	varInH             // the source's height and width (contiguous, the template's channels)
	varInW
	varY0 // the crop window in the source: top, left, height, width
	varX0
	varH
	varW
	VariantCols
)

// VariantColumns is the variant table's width, read by Python (one source).
func VariantColumns() int64 { return VariantCols }

// CropTemplate reports whether plan h reads one contiguous uint8 inH x inW source (the decoder's
// layout) through the unit-step window (y0, x0, ph, pw): the plans PlanVariants may vary.
func CropTemplate(h, inH, inW, y0, x0, ph, pw int64) bool {
	p, ok := plans.get(h)
	if !ok {
		return false
	}
	sh, sw, _, ok := p.DecodedSource()
	v := p.Spec.Pre
	return ok && sh >= 2 && sw >= 2 && int64(sh) == inH && int64(sw) == inW &&
		v == engine.View{Y0: int(y0), X0: int(x0), SY: 1, SX: 1, H: int(ph), W: int(pw)}
}

// variantSpec is template t's spec for an inH x inW source read through window (y0, x0, h, w).
func variantSpec(t *engine.Plan, row []int64) *engine.Spec {
	s := t.Spec // a copy; its pointers are copied below, so no plan shares what another may change
	c := int64(s.In.C)
	s.In.H, s.In.W = int(row[varInH]), int(row[varInW])
	s.In.Strides = [4]int64{0, row[varInW] * c, c, 1}
	s.Pre = engine.View{Y0: int(row[varY0]), X0: int(row[varX0]), SY: 1, SX: 1, H: int(row[varH]), W: int(row[varW])}
	s.CMap = append([]int(nil), s.CMap...)
	if s.Norm != nil {
		n := *s.Norm
		s.Norm = &n
	}
	if s.Frame != nil {
		f := *s.Frame
		s.Frame = &f
	}
	return &s
}

// buildVariant is NewPlan of template t's variant for row (NewPlanLike: it shares t's normalisation
// tables); a panic is its error (it runs on a goroutine of its own, where no caller's Recover reaches).
func buildVariant(t *engine.Plan, row []int64) (p *engine.Plan, err error) {
	defer engine.Recover(&err)
	return engine.NewPlanLike(variantSpec(t, row), t)
}

// PlanVariants builds count plans, row i of rows (an int64 array object of (count, VariantCols))
// giving plan i's template (a CropTemplate) and its source size and window, on up to NumThreads
// goroutines, and writes their handles into handles (an int64 array object of count). On an error
// no handle is left: the first in row order is returned, naming the row.
func PlanVariants(rows, count, handles int64) (err error) {
	defer engine.Recover(&err)
	if count < 1 || count > 1<<24 {
		return engine.Errorf(engine.CodeInvalidArgument, "count", "%d out of range", count)
	}
	rp, err := readArrayData(rows)
	if err != nil {
		return err
	}
	hp, err := readArrayData(handles)
	if err != nil {
		return err
	}
	r := unsafe.Slice((*int64)(rp), VariantCols*count)
	out := unsafe.Slice((*int64)(hp), count)
	built := make([]*engine.Plan, count)
	errs := make([]error, count)
	eachItem(int(count), func(i int) {
		row := r[VariantCols*i : VariantCols*(i+1)]
		t, ok := plans.get(row[varTemplate])
		if !ok {
			errs[i] = engine.Errorf(engine.CodeInternal, "plan", "row %d: unknown template plan", i)
			return
		}
		built[i], errs[i] = buildVariant(t, row)
	})
	if err := firstError(errs); err != nil {
		return err
	}
	for i, p := range built {
		out[i] = plans.add(p)
	}
	return nil
}
