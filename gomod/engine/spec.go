package engine

import (
	"encoding/json"
	"math"
	"strings"
)

// DType names an element type as it appears in a Spec.
type DType string

const (
	U8  DType = "u8"
	F32 DType = "f32"
	F16 DType = "f16"
)

// Size in bytes of one element.
func (d DType) Size() int {
	switch d {
	case U8:
		return 1
	case F16:
		return 2
	}
	return 4
}

// View maps a logical image of H x W pixels into a parent image: logical (y, x) reads parent
// (Y0 + SY*y, X0 + SX*x). Crops and flips compose into one View, so they cost nothing at run time.
type View struct {
	Y0 int `json:"y0"`
	X0 int `json:"x0"`
	SY int `json:"sy"`
	SX int `json:"sx"`
	H  int `json:"h"`
	W  int `json:"w"`
}

// InputSpec describes the source array: dims and strides in bytes, exactly as NumPy reports them.
// N == 0 means a single (H, W, C) image.
type InputSpec struct {
	DType   DType    `json:"dtype"`
	N       int      `json:"n"`
	H       int      `json:"h"`
	W       int      `json:"w"`
	C       int      `json:"c"`
	Strides [4]int64 `json:"strides"` // n, h, w, c
	// YUV: a YUV frame (yuv.go), read through its planes as an H x W RGB image (C 3, strides n, 0, 0, 0)
	YUV *YUVSpec `json:"yuv,omitempty"`
}

// ResizeSpec: Kind is "none", "nearest", "nearest-exact", "nearest-pil", "nearest-torch", "bilinear",
// "bicubic", "lanczos" (Pillow's LANCZOS, Antialias only: resize_lanczos.go) or "area" (docs/API.md gives
// each one's rounding rules); H, W the resized content size. TorchU8 (bilinear, bicubic and lanczos uint8
// only) is PyTorch's uint8 kernel: with Antialias Pillow's filters with the weights rounded to PyTorch's
// int16 precision, without it PyTorch's plain 2- or 4-tap kernel (torchU8PlainTaps), both on the
// antialias arithmetic (kPillow).
type ResizeSpec struct {
	Kind      string `json:"kind"`
	Antialias bool   `json:"antialias"`
	TorchU8   bool   `json:"torch_u8,omitempty"`
	// Premultiply (uint8, 4 channels, bilinear, bicubic or lanczos with Antialias: Pillow's arithmetic) resizes
	// as Pillow resizes an "RGBA" image: premultiplied by alpha, then converted back (premul.go).
	// An unchanged size is left alone, as Pillow returns it as a copy.
	Premultiply bool `json:"premultiply,omitempty"`
	H           int  `json:"h"`
	W           int  `json:"w"`
}

// pillowArith reports whether the resize runs on Pillow's fixed-point arithmetic (kPillow: 22-bit
// weights, uint8 between the passes) and so on the antialias path's tables and kernels.
func (r *ResizeSpec) pillowArith() bool { return r.Antialias || r.TorchU8 }

// CanvasSpec places the resized content at (Top, Left) on an H x W canvas filled with Pad
// (letterbox). A plain resize has a canvas equal to the content.
type CanvasSpec struct {
	H    int       `json:"h"`
	W    int       `json:"w"`
	Top  int       `json:"top"`
	Left int       `json:"left"`
	Pad  PadValues `json:"pad"`
}

// PadValues is the fill of every padded pixel (canvas and frame), one value per output channel
// (after the channel map), or a single value for all of them. A JSON number means one value.
type PadValues []float64

// UnmarshalJSON accepts a number or a list of numbers.
func (v *PadValues) UnmarshalJSON(b []byte) error {
	var one float64
	if err := json.Unmarshal(b, &one); err == nil {
		*v = PadValues{one}
		return nil
	}
	var many []float64
	if err := json.Unmarshal(b, &many); err != nil {
		return err
	}
	*v = many
	return nil
}

// For returns the pad value of output channel c.
func (v PadValues) For(c int) float64 {
	switch len(v) {
	case 0:
		return 0
	case 1:
		return v[0]
	}
	return v[c]
}

// FrameSpec places the output view at (Top, Left) on an H x W frame filled with the pad value: a pad
// after a crop of the resized image (crop -> resize -> crop -> pad). nil: the output is the view.
type FrameSpec struct {
	H    int `json:"h"`
	W    int `json:"w"`
	Top  int `json:"top"`
	Left int `json:"left"`
}

// NormSpec: out = (x*Scale - Mean[c]) / Std[c] in float32, cast to DType, in Layout "CHW" or "HWC".
// Patch (CHW float32 only) rearranges the CHW result into patch rows (PatchSpec).
type NormSpec struct {
	Mean   []float64  `json:"mean"`
	Std    []float64  `json:"std"`
	Scale  float64    `json:"scale"`
	DType  DType      `json:"dtype"`
	Layout string     `json:"layout"`
	Patch  *PatchSpec `json:"patch,omitempty"`
}

// PatchSpec is Qwen2-VL's patch layout of a CHW image (its image processor's flattening): the image
// cut into Size x Size patches, ordered by Merge x Merge blocks of patches (blocks row-major, patches
// row-major within a block), each patch's C x Size x Size values repeated Temporal times (a still
// image's temporal axis). One image is (gh*gw, C*Temporal*Size*Size) with gh = H/Size, gw = W/Size:
// the processor's reshape(c, gh/m, m, p, gw/m, m, p).permute(1, 4, 2, 5, 0, 3, 6), repeated over t
// after the channel axis (patchOffsets gives each value's position).
type PatchSpec struct {
	Size     int `json:"size"`
	Merge    int `json:"merge"`
	Temporal int `json:"temporal"`
}

// MaxPatchParam bounds each PatchSpec field: far above any model's (Qwen2-VL: 14, 2, 2), small enough
// that products of them cannot overflow.
const MaxPatchParam = 1 << 12

// Spec is the canonical form of any goprep pipeline: source view -> resize -> canvas -> output view ->
// frame -> channel map -> normalize. Every chain of goprep ops that the Python tracer accepts reduces
// to it.
type Spec struct {
	In     InputSpec  `json:"in"`
	Pre    View       `json:"pre"`
	Resize ResizeSpec `json:"resize"`
	Canvas CanvasSpec `json:"canvas"`
	Post   View       `json:"post"`
	Frame  *FrameSpec `json:"frame,omitempty"`
	CMap   []int      `json:"cmap"`
	Norm   *NormSpec  `json:"norm"`
}

// OutSize is the size of the output image: the frame's, or the output view's when there is none.
func (s *Spec) OutSize() (h, w int) {
	if s.Frame != nil {
		return s.Frame.H, s.Frame.W
	}
	return s.Post.H, s.Post.W
}

// ParseSpec decodes a JSON spec; unknown fields are errors so that a Python/Go mismatch is loud.
func ParseSpec(data string) (*Spec, error) {
	var s Spec
	dec := json.NewDecoder(strings.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, errf(CodeInvalidArgument, "spec", "malformed plan spec: %v", err)
	}
	return &s, nil
}

// MaxDim bounds every dimension so that products of a few dims and strides cannot overflow int64.
// Python reads it from the binding (MaxDim there), so the limit has this one source.
const MaxDim = 1 << 30

func checkDim(arg string, v int, allowZero bool) error {
	if v < 0 || (!allowZero && v == 0) {
		return errf(CodeBadShape, arg, "must be positive, got %d", v)
	}
	if v > MaxDim {
		return errf(CodeTooLarge, arg, "%d exceeds the limit of %d", v, MaxDim)
	}
	return nil
}

func (v View) check(arg string, parentH, parentW int) error {
	if v.SY != 1 && v.SY != -1 || v.SX != 1 && v.SX != -1 {
		return errf(CodeInvalidArgument, arg, "view steps must be +1 or -1")
	}
	if err := checkDim(arg+".h", v.H, false); err != nil {
		return err
	}
	if err := checkDim(arg+".w", v.W, false); err != nil {
		return err
	}
	inside := func(a, lim int) bool { return a >= 0 && a < lim }
	yEnd, xEnd := v.Y0+v.SY*(v.H-1), v.X0+v.SX*(v.W-1)
	if !inside(v.Y0, parentH) || !inside(yEnd, parentH) || !inside(v.X0, parentW) || !inside(xEnd, parentW) {
		return errf(CodeBadShape, arg, "window of %dx%d at (%d, %d) leaves the %dx%d image", v.H, v.W, v.Y0, v.X0, parentH, parentW)
	}
	return nil
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// Validate checks every field that decides what memory a plan touches, before any backend sees it:
// dimensions, strides, windows, channel maps, lengths, dtypes and layouts, and the per-channel pad
// values. mean, std and scale cannot make a plan unsafe; they are validated once, in Python
// (python/goprep/_validate.py), where their types are known and the errors name the argument.
func (s *Spec) Validate() error {
	in := &s.In
	if in.DType != U8 && in.DType != F32 {
		return errf(CodeBadDType, "src", "dtype must be uint8 or float32, got %q", in.DType)
	}
	if err := checkDim("src.n", in.N, true); err != nil {
		return err
	}
	if err := checkDim("src.height", in.H, false); err != nil {
		return err
	}
	if err := checkDim("src.width", in.W, false); err != nil {
		return err
	}
	if in.C != 1 && in.C != 3 && in.C != 4 {
		return errf(CodeBadShape, "src", "channels must be 1, 3 or 4, got %d", in.C)
	}
	if in.YUV != nil {
		if err := validateYUV(in); err != nil {
			return err
		}
	}
	es := int64(in.DType.Size())
	dims := [4]int{max(in.N, 1), in.H, in.W, in.C}
	for i, st := range in.Strides {
		if dims[i] <= 1 {
			continue // never used to address anything: NumPy gives size-1 axes arbitrary strides
		}
		if st%es != 0 {
			return errf(CodeInvalidArgument, "src", "stride %d of axis %d is not a multiple of the element size %d", st, i, es)
		}
		if st > MaxDim*16 || st < -MaxDim*16 {
			return errf(CodeTooLarge, "src", "stride %d of axis %d is too large", st, i)
		}
	}
	// The byte span of every axis must stay far from int64's limit: the extent and table offsets
	// are sums of these products. Real arrays are nowhere near; a hand-written spec could be.
	for i, d := range dims {
		if st := in.Strides[i]; d > 1 && st != 0 && int64(d-1) > (1<<50)/max(st, -st) {
			return errf(CodeTooLarge, "src", "axis %d spans more than 2^50 bytes", i)
		}
	}
	if err := s.Pre.check("crop", in.H, in.W); err != nil {
		return err
	}
	r := &s.Resize
	if err := checkDim("size.height", r.H, false); err != nil {
		return err
	}
	if err := checkDim("size.width", r.W, false); err != nil {
		return err
	}
	switch r.Kind {
	case "none":
		if r.H != s.Pre.H || r.W != s.Pre.W || r.Antialias {
			return errf(CodeInvalidArgument, "size", "kind none must keep the size")
		}
	case "nearest", "nearest-exact", "nearest-pil", "nearest-torch", "area":
		if r.Antialias {
			return errf(CodeInvalidArgument, "antialias", "antialias applies to bilinear and bicubic interpolation only")
		}
	case "bilinear", "bicubic":
	case "lanczos":
		if !r.Antialias {
			return errf(CodeInvalidArgument, "antialias", "lanczos is Pillow's antialiased filter only: antialias must be true")
		}
	default:
		return errf(CodeInvalidArgument, "interpolation",
			"must be 'bilinear', 'bicubic', 'lanczos', 'area', 'nearest', 'nearest-exact', 'nearest-pil' or 'nearest-torch', got %q", r.Kind)
	}
	filtered := r.Kind == "bilinear" || r.Kind == "bicubic" || r.Kind == "lanczos"
	if r.TorchU8 && (!filtered || s.In.DType != U8) {
		return errf(CodeInvalidArgument, "antialias", "PyTorch's uint8 weights ('torch', 'torch-noaa') apply to bilinear, bicubic and lanczos uint8 resizing only")
	}
	if r.Premultiply && (!filtered || !r.Antialias || r.TorchU8 || s.In.DType != U8 || s.In.C != 4 || s.In.YUV != nil) {
		return errf(CodeInvalidArgument, "premultiply", "premultiplied alpha applies to Pillow's bilinear, bicubic and lanczos resize (antialias) of 4-channel uint8 images only")
	}
	c := &s.Canvas
	if err := checkDim("size.height", c.H, false); err != nil {
		return err
	}
	if err := checkDim("size.width", c.W, false); err != nil {
		return err
	}
	if c.Top < 0 || c.Left < 0 || c.Top+r.H > c.H || c.Left+r.W > c.W {
		return errf(CodeBadShape, "size", "content of %dx%d at (%d, %d) does not fit the %dx%d canvas", r.H, r.W, c.Top, c.Left, c.H, c.W)
	}
	if err := s.Post.check("crop", c.H, c.W); err != nil {
		return err
	}
	if f := s.Frame; f != nil {
		if err := checkDim("size.height", f.H, false); err != nil {
			return err
		}
		if err := checkDim("size.width", f.W, false); err != nil {
			return err
		}
		if f.Top < 0 || f.Left < 0 || f.Top+s.Post.H > f.H || f.Left+s.Post.W > f.W {
			return errf(CodeBadShape, "padding", "image of %dx%d at (%d, %d) does not fit the %dx%d frame", s.Post.H, s.Post.W, f.Top, f.Left, f.H, f.W)
		}
	}
	if n := len(s.CMap); n != 1 && n != 3 && n != 4 {
		return errf(CodeBadShape, "code", "output channels must be 1, 3 or 4, got %d", n)
	}
	if n := len(c.Pad); n > 1 && n != len(s.CMap) {
		return errf(CodeInvalidArgument, "pad_value", "needs 1 or %d values (one per channel), got %d", len(s.CMap), n)
	}
	for _, v := range c.Pad {
		if !finite(v) || !finite(float64(float32(v))) {
			return errf(CodeInvalidArgument, "pad_value", "must be finite float32 numbers, got %v", v)
		}
		if in.DType == U8 && (v < 0 || v > 255 || v != math.Trunc(v)) {
			return errf(CodeInvalidArgument, "pad_value", "must be an integer in [0, 255] for uint8 images, got %v", v)
		}
	}
	for _, ch := range s.CMap {
		if ch < 0 || ch >= in.C {
			return errf(CodeBadShape, "code", "channel %d does not exist in a %d-channel image", ch, in.C)
		}
	}
	if nm := s.Norm; nm != nil {
		if len(nm.Mean) != len(s.CMap) {
			return errf(CodeInvalidArgument, "mean", "needs %d values (one per channel), got %d", len(s.CMap), len(nm.Mean))
		}
		if len(nm.Std) != len(s.CMap) {
			return errf(CodeInvalidArgument, "std", "needs %d values (one per channel), got %d", len(s.CMap), len(nm.Std))
		}
		if nm.DType != F32 && nm.DType != F16 {
			return errf(CodeInvalidArgument, "dtype", "must be 'float32' or 'float16', got %q", nm.DType)
		}
		if nm.Layout != "CHW" && nm.Layout != "HWC" {
			return errf(CodeInvalidArgument, "layout", "must be 'CHW' or 'HWC', got %q", nm.Layout)
		}
		if nm.Patch != nil {
			if err := nm.Patch.check(nm, s); err != nil {
				return err
			}
		}
	}
	// Output bytes must fit comfortably in an int on every platform we build for.
	n := max(in.N, 1)
	oh, ow := s.OutSize()
	outBytes := float64(n) * float64(oh) * float64(ow) * float64(len(s.CMap)) * float64(s.OutDType().Size()) * float64(s.temporal())
	if outBytes > float64(math.MaxInt64/4) {
		return errf(CodeTooLarge, "size", "output of %.3g bytes is too large", outBytes)
	}
	return nil
}

// OutDType is the dtype of the result.
func (s *Spec) OutDType() DType {
	if s.Norm != nil {
		return s.Norm.DType
	}
	return s.In.DType
}

// temporal is how many times the output holds each value: the patch layout's Temporal, else 1.
func (s *Spec) temporal() int {
	if s.Norm != nil && s.Norm.Patch != nil {
		return s.Norm.Patch.Temporal
	}
	return 1
}

// check validates a patch layout: positive fields up to MaxPatchParam, a CHW float32 output whose
// height and width are multiples of Size*Merge.
func (ps *PatchSpec) check(nm *NormSpec, s *Spec) error {
	for _, f := range []struct {
		name string
		v    int
	}{{"patch_size", ps.Size}, {"merge_size", ps.Merge}, {"temporal_patch_size", ps.Temporal}} {
		if f.v < 1 || f.v > MaxPatchParam {
			return errf(CodeInvalidArgument, f.name, "must be an integer in [1, %d], got %d", MaxPatchParam, f.v)
		}
	}
	if nm.Layout != "CHW" || nm.DType != F32 {
		return errf(CodeInvalidArgument, "patch", "the patch layout needs layout='CHW' and dtype='float32', got %q %s", nm.Layout, nm.DType)
	}
	oh, ow := s.OutSize()
	if f := ps.Size * ps.Merge; oh%f != 0 || ow%f != 0 {
		return errf(CodeBadShape, "patch", "a %dx%d image is not a multiple of patch_size * merge_size = %d", oh, ow, f)
	}
	return nil
}
