package engine

// The plan's GPU view: what the GPU runner (package engine/gpu) reads of a plan besides its tables
// (gpu_desc.go lays those out), and the GPU-only plan data, built lazily. They stay with the plan;
// the runner reads plans only through them, gpu_desc.go and the plan's other exported methods.

import (
	"slices"
	"sync"
)

// GPUSupported reports whether the GPU kernels implement this plan, and if not, why. Plans they do
// not implement run on the CPU engine, whatever the placement asks for. The kernels read the
// planner's tables and have every row kernel's arithmetic (gpuMode), YUV sources included
// (gpu_yuv.go), but only the horizontal-first pass order: Pillow's vertical-first plans
// (Plan.vfirst) are declined, and so is the patch layout (normalize_patch.go).
func (p *Plan) GPUSupported() (bool, string) {
	if p.pm != nil {
		return false, "premultiplied alpha (Pillow's resize of RGBA) is not in the GPU kernels: it runs on the CPU engine"
	}
	if p.patch != nil {
		return false, "the patch layout (Qwen2-VL's pixel_values rows) is not in the GPU kernels: it runs on the CPU engine"
	}
	if p.vfirst {
		return false, "Pillow's vertical-first pass order (uint8 antialias, the height shrinking more than twice what the width does) is not in the GPU kernels"
	}
	return true, ""
}

// GPUCapable reports whether every job's plan can run on the GPU kernels (a staged job never can).
func GPUCapable(jobs []Job) bool {
	for _, j := range jobs {
		if j.Stages != nil { // staged jobs' colour steps run on the CPU only (staged_job.go)
			return false
		}
		if ok, _ := j.Plan.GPUSupported(); !ok {
			return false
		}
	}
	return true
}

// ImageSpan is the extent of one image's source elements relative to its logical element (0,0,0):
// the image occupies elements [lo, lo+n) from there. The GPU backend copies exactly this span.
func (p *Plan) ImageSpan() (lo, n int) { return p.imgLo, p.imgElems }

// ImageOrigin is the element offset of image img's logical element (0,0,0) from the array's data
// pointer (element [0,0,0,0]).
func (p *Plan) ImageOrigin(img int) int { return img * p.strideN }

// SourceExtent is the extent of every source element the plan reads, [lo, lo+n) in elements relative
// to the array's data pointer (all images).
func (p *Plan) SourceExtent() (lo, n int) { return p.minOff, p.spanElems }

// OutImageBytes is the size of one image's output.
func (p *Plan) OutImageBytes() int { return p.OutImageElems() * p.OutDType.Size() }

// GPUKernel is the plan's GPU entry point.
func (p *Plan) GPUKernel() string {
	if p.yuv != nil {
		return yuvKernelName(p.OutC)
	}
	return KernelName(p.InDType(), p.OutC)
}

// RowStage is how a host image is staged for the GPU when its plan reads only some source rows: only
// those rows go through the pinned buffer and over PCIe, packed one after another, and the kernel
// reads them through a remapped row table. 1080p -> 224 bilinear reads 448 of 1080 rows, so this
// moves 41% of the bytes the whole image would (the review's main finding against the first design).
type RowStage struct {
	rows     []int   // distinct source row offsets (elements from the image origin), ascending
	colLo    int     // first element of a row that any column and channel reads, relative to the row
	rowElems int     // elements staged per row
	off      []int64 // the plan's row table remapped into the staged layout (YUV: each row tap's Y samples)
	elems    int     // elements staged per image
	// YUV sources (gpu_yuv.go: newYUVStage): the staging copies, and each row tap's U and V samples
	pieces     [][3]int
	yuvU, yuvV []int64
}

// newRowStage returns the plan's row staging, or nil when staging the whole image span is as good:
// every row touched, or rows that are not compact in memory (a planar source, where one pixel's
// channels are a whole plane apart), so the packed rows would not be smaller.
func newRowStage(p *Plan) *RowStage {
	if p.yuv != nil {
		return newYUVStage(p)
	}
	r, c := &p.rows, &p.cols
	if len(r.Off) == 0 || len(c.Off) == 0 {
		return nil
	}
	rows := slices.Clone(r.Off)
	slices.Sort(rows)
	rows = slices.Compact(rows)
	chLo, chHi := min(0, (p.inC-1)*p.strideC), max(0, (p.inC-1)*p.strideC)
	colLo := slices.Min(c.Off) + chLo
	colHi := slices.Max(c.Off) + chHi + 1
	s := &RowStage{rows: rows, colLo: colLo, rowElems: colHi - colLo}
	s.elems = len(rows) * s.rowElems
	if s.elems*10 > p.imgElems*9 { // less than 10% saved: copy the span in one piece instead
		return nil
	}
	s.off = make([]int64, len(r.Off))
	for i, o := range r.Off {
		k, _ := slices.BinarySearch(rows, o)
		s.off[i] = int64(k*s.rowElems - colLo)
	}
	return s
}

// Pieces returns the staging copies of one image, as (staged, source) element ranges relative to
// the staged buffer and the image origin; rows adjacent in both are merged into one copy.
func (s *RowStage) Pieces() [][3]int {
	if s.pieces != nil {
		return s.pieces
	}
	var out [][3]int // staged start, source start, length
	for k, r := range s.rows {
		dst, src := k*s.rowElems, r+s.colLo
		if n := len(out); n > 0 && out[n-1][0]+out[n-1][2] == dst && out[n-1][1]+out[n-1][2] == src {
			out[n-1][2] += s.rowElems
			continue
		}
		out = append(out, [3]int{dst, src, s.rowElems})
	}
	return out
}

// planGPU is a plan's GPU-only data, built once, on the plan's first GPU use (placement's cost
// model or a GPU call), so that a CPU-only process never builds it. Copies of a Plan share it.
type planGPU struct {
	once  sync.Once
	stage *RowStage
}

// GPUStage is the plan's row staging: nil when the GPU copies the whole image span (newRowStage).
func (p *Plan) GPUStage() *RowStage {
	g := p.gpu
	if g == nil { // a Plan not made by NewPlan (tests): nothing to cache it in
		return newRowStage(p)
	}
	g.once.Do(func() { g.stage = newRowStage(p) })
	return g.stage
}

// StageBuilt reports whether the GPU row staging has been built (a CPU-only process never builds it).
func (p *Plan) StageBuilt() bool { return p.gpu != nil && p.gpu.stage != nil }

// StagedElems is how many source elements of one image go to the GPU.
func (p *Plan) StagedElems() int {
	if s := p.GPUStage(); s != nil {
		return s.elems
	}
	return p.imgElems
}

// Elems is how many source elements of one image the staging copies.
func (s *RowStage) Elems() int { return s.elems }

// Rows is how many distinct source rows the staging copies per image.
func (s *RowStage) Rows() int { return len(s.rows) }

// GPUDescriptorKind is what the plan's GPU descriptor selects (gpu_desc.go), as the GPU side's tests
// check it: the kernel arithmetic (gp_image.mode), the area end rule (areaEnd) and whether whole
// pixels can be loaded as vectors (vecPixels, unstaged, before the source's alignment is known).
func (p *Plan) GPUDescriptorKind() (mode int32, end int, vec bool) {
	e, _ := p.areaEnd()
	return p.gpuMode(), int(e), p.vecPixels(nil)
}
