package engine

import "unsafe"

// This file turns plans into the byte layout the CUDA kernels read (kernels/goprep.h). The kernels get
// the planner's own tables, so GPU and CPU agree on every source coordinate and weight by construction.

// Mode numbers and output codes of kernels/goprep.h.
const (
	gpModeGather    = 0
	gpModeBilinear  = 1
	gpModeAntialias = 2
	gpOutU8         = 0
	gpOutF32        = 1
	gpOutF16        = 2
)

// gpAxis mirrors gp_axis; gpImage mirrors gp_image. TestDescriptorLayout checks sizes and offsets
// against the header, so a change on either side fails in CI, not on a GPU.
type gpAxis struct {
	Off, WI, WF, Cnt    uint64
	Lo, Hi, K, Reserved int32
}

type gpImage struct {
	Src, Out, LUT, LUT16      uint64
	Rows, Cols                gpAxis
	StrideC                   int64
	Mean, Std                 [4]float32
	Scale, PadF32             float32
	CMap                      [4]int32
	OutH, OutW, OutC, InC     int32
	Mode, OutDType, CHW, Norm int32
	PadU8, Reserved           int32
}

// GPUImageBytes is sizeof(gp_image).
const GPUImageBytes = int(unsafe.Sizeof(gpImage{}))

// DeviceBatch is the host-side image of one kernel launch over a set of images: an arena holding each
// distinct plan's tables once, followed by one gp_image per image. The GPU backend copies the arena
// to device memory and then patches in the device addresses (Encode).
type DeviceBatch struct {
	arena  []byte
	tmpl   map[*Plan]gpImage // each plan's descriptor, table pointers relative to the arena (see put)
	descAt int               // offset of the descriptor array in the arena
	images []BatchImage
	Kernel string // goprep_preprocess_u8 or _f32
}

// BatchImage is one image of a launch: which plan, and where its source span and output will be on
// the device.
type BatchImage struct {
	Plan   *Plan
	SrcDev uint64 // device address of the image's source span (see Plan.ImageSpan)
	OutDev uint64 // device address of the image's output
}

// ImageSpan is the extent of one image's source elements relative to its logical element (0,0,0):
// the image occupies elements [lo, lo+n) from there. The GPU backend copies exactly this span.
func (p *Plan) ImageSpan() (lo, n int) { return p.imgLo, p.imgElems }

// ImageOrigin is the element offset of image img's logical element (0,0,0) from the array's data
// pointer (element [0,0,0,0]).
func (p *Plan) ImageOrigin(img int) int { return img * p.strideN }

// OutImageBytes is the size of one image's output.
func (p *Plan) OutImageBytes() int { return p.OutImageElems() * p.OutDType.Size() }

// InDType is the element type of the source array.
func (p *Plan) InDType() DType { return p.Spec.In.DType }

// NewDeviceBatch lays out the tables of every distinct plan among images, then the descriptors.
// All images must share one source dtype (one kernel); the caller groups them.
func NewDeviceBatch(images []BatchImage) (*DeviceBatch, error) {
	if len(images) == 0 {
		return nil, errf(CodeInvalidArgument, "images", "empty launch")
	}
	b := &DeviceBatch{tmpl: map[*Plan]gpImage{}, images: images}
	dt := images[0].Plan.InDType()
	b.Kernel = "goprep_preprocess_" + string(dt)
	for _, im := range images {
		if im.Plan.InDType() != dt {
			return nil, errf(CodeInternal, "", "one launch mixes source dtypes")
		}
		if im.Plan.OutC > 4 || im.Plan.OutC < 1 {
			return nil, errf(CodeInternal, "", "unsupported channel count %d", im.Plan.OutC)
		}
		if _, ok := b.tmpl[im.Plan]; !ok {
			b.tmpl[im.Plan] = b.template(im.Plan)
		}
	}
	b.align(16)
	b.descAt = len(b.arena)
	b.arena = append(b.arena, make([]byte, len(images)*GPUImageBytes)...)
	return b, nil
}

func (b *DeviceBatch) align(n int) {
	for len(b.arena)%n != 0 {
		b.arena = append(b.arena, 0)
	}
}

// put appends a table and returns its arena offset, or 0 (a null pointer) for an empty one. Offsets
// are stored +1 so that a table at arena offset 0 is not mistaken for null; Encode undoes it.
func (b *DeviceBatch) put(data []byte) uint64 {
	if len(data) == 0 {
		return 0
	}
	b.align(16)
	at := len(b.arena)
	b.arena = append(b.arena, data...)
	return uint64(at) + 1
}

func bytesOf[T any](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(s[0])))
}

func (b *DeviceBatch) axis(a *axis) gpAxis {
	off := make([]int64, len(a.Off))
	for i, o := range a.Off {
		off[i] = int64(o)
	}
	return gpAxis{
		Off: b.put(bytesOf(off)), WI: b.put(bytesOf(a.Taps.WI)), WF: b.put(bytesOf(a.Taps.WF)), Cnt: b.put(bytesOf(a.Taps.Cnt)),
		Lo: int32(a.Lo), Hi: int32(a.Hi), K: int32(a.Taps.K),
	}
}

// template lays out a plan's tables and returns its descriptor: everything but the image's source
// and output addresses, with table pointers relative to the arena.
func (b *DeviceBatch) template(p *Plan) gpImage {
	d := gpImage{
		Rows: b.axis(&p.rows), Cols: b.axis(&p.cols), StrideC: int64(p.strideC),
		OutH: int32(p.OutH), OutW: int32(p.OutW), OutC: int32(p.OutC), InC: int32(p.inC),
		PadU8: int32(p.padU8[0]), PadF32: p.padF32[0], Scale: 1, // one pad value: see GPUSupported
	}
	for c := 0; c < p.OutC; c++ {
		d.CMap[c] = int32(p.cmap[c])
		d.Std[c] = 1
	}
	switch {
	case p.rows.Taps.K == 1 && p.cols.Taps.K == 1:
		d.Mode = gpModeGather
	case p.Spec.Resize.Antialias:
		d.Mode = gpModeAntialias
	default:
		d.Mode = gpModeBilinear
	}
	switch p.OutDType {
	case U8:
		d.OutDType = gpOutU8
	case F16:
		d.OutDType = gpOutF16
	default:
		d.OutDType = gpOutF32
	}
	if n := p.norm; n != nil {
		d.Norm = 1
		if p.CHW {
			d.CHW = 1
		}
		for c := 0; c < p.OutC; c++ {
			d.Mean[c], d.Std[c], d.Scale = n.mean[c], n.std[c], n.scale[c]
		}
		if n.lutF32 != nil {
			d.LUT, d.LUT16 = b.put(bytesOf(n.lutF32)), b.put(bytesOf(n.lutF16))
		}
	}
	return d
}

// ArenaBytes is the size of the arena to allocate on the device.
func (b *DeviceBatch) ArenaBytes() int { return len(b.arena) }

// DescOffset is where the descriptor array starts in the arena (the kernel's first argument).
func (b *DeviceBatch) DescOffset() int { return b.descAt }

// Encode writes the final arena for a device copy at address base: table pointers relocated, each
// image's descriptor its plan's template plus its own source and output addresses. Descriptors are
// stored as the Go struct itself: TestDescriptorLayout proves its layout equals gp_image's, and CUDA
// devices and the hosts goprep builds for are little-endian.
func (b *DeviceBatch) Encode(base uint64) []byte {
	out := append([]byte(nil), b.arena...)
	rel := func(v uint64) uint64 {
		if v == 0 {
			return 0
		}
		return base + v - 1
	}
	relAxis := func(a gpAxis) gpAxis {
		a.Off, a.WI, a.WF, a.Cnt = rel(a.Off), rel(a.WI), rel(a.WF), rel(a.Cnt)
		return a
	}
	descs := unsafe.Slice((*gpImage)(unsafe.Pointer(&out[b.descAt])), len(b.images))
	for i, im := range b.images {
		d := b.tmpl[im.Plan]
		d.LUT, d.LUT16 = rel(d.LUT), rel(d.LUT16)
		d.Rows, d.Cols = relAxis(d.Rows), relAxis(d.Cols)
		// The span copy starts at the image's lowest element; its logical origin is -lo further.
		d.Src = im.SrcDev + uint64(-im.Plan.imgLo*im.Plan.InDType().Size())
		d.Out = im.OutDev
		descs[i] = d
	}
	return out
}
