package engine

import (
	"fmt"
	"unsafe"
)

// This file turns plans into the byte layout the CUDA kernels read (kernels/goprep.h). The kernels get
// the planner's own tables, so GPU and CPU agree on every source coordinate and weight by construction.

// gpAxis and gpImage (gpu_abi.go) are kernels/goprep.h's gp_axis and gp_image, derived from the
// header by cgo -godefs (scripts/generate.sh; CI checks them fresh), so the layout Encode writes is
// the one the kernels read by construction.

// GPUImageBytes is sizeof(gp_image).
const GPUImageBytes = int(unsafe.Sizeof(gpImage{}))

// DeviceBatch is the host-side image of one kernel launch over a set of images: an arena holding each
// distinct plan's tables once, followed by one gp_image per image. The GPU backend copies the arena
// to device memory and then patches in the device addresses (Encode).
type DeviceBatch struct {
	arena  []byte
	tmpl   map[tmplKey]gpImage // each plan's descriptor, table pointers relative to the arena (see put)
	descAt int                 // offset of the descriptor array in the arena
	images []BatchImage
	Kernel string // KernelName(source dtype, output channels)
}

// BatchImage is one image of a launch: which plan, and where its source span and output will be on
// the device.
type BatchImage struct {
	Plan   *Plan
	SrcDev uint64 // device address of the image's source span (see Plan.ImageSpan), or its staged rows
	OutDev uint64 // device address of the image's output
	Staged bool   // the source holds only the rows the plan reads (Plan.gpuStage)
}

type tmplKey struct {
	p      *Plan
	staged bool
}

func (im BatchImage) key() tmplKey { return tmplKey{im.Plan, im.Staged} }

// NewDeviceBatch lays out the tables of every distinct plan among images, then the descriptors.
// All images must share one kernel (source dtype and output channel count); the caller groups them.
func NewDeviceBatch(images []BatchImage) (*DeviceBatch, error) {
	if len(images) == 0 {
		return nil, errf(CodeInvalidArgument, "images", "empty launch")
	}
	b := &DeviceBatch{tmpl: map[tmplKey]gpImage{}, images: images}
	if c := images[0].Plan.OutC; c > 4 || c < 1 {
		return nil, errf(CodeInternal, "", "unsupported channel count %d", c)
	}
	b.Kernel = images[0].Plan.GPUKernel()
	for _, im := range images {
		if im.Plan.GPUKernel() != b.Kernel {
			return nil, errf(CodeInternal, "", "one launch mixes kernels")
		}
		if _, ok := b.tmpl[im.key()]; !ok {
			b.tmpl[im.key()] = b.template(im.Plan, im.Staged)
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

// axis lays out one axis's tables; off replaces its offsets (the row table of a staged image).
func (b *DeviceBatch) axis(a *axis, off []int64) gpAxis { // (YUV: the column table too, gpu_yuv.go)
	if off == nil {
		off = make([]int64, len(a.Off))
		for i, o := range a.Off {
			off[i] = int64(o)
		}
	}
	return gpAxis{
		Off: b.put(bytesOf(off)), Wi: b.put(bytesOf(a.Taps.WI)), Wf: b.put(bytesOf(a.Taps.WF)), Cnt: b.put(bytesOf(a.Taps.Cnt)),
		Lo: int32(a.Lo), Hi: int32(a.Hi), K: int32(a.Taps.K),
	}
}

// template lays out a plan's tables and returns its descriptor: everything but the image's source
// and output addresses, with table pointers relative to the arena.
func (b *DeviceBatch) template(p *Plan, staged bool) gpImage {
	var rowOff []int64
	if staged {
		rowOff = p.GPUStage().off
	}
	d := gpImage{Stride_c: int64(p.strideC),
		Out_h: int32(p.OutH), Out_w: int32(p.OutW), Out_c: int32(p.OutC), In_c: int32(p.inC),
		Scale: 1,
	}
	if p.yuv == nil {
		d.Rows, d.Cols = b.axis(&p.rows, rowOff), b.axis(&p.cols, nil)
	}
	for c := 0; c < p.OutC; c++ {
		d.Cmap[c] = int32(p.cmap[c])
		d.Std[c] = 1
		d.Pad_u8[c], d.Pad_f32[c] = int32(p.padU8[c]), p.padF32[c]
	}
	d.Mode = p.gpuMode()
	if p.vecPixels(rowOff) {
		d.Vec = 1 // Encode clears it for a source address that is not aligned
	}
	if p.yuv != nil {
		b.yuvTemplate(p, &d, staged)
	}
	end, inv := p.areaEnd()
	d.Inv = inv
	switch end {
	case endScale:
		d.End = gpEndScale
	case endQuad:
		d.End = gpEndQuad
	default:
		d.End = gpEndNone
	}
	switch p.OutDType {
	case U8:
		d.Out_dtype = gpOutU8
	case F16:
		d.Out_dtype = gpOutF16
	default:
		d.Out_dtype = gpOutF32
	}
	if n := p.norm; n != nil {
		d.Norm = 1
		if p.CHW {
			d.Chw = 1
		}
		for c := 0; c < p.OutC; c++ {
			d.Mean[c], d.Std[c], d.Scale = n.mean[c], n.std[c], n.scale[c]
		}
		if n.lutF32 != nil {
			d.Lut, d.Lut16 = b.put(bytesOf(n.lutF32)), b.put(bytesOf(n.lutF16))
		}
	}
	return d
}

// gpuMode is the kernel arithmetic of the plan's row kernel (resize_cpu.go), the same choice the
// CPU engine's resizeRowU8 and resizeRowF32 make: float32 images take the lerp only for bilinear
// (cv2 INTER_AREA's upscale rule is two float taps there), uint8 images OpenCV's fixed point for both.
func (p *Plan) gpuMode() int32 {
	switch p.kernel {
	case kGather:
		return gpModeGather
	case kPillow:
		return gpModeAntialias
	case kLinear:
		if p.InDType() == U8 || p.Spec.Resize.Kind == "bilinear" {
			return gpModeBilinear
		}
	}
	return gpModeTaps
}

// vecPixels reports whether every source pixel the plan reads is 4 channels in order at a multiple of
// 4 elements from the image origin (rowOff: a staged image's row table), so the kernels can load
// each pixel as one uchar4/float4 (kernels/resize.cuh: gp_ld): one ld.global.nc.v4.u8 / v4.f32 in
// the PTX instead of four scalar loads per tap (a bilinear pixel: 4 loads instead of 16). Not timed:
// no GPU was available when it was written.
func (p *Plan) vecPixels(rowOff []int64) bool {
	if p.OutC != 4 || p.inC != 4 || p.strideC != 1 || !p.identityCMap {
		return false
	}
	for _, o := range p.cols.Off {
		if o%4 != 0 {
			return false
		}
	}
	if rowOff != nil {
		for _, o := range rowOff {
			if o%4 != 0 {
				return false
			}
		}
		return true
	}
	for _, o := range p.rows.Off {
		if o%4 != 0 {
			return false
		}
	}
	return true
}

// KernelLaunch is one launch as a device executes it: the kernel, its grid and block (CUDA's
// cuLaunchKernel shape) and its two parameters, the descriptor table's device address and length.
type KernelLaunch struct {
	Kernel      string
	Grid, Block [3]int
	Desc        uint64
	N           int
}

// Launch shape: blocks of 32x8 threads (8 warps; a warp spans 32 neighbouring output columns, so
// its loads and stores of one row coalesce), a 2-D grid over the largest output of the batch and one
// z layer per image. The kernels stride over anything beyond CUDA's grid limits.
const (
	blockX, blockY = 32, 8
	maxGridYZ      = 65535
)

// KernelName is the entry point for a source dtype and output channel count (kernels/preprocess.cu).
func KernelName(in DType, c int) string { return fmt.Sprintf("goprep_preprocess_%s_c%d", in, c) }

// Launch is the batch's launch for an arena copied to device address base.
func (b *DeviceBatch) Launch(base uint64) KernelLaunch {
	h, w := 1, 1
	for _, im := range b.images {
		h, w = max(h, im.Plan.OutH), max(w, im.Plan.OutW)
	}
	return KernelLaunch{
		Kernel: b.Kernel, Desc: base + uint64(b.descAt), N: len(b.images),
		Grid:  [3]int{(w + blockX - 1) / blockX, min((h+blockY-1)/blockY, maxGridYZ), min(len(b.images), maxGridYZ)},
		Block: [3]int{blockX, blockY, 1},
	}
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
		a.Off, a.Wi, a.Wf, a.Cnt = rel(a.Off), rel(a.Wi), rel(a.Wf), rel(a.Cnt)
		return a
	}
	descs := unsafe.Slice((*gpImage)(unsafe.Pointer(&out[b.descAt])), len(b.images))
	for i, im := range b.images {
		d := b.tmpl[im.key()]
		d.Lut, d.Lut16 = rel(d.Lut), rel(d.Lut16)
		d.Rows, d.Cols = relAxis(d.Rows), relAxis(d.Cols)
		d.Yuv.U, d.Yuv.V = rel(d.Yuv.U), rel(d.Yuv.V)
		// The span copy starts at the image's lowest element; its logical origin is -lo further.
		d.Src = im.SrcDev // a staged image's row table already points into the packed rows
		if !im.Staged {
			d.Src += uint64(-im.Plan.imgLo * im.Plan.InDType().Size())
		}
		d.Out = im.OutDev
		if d.Src%uint64(4*im.Plan.InDType().Size()) != 0 {
			d.Vec = 0
		}
		descs[i] = d
	}
	return out
}
