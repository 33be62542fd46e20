package engine

import (
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
	N                 int  // images
	Batched           bool // input had a batch axis
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
	padU8             uint8
	padF32            float32
	norm              *normTables
	fast              *fastPlan // set when the plan qualifies for the fast path (resize_fast.go)
	aa                *aaPlan   // set when the plan qualifies for the fast antialias path (resize_aa.go)
	kernel            rowKernel // how a content row is resampled
	area              areaRule
	areaBlock         int // source pixels per output pixel of an areaFast plan
}

// rowKernel is the arithmetic a plan's rows use (resize_cpu.go).
type rowKernel int

const (
	kGather rowKernel = iota // nearest rules and no resize: a copy through the tables
	kLinear                  // OpenCV's 11-bit fixed point (uint8) / PyTorch's lerp (float32) bilinear
	kPillow                  // Pillow's 22-bit fixed point, rounded to uint8 between passes (antialias)
	kFloat                   // float32 weights summed in tap order: cv2 bicubic and area, PyTorch bicubic
)

func pickKernel(r ResizeSpec, area areaRule) rowKernel {
	switch {
	case r.Kind == "none" || r.Kind == "nearest" || r.Kind == "nearest-exact" || r.Kind == "nearest-pil":
		return kGather
	case r.Antialias:
		return kPillow
	case r.Kind == "bilinear" || area == areaLinear:
		return kLinear
	}
	return kFloat
}

// GPUSupported reports whether the GPU kernels implement this plan's resize, and if not, why. Plans
// they do not implement always run on the CPU engine, whatever the placement asks for. The kernels
// read the planner's tables, so every gather rule (nearest, nearest-exact, nearest-pil) is supported;
// bicubic and area have arithmetic the kernels do not have yet.
func (p *Plan) GPUSupported() (bool, string) {
	switch r := p.Spec.Resize; {
	case r.Kind == "bicubic" || r.Kind == "area":
		return false, "interpolation=" + r.Kind + " runs on the CPU engine only"
	}
	return true, ""
}

// gpuCapable reports whether every job's plan can run on the GPU kernels.
func gpuCapable(jobs []Job) bool {
	for _, j := range jobs {
		if ok, _ := j.Plan.GPUSupported(); !ok {
			return false
		}
	}
	return true
}

// NewPlan validates the spec and builds the tables.
func NewPlan(s *Spec) (*Plan, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	in := s.In
	es := int64(in.DType.Size())
	p := &Plan{
		Spec: *s, N: max(in.N, 1), Batched: in.N > 0,
		OutH: s.Post.H, OutW: s.Post.W, OutC: len(s.CMap), OutDType: s.OutDType(),
		inC: in.C, cmap: append([]int(nil), s.CMap...),
		padU8: uint8(s.Canvas.Pad), padF32: float32(s.Canvas.Pad),
	}
	p.identityCMap = p.OutC == in.C
	for i, c := range p.cmap {
		p.identityCMap = p.identityCMap && c == i
	}
	p.CHW = s.Norm != nil && s.Norm.Layout == "CHW"
	sn, sh, sw, sc := int(in.Strides[0]/es), int(in.Strides[1]/es), int(in.Strides[2]/es), int(in.Strides[3]/es)
	p.strideN, p.strideC = sn, sc
	// Extent of every element the source array holds, so execution can address it through one
	// bounds-checked slice: a table bug becomes a recovered panic, never a wild read. One image's
	// extent is what the GPU backend copies per image.
	p.minOff, p.spanElems = extent([2]int{p.N, sn}, [2]int{in.H, sh}, [2]int{in.W, sw}, [2]int{in.C, sc})
	p.imgLo, p.imgElems = extent([2]int{in.H, sh}, [2]int{in.W, sw}, [2]int{in.C, sc})
	p.area, p.areaBlock = planArea(s.Resize, s.Pre.H, s.Pre.W)
	p.kernel = pickKernel(s.Resize, p.area)
	p.rows = buildAxis(true, p.area, s.Resize, s.In.DType, s.Pre.H, s.Resize.H, s.Canvas.Top, s.Canvas.H, s.Post.Y0, s.Post.SY, s.Post.H,
		s.Pre.Y0, s.Pre.SY, sh)
	p.cols = buildAxis(false, p.area, s.Resize, s.In.DType, s.Pre.W, s.Resize.W, s.Canvas.Left, s.Canvas.W, s.Post.X0, s.Post.SX, s.Post.W,
		s.Pre.X0, s.Pre.SX, sw)
	if s.Norm != nil {
		p.norm = newNormTables(s.Norm, in.DType)
	}
	if err := p.checkBounds(); err != nil {
		return nil, err
	}
	p.fast = newFastPlan(p)
	p.aa = newAAPlan(p)
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

// buildAxis folds canvas placement and the output view into the resize taps of one axis.
// Output o sits at canvas position c = post0 + postStep*o; content covers canvas [place, place+size).
func buildAxis(vertical bool, area areaRule, r ResizeSpec, dt DType, inLen, size, place, canvasLen, post0, postStep, outLen, pre0, preStep, stride int) axis {
	full := resizeTaps(r, dt, inLen, size, vertical, area)
	k := full.K
	// Output coordinates whose canvas position is content form one interval (the view is monotonic).
	lo, hi := -1, -1
	for o := 0; o < outLen; o++ {
		c := post0 + postStep*o - place
		if c >= 0 && c < size {
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
	a.Taps.Idx = make([]int32, n*k)
	a.Off = make([]int, n*k)
	a.Src = make([]int32, n*k)
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
		c := post0 + postStep*o - place
		if full.Cnt != nil {
			a.Taps.Cnt[o-lo] = full.Cnt[c]
		}
		for t := 0; t < k; t++ {
			d, s := (o-lo)*k+t, c*k+t
			idx := full.Idx[s]
			a.Taps.Idx[d] = idx
			a.Src[d] = idx
			a.Off[d] = (pre0 + preStep*int(idx)) * stride
			if full.WI != nil {
				a.Taps.WI[d] = full.WI[s]
			}
			if full.WF != nil {
				a.Taps.WF[d] = full.WF[s]
			}
		}
	}
	if k == 2 && a.Taps.WI != nil {
		a.lin = make([]linTap, n)
		for i := range a.lin {
			a.lin[i] = linTap{a.Off[2*i], a.Off[2*i+1], a.Taps.WI[2*i], a.Taps.WI[2*i+1]}
		}
	}
	return a
}

// checkBounds proves that every element any table can address lies inside the source array, for every
// image of the batch. The kernels rely on it to read without per-element bounds checks.
func (p *Plan) checkBounds() error {
	if len(p.rows.Off) == 0 || len(p.cols.Off) == 0 {
		return nil // all padding: nothing is read
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

// OutImageElems is the number of output elements per image.
func (p *Plan) OutImageElems() int { return p.OutH * p.OutW * p.OutC }

// OutBytes is the size of the whole output.
func (p *Plan) OutBytes() int { return p.N * p.OutImageElems() * p.OutDType.Size() }

// Job is one plan applied to one source array, writing a contiguous output at Out.
// Src is the NumPy data pointer (the address of element [0, 0, 0(, 0)]).
type Job struct {
	Plan *Plan
	Src  unsafe.Pointer
	Out  unsafe.Pointer
}
