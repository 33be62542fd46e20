package engine

import (
	"math"
	"slices"
	"unsafe"
)

// axis is one output axis of a plan with the output view and canvas folded in: output coordinate o is
// padding outside [Lo, Hi); inside, it reads resize taps T at row/column o-Lo of Off/Idx.
type axis struct {
	Lo, Hi int
	Taps   taps     // indexed by o - Lo; Idx are logical source coordinates
	Off    []int    // Idx turned into element offsets from the image origin (strides and flips applied)
	Src    []int32  // logical source coordinate per tap, for the row cache
	lin    []linTap // bilinear uint8 columns: Off and weights packed together for the hot loop
	// contiguous: one tap per output, reading consecutive pixels in memory order, each pixel's
	// channels adjacent (set by NewPlan), so a row is one copy
	contiguous bool
}

// linTap is one output column of a 2-tap uint8 resize. Offsets stay full-width ints: a NumPy view can
// have strides of gigabytes (a transposed large array), which int32 would silently wrap.
type linTap struct {
	o0, o1 int
	a0, a1 int32
}

// Plan is a validated Spec with every table a backend needs precomputed. It is immutable after
// NewPlan, so any number of goroutines may execute it at once.
type Plan struct {
	Spec              Spec
	N                 int // images
	OutH, OutW, OutC  int
	OutDType          DType
	CHW               bool
	inC               int
	strideN, strideC  int // source strides in elements
	minOff, spanElems int // extent of the source array in elements, relative to its data pointer
	imgLo, imgElems   int // extent of one image, relative to its element (0, 0, 0)
	rows, cols        axis
	cmap              []int
	identityCMap      bool
	padU8             []uint8   // per output channel
	padF32            []float32 // per output channel
	norm              *normTables
	fast              *fastPlan // set when the plan qualifies for the fast path (resize_fast.go)
	gpu               *planGPU  // the GPU-only tables, built on the plan's first GPU use (gpu/stage.go)
	est               PlanBytes
	aa                *aaPlan   // set when the plan qualifies for the fast antialias path (resize_aa.go)
	aaU8              *aaPlan   // the uint8-row antialias tables of the kPillow plans aa does not take (resize_aa_u8.go)
	kern              kernelSet // the row kernels it runs, chosen once (kernels.go)
	// vfirst: a uint8 Pillow plan whose vertical pass runs first (pillowVerticalFirst), the element
	// offsets [lo, hi) its horizontal pass reads within a row, its vertical weight pairs per content
	// row (aaVTables), and the tables of its horizontal pass's SIMD kernel where it can run
	// (newAAVFirst; vfirstRowU8)
	vfirst     bool
	vfLo, vfHi int
	vfW        [][]int32
	vfV        []aaVHead
	vfH        *aaPlan
	kernel     rowKernel   // how a content row is resampled
	yuv        *yuvPlan    // a YUV source's planes and converter (yuv.go); nil for array sources
	pm         *premulPlan // a premultiplied resize's converter (premul.go); nil otherwise
	area       areaRule
	areaBlock  int // source pixels per output pixel of an areaFast plan
	// the output's patch layout (normalize_patch.go); nil: plain CHW / HWC
	patch *patchLayout
}

// rowKernel is the arithmetic a plan's rows use (resize_cpu.go).
type rowKernel int

const (
	kGather rowKernel = iota // nearest rules and no resize: a copy through the tables
	kLinear                  // OpenCV's 11-bit fixed point (uint8) / PyTorch's lerp (float32) bilinear
	kPillow                  // Pillow's 22-bit fixed point, rounded to uint8 between passes (antialias, PyTorch's uint8)
	kFloat                   // float32 weights summed in tap order: cv2 bicubic and area, PyTorch bicubic
)

func pickKernel(r ResizeSpec, area areaRule) rowKernel {
	switch {
	case gatherKind(r.Kind):
		return kGather
	case r.pillowArith():
		return kPillow
	case r.Kind == "bilinear" || area == areaLinear:
		return kLinear
	}
	return kFloat
}

// pillowVerticalFirst reports whether Pillow resizes this spec's rows vertically first: since Pillow
// 13.0, ImagingResampleInner runs the vertical pass first when the height shrinks by more than twice
// what the width does, (inH - outH) > 0 and (inH - outH) > 2*(inW - outW) (its horizontal_first;
// Pillow reads the dimensions of the image it resizes, goprep those of the region it resizes, which
// is the same image for a PIL image cropped before). Since each pass rounds to uint8 the order shows
// (up to ~10 levels on photographs, 1 level where both axes shrink). Pillow 12 and older always ran
// the horizontal pass first; PyTorch's uint8 kernel (TorchU8) and the float kernels still do. An
// unchanged width is left to the horizontal-first path (and its fast kernels): Pillow skips that
// pass, and its weights at scale 1 are exactly the identity, so the order cannot show.
func pillowVerticalFirst(s *Spec) bool {
	dh, dw := s.Pre.H-s.Resize.H, s.Pre.W-s.Resize.W
	return s.Resize.Antialias && s.In.DType == U8 && !s.Resize.TorchU8 && dw != 0 && dh > 0 && dh > 2*dw
}

// liveSpan is the range [lo, hi) of the element offsets an axis's live taps read (all K taps of
// every coordinate when Taps.Cnt is nil).
func liveSpan(a *axis) (lo, hi int) {
	t := &a.Taps
	first := true
	for j := 0; t.K > 0 && j < len(a.Off)/t.K; j++ {
		n := t.K
		if t.Cnt != nil {
			n = int(t.Cnt[j])
		}
		for _, o := range a.Off[j*t.K : j*t.K+n] {
			if first || o < lo {
				lo = o
			}
			if first || o+1 > hi {
				hi = o + 1
			}
			first = false
		}
	}
	return lo, hi
}

// SourceWindow is the rectangle of the source image that the plan's live taps read: rows [y0, y1)
// and columns [x0, x1), for a single image (N == 0) whose rows and pixels have positive strides (a
// decoded image); ok is false for other sources and for plans that read nothing (all padding). The
// decoder uses it to decode only what the plan reads (JPEG's cropped decode).
func (p *Plan) SourceWindow() (y0, y1, x0, x1 int, ok bool) {
	in := p.Spec.In
	sh, sw := int(in.Strides[1])/in.DType.Size(), int(in.Strides[2])/in.DType.Size()
	if in.N != 0 || sh <= 0 || sw <= 0 || in.H < 1 || in.W < 1 {
		return 0, 0, 0, 0, false
	}
	rlo, rhi := liveSpan(&p.rows)
	clo, chi := liveSpan(&p.cols)
	if rhi <= rlo || chi <= clo {
		return 0, 0, 0, 0, false
	}
	return rlo / sh, (rhi-1)/sh + 1, clo / sw, (chi-1)/sw + 1, true
}

// MaxPlanBytes bounds what one plan allocates: its tables plus one worker's scratch rows. Tables grow
// with the output's width and height (never their product), so only extreme shapes reach it: about a
// 1 x 3,000,000 uint8 RGB resize. Without the bound a 1 x 10^8 resize aborted the process under a
// 4 GiB address-space limit.
const MaxPlanBytes = 1 << 30

// BigPlanBytes is where a plan counts as big: its workers are not pooled after a call, a call ends by
// returning freed memory to the OS, and freeing the plan does too, so one huge call does not leave
// the process's RSS ratcheted up (a 1 x 10^7 resize left 550 MB resident before).
const BigPlanBytes = 64 << 20

// PlanBytes is an upper bound of what a plan allocates: Tables once (NewPlan, freed with the plan),
// Scratch per worker goroutine that runs it.
type PlanBytes struct {
	Tables, Scratch int64
}

// Bytes is the plan's memory estimate.
func (p *Plan) Bytes() PlanBytes { return p.est }

// tapsPerOutput is how many source taps one output coordinate of an axis reads (taps.K, see
// resizeTaps). A kind it does not know gets the bound of a filter of support 2 widened by the
// downscale factor (bicubic with antialias), so a new kind is never under-counted; give it its exact
// count when adding it.
func tapsPerOutput(kind string, antialias bool, in, out int) float64 {
	scale := math.Ceil(max(float64(in)/float64(out), 1))
	switch {
	case gatherKind(kind):
		return 1
	case kind == "bilinear" && antialias:
		return 2*scale + 1
	case kind == "bilinear":
		return 2
	case kind == "bicubic" && !antialias:
		return 4
	case kind == "lanczos": // 2*ceil(3*scale)+1 <= 6*scale+1
		return 6*scale + 1
	default: // bicubic with antialias (2*ceil(2*scale)+1 <= 4*scale+1), area (ceil(scale)+1)
		return 4*scale + 1
	}
}

// EstimatePlan bounds the bytes NewPlan and a worker will allocate for a valid spec, without
// allocating: per axis the full resize taps (Idx, WI, WF, Cnt), the folded taps (Idx, Off, Src, the
// weights), the packed bilinear columns, the fast paths' taps, groups and chunks; per worker the row cache
// (every row type, ring = vertical taps + 1, + 3 for antialias) and the content and output rows, with Go's size-class
// rounding. It is computed in float64 (products of a few dimensions up to 2^30 overflow int64) and
// saturates far below int64's limit.
// TestEstimatePlanBoundsAllocation checks it against what NewPlan and a run really allocate.
func EstimatePlan(s *Spec) PlanBytes {
	axisBytes := func(inLen, size, outLen int) (float64, float64) {
		k := tapsPerOutput(s.Resize.Kind, s.Resize.Antialias, inLen, size)
		full := float64(size)*(k*12+4) + k*8
		n := float64(min(outLen, size))
		folded := n*(k*24+4) + n*24 + n*32
		if s.Resize.pillowArith() { // the fast antialias path's columns: 128-byte weight chunks per 4 taps
			folded += n * (k*64 + 320) // appended: up to twice the final size allocated
			folded += n * (k*16 + 172) // aaHRows4W's 128-byte chunks per 8 taps (newAAWide), aaCol's fields for it and aaHRowsY's aaAsmCol
			folded += n * (k*16 + 152) // aaHRowsZ's two 64-byte steps per 8 taps and its aaAsmCol (newAAZ, AVX-512 VNNI)
		}
		if s.Resize.Kind == "area" { // areaTaps builds per-output slices first
			full += float64(size) * (k*16 + 96)
		}
		return full + folded, k
	}
	rows, kr := axisBytes(s.Pre.H, s.Resize.H, s.Post.H)
	if s.Resize.pillowArith() { // aaVRow's weight pairs per content row (aaPlan.vw, vh): 128 bytes per pair (aaVPairLen)
		rows += float64(min(s.Post.H, s.Resize.H)) * (kr*64 + 256)
	}
	cols, kc := axisBytes(s.Pre.W, s.Resize.W, s.Post.W)
	contentW := float64(min(s.Post.W, s.Resize.W)) * float64(s.In.C)
	outRow := float64(s.Post.W) * float64(len(s.CMap))
	patchT := 0.0
	if s.Norm != nil && s.Norm.Patch != nil { // the patch layout's band of planar rows (worker.patchRow) and tables (patchLayout)
		oh, ow := s.OutSize()
		outRow += float64(ow) * float64(len(s.CMap)) * float64(s.Norm.Patch.Size)
		patchT = float64(oh+ow)*8 + 256
	}
	ring := kr + 1
	if s.Resize.pillowArith() {
		ring += 3 // the fast antialias path's lookahead rows (worker.prepare)
	}
	scratch := ring*(contentW*11+(24+16)*4+4) + contentW*(1+4+4) + outRow*(1+4) + kr*24*3 // taps grows by appending
	if s.Resize.pillowArith() {
		scratch += float64(s.Pre.W)*12 + 320 // aaHRows4W's copies of four edge rows (worker.aaEdge; aaHRowsZ reads up to 36 bytes further)
		if pillowVerticalFirst(s) {
			// vfirstRowU8's row and its sums (worker.vfU8, vfAcc): a row's span of elements, two
			// rows' for vfirstRowsU8
			px := max(math.Abs(float64(s.In.Strides[2])/float64(s.In.DType.Size())), float64(s.In.C))
			scratch += (float64(s.In.W)*px + 64) * 6
			// the spare bytes, the planar horizontal results of a pair (worker.vfPl) and the pair's
			// second row (worker.rowU8b)
			scratch += 64 + float64(min(s.Post.W, s.Resize.W))*6 + contentW
		} else {
			// the uint8 antialias rows (aaRowU8): the window's rows (worker.aaRows, one spare), the
			// vertical pass's tails (aaTail) and the planar row (vfPl)
			scratch += (2*kr+1)*24 + contentW
		}
	}
	if s.In.YUV != nil {
		// the converted rows (worker.yuvBuf: yuvPlan.ring slots and one spare, of 3W bytes and
		// slack, and their keys), the runs and column list (grow by appending) and the rows bitset
		scratch += (kr + 13) * (float64(s.In.W)*3 + 192 + 4)
		cols += float64(min(s.Post.W, s.Resize.W))*kc*48 + float64(s.In.W)*16 + 256
		rows += float64(s.In.H)/8 + 64
	}
	if premultiplied(s) {
		// the premultiplied rows (worker.yuvBuf: K+1 slots and one spare, of 4W bytes and slack,
		// and their keys), and the column list and runs (grow by appending)
		scratch += (kr + 2) * (float64(s.In.W)*4 + 192 + 4)
		cols += float64(min(s.Post.W, s.Resize.W))*kc*8 + float64(s.In.W)*16 + 256
	}
	// Go rounds each allocation up to its size class or page: at most 1/8 more, plus a little.
	sat := func(v float64) int64 { return int64(min(v*9/8+16<<10, 1<<60)) }
	return PlanBytes{Tables: sat(rows + cols + patchT + 256*6*float64(len(s.CMap))), Scratch: sat(scratch)}
}

// NewPlan validates the spec and builds the tables.
func NewPlan(s *Spec) (*Plan, error) { return newPlan(s, nil) }

// NewPlanLike is NewPlan for a spec that normalises as plan t does (a training batch's per-item plan
// made from its template, binding.PlanVariants): it shares t's normalisation tables where they would
// be rebuilt the same (sameNorm), which is ~8% of such a plan's build (BenchmarkNewPlanTrainCrop); the
// tables are never written after NewPlan, so plans may share them. Any other spec is NewPlan's.
func NewPlanLike(s *Spec, t *Plan) (*Plan, error) { return newPlan(s, t) }

// sameNorm reports whether NewPlan builds the same normalisation tables for a and b read from a
// source of dtype din and bin: the fields newNormTables reads, equal bit for bit (0.0 and -0.0 are
// different means).
func sameNorm(a, b *NormSpec, din, bin DType) bool {
	eq := func(x, y []float64) bool {
		return slices.EqualFunc(x, y, func(u, v float64) bool { return math.Float64bits(u) == math.Float64bits(v) })
	}
	return a != nil && b != nil && din == bin && a.DType == b.DType &&
		math.Float64bits(a.Scale) == math.Float64bits(b.Scale) && eq(a.Mean, b.Mean) && eq(a.Std, b.Std)
}

// newPlan is NewPlan; like, when set, is a plan whose normalisation tables it may share (NewPlanLike).
func newPlan(s *Spec, like *Plan) (*Plan, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	// Refuse before allocating: a failed allocation is a fatal error in Go (the process aborts), so a
	// plan whose tables or scratch rows would not fit must be an error while nothing is allocated yet.
	est := EstimatePlan(s)
	if est.Tables+est.Scratch > MaxPlanBytes {
		return nil, errf(CodeTooLarge, "size", "the plan for this %dx%d output would take %d MiB (limit %d MiB): its tables "+
			"(%d MiB) and one worker's row buffers (%d MiB), which grow with the output's width and height",
			s.Post.H, s.Post.W, (est.Tables+est.Scratch)>>20, MaxPlanBytes>>20, est.Tables>>20, est.Scratch>>20)
	}
	in := s.In
	es := int64(in.DType.Size())
	p := &Plan{
		est:  est,
		Spec: *s, N: max(in.N, 1),
		OutC: len(s.CMap), OutDType: s.OutDType(),
		inC: in.C, cmap: append([]int(nil), s.CMap...),
		kern: currentKernels(),
		gpu:  &planGPU{},
	}
	p.OutH, p.OutW = s.OutSize()
	for c := 0; c < p.OutC; c++ {
		p.padU8 = append(p.padU8, uint8(s.Canvas.Pad.For(c)))
		p.padF32 = append(p.padF32, float32(s.Canvas.Pad.For(c)))
	}
	p.identityCMap = p.OutC == in.C
	for i, c := range p.cmap {
		p.identityCMap = p.identityCMap && c == i
	}
	p.CHW = s.Norm != nil && s.Norm.Layout == "CHW"
	for i, d := range [4]int{p.N, in.H, in.W, in.C} {
		if d <= 1 { // never used to address, and may be anything (Validate skips it): make it harmless
			p.Spec.In.Strides[i] = 0
			in.Strides[i] = 0
		}
	}
	if in.YUV != nil { // read as an interleaved RGB image, one converted row at a time (yuv.go)
		in.Strides[1], in.Strides[2], in.Strides[3] = 1, 3, 1
	}
	sn, sh, sw, sc := int(in.Strides[0]/es), int(in.Strides[1]/es), int(in.Strides[2]/es), int(in.Strides[3]/es)
	p.strideN, p.strideC = sn, sc
	// Extent of every element the source array holds, so execution can address it through one
	// bounds-checked slice: a table bug becomes a recovered panic, never a wild read. One image's
	// extent is what the GPU backend copies per image.
	p.minOff, p.spanElems = extent([2]int{p.N, sn}, [2]int{in.H, sh}, [2]int{in.W, sw}, [2]int{in.C, sc})
	p.imgLo, p.imgElems = extent([2]int{in.H, sh}, [2]int{in.W, sw}, [2]int{in.C, sc})
	if in.YUV != nil {
		p.minOff, p.spanElems, p.imgLo, p.imgElems = yuvExtent(&in, p.N)
	}
	var pmSW, pmSC int
	if premultiplied(s) { // the columns address the worker's buffer of premultiplied rows (premul.go)
		pmSW, pmSC = sw, sc
		sw, sc = 4, 1
		p.strideC = 1
	}
	p.area, p.areaBlock = planArea(s.Resize, s.Pre.H, s.Pre.W)
	p.kernel = pickKernel(s.Resize, p.area)
	rowFrame, colFrame := frameAxis{0, s.Post.H}, frameAxis{0, s.Post.W}
	if f := s.Frame; f != nil {
		rowFrame, colFrame = frameAxis{f.Top, f.H}, frameAxis{f.Left, f.W}
	}
	p.rows = buildAxis(true, p.area, s.Resize, s.In.DType, s.Pre.H, s.Resize.H, s.Canvas.Top, s.Canvas.H, s.Post.Y0, s.Post.SY, s.Post.H,
		rowFrame, s.Pre.Y0, s.Pre.SY, sh)
	p.cols = buildAxis(false, p.area, s.Resize, s.In.DType, s.Pre.W, s.Resize.W, s.Canvas.Left, s.Canvas.W, s.Post.X0, s.Post.SX, s.Post.W,
		colFrame, s.Pre.X0, s.Pre.SX, sw)
	if s.Norm != nil {
		if like != nil && like.norm != nil && sameNorm(s.Norm, like.Spec.Norm, in.DType, like.Spec.In.DType) {
			p.norm = like.norm
		} else {
			p.norm = newNormTables(s.Norm, in.DType)
		}
		if s.Norm.Patch != nil {
			p.patch = newPatchLayout(s.Norm.Patch, p.OutC, p.OutH, p.OutW)
		}
	}
	if premultiplied(s) && len(p.rows.Off) > 0 && len(p.cols.Off) > 0 {
		p.pm = newPremulPlan(p, pmSW, pmSC)
	}
	if err := p.checkBounds(); err != nil {
		return nil, err
	}
	if p.vfirst = p.kernel == kPillow && pillowVerticalFirst(s); p.vfirst {
		p.vfLo, p.vfHi = liveSpan(&p.cols)
		p.vfW, p.vfV = aaVTables(&p.rows.Taps)
	}
	if in.YUV != nil { // rows converted into the worker's buffer, which every row kernel reads as a source (yuv.go)
		p.yuv = newYUVPlan(p)
	}
	if p.patch == nil { // fastRow and duoRows write CHW planes straight into the output; patch rows do not
		p.fast = newFastPlan(p)
	}
	p.aa = newAAPlan(p)
	p.aaU8 = newAAU8(p)
	p.vfH = newAAVFirst(p)
	if c := &p.cols; c.Taps.K == 1 && len(c.Off) > 0 && sw == p.inC && sc == 1 {
		c.contiguous = true
		for j, o := range c.Off {
			c.contiguous = c.contiguous && o == c.Off[0]+j*sw
		}
	}
	return p, nil
}

// extent is the range of element offsets an array with these (length, stride) axes addresses,
// relative to its element 0: [lo, lo+n).
func extent(axes ...[2]int) (lo, n int) {
	hi := 0
	for _, a := range axes {
		if a[0] > 1 {
			if e := (a[0] - 1) * a[1]; e < 0 {
				lo += e
			} else {
				hi += e
			}
		}
	}
	return lo, hi - lo + 1
}

// frameAxis is one axis of the frame: the output view starts at top of a frame of length n.
type frameAxis struct{ top, n int }

// buildAxis folds canvas placement, the output view and the frame into the resize taps of one axis.
// Output o shows view position v = o - frame.top (padding outside [0, viewLen)), which sits at canvas
// position post0 + postStep*v; content covers canvas [place, place+size).
func buildAxis(vertical bool, area areaRule, r ResizeSpec, dt DType, inLen, size, place, canvasLen, post0, postStep, viewLen int,
	frame frameAxis, pre0, preStep, stride int) axis {
	full := resizeTaps(r, dt, inLen, size, vertical, area)
	k := full.K
	// Output coordinates whose canvas position is content form one interval: the view is monotonic
	// and the frame shows one interval of it.
	contentAt := func(o int) (int, bool) {
		v := o - frame.top
		c := post0 + postStep*v - place
		return c, v >= 0 && v < viewLen && c >= 0 && c < size
	}
	lo, hi := -1, -1
	for o := 0; o < frame.n; o++ {
		if _, ok := contentAt(o); ok {
			if lo < 0 {
				lo = o
			}
			hi = o + 1
		}
	}
	if lo < 0 {
		lo, hi = 0, 0
	}
	a := axis{Lo: lo, Hi: hi, Taps: taps{K: k}}
	n := hi - lo
	a.Off = make([]int, n*k)
	if c0, _ := contentAt(lo); n == size && c0 == 0 && (n < 2 || postStep == 1) {
		// output o shows content o-lo: the taps are full's as they are (one plan owns them), no copy;
		// a per-item training plan builds two axes of these (binding.PlanVariants)
		a.Taps.Idx, a.Taps.WI, a.Taps.WF, a.Taps.Cnt = full.Idx, full.WI, full.WF, full.Cnt
		for d, idx := range a.Taps.Idx {
			a.Off[d] = (pre0 + preStep*int(idx)) * stride
		}
		a.Src = a.Taps.Idx // the same indices: Src is only read
		a.setLin()
		return a
	}
	a.Taps.Idx = make([]int32, n*k)
	a.Src = a.Taps.Idx // the same indices: Src is only read
	if full.WI != nil {
		a.Taps.WI = make([]int32, n*k)
	}
	if full.WF != nil {
		a.Taps.WF = make([]float32, n*k)
	}
	if full.Cnt != nil {
		a.Taps.Cnt = make([]int32, n)
	}
	for o := lo; o < hi; o++ {
		c, _ := contentAt(o)
		if full.Cnt != nil {
			a.Taps.Cnt[o-lo] = full.Cnt[c]
		}
		for t := 0; t < k; t++ {
			d, s := (o-lo)*k+t, c*k+t
			idx := full.Idx[s]
			a.Taps.Idx[d] = idx
			a.Off[d] = (pre0 + preStep*int(idx)) * stride
			if full.WI != nil {
				a.Taps.WI[d] = full.WI[s]
			}
			if full.WF != nil {
				a.Taps.WF[d] = full.WF[s]
			}
		}
	}
	a.setLin()
	return a
}

// setLin fills lin, the two-tap rows' (offset, weight) pairs, where the axis has integer two-tap weights.
func (a *axis) setLin() {
	if a.Taps.K == 2 && a.Taps.WI != nil {
		a.lin = make([]linTap, len(a.Taps.WI)/2)
		for i := range a.lin {
			a.lin[i] = linTap{a.Off[2*i], a.Off[2*i+1], a.Taps.WI[2*i], a.Taps.WI[2*i+1]}
		}
	}
}

// checkBounds proves that every element any table can address lies inside the source array, for every
// image of the batch. The kernels rely on it to read without per-element bounds checks.
func (p *Plan) checkBounds() error {
	if len(p.rows.Off) == 0 || len(p.cols.Off) == 0 {
		return nil // all padding: nothing is read
	}
	if p.Spec.In.YUV != nil {
		return p.checkYUVBounds()
	}
	if p.pm != nil {
		return p.checkPremulBounds()
	}
	rlo, rhi := slices.Min(p.rows.Off), slices.Max(p.rows.Off)
	clo, chi := slices.Min(p.cols.Off), slices.Max(p.cols.Off)
	chLo, chHi := min(0, (p.inC-1)*p.strideC), max(0, (p.inC-1)*p.strideC)
	for _, img := range []int{0, p.N - 1} {
		base := -p.minOff + img*p.strideN
		if base+rlo+clo+chLo < 0 || base+rhi+chi+chHi >= p.spanElems {
			return errf(CodeInternal, "", "plan tables address memory outside the source array")
		}
	}
	return nil
}

// OutImageElems is the number of output elements per image (the patch layout holds each value
// Temporal times).
func (p *Plan) OutImageElems() int {
	if p.patch != nil {
		return p.OutH * p.OutW * p.OutC * p.patch.t
	}
	return p.OutH * p.OutW * p.OutC
}

// OutBytes is the size of the whole output.
func (p *Plan) OutBytes() int { return p.N * p.OutImageElems() * p.OutDType.Size() }

// Job is one plan applied to one source array, writing a contiguous output at Out.
// Src is the NumPy data pointer (the address of element [0, 0, 0(, 0)]), or for a call with
// DeviceSources the device address of that element (only the GPU path reads it then). Enc, when
// set, is an encoded source instead of Src (decode_job.go: the CPU backend only).
type Job struct {
	Plan *Plan
	Src  unsafe.Pointer
	Out  unsafe.Pointer
	Enc  Encoded
	// Stages: colour steps and plans that follow Plan on each item (staged_job.go); nil for a plain job
	Stages []Stage
}

// InDType is the element type of the source array.
func (p *Plan) InDType() DType { return p.Spec.In.DType }
