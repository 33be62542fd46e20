//go:build ignore

// Input of `go tool cgo -godefs` (scripts/generate.sh): the Go mirror of kernels/goprep.h, the
// descriptor ABI, is derived from the header itself, so the two cannot drift. Output: gpu_abi.go.

package engine

// #include "goprep.h"
import "C"

// Mode numbers and output codes of kernels/goprep.h.
const (
	gpModeGather    = C.GP_MODE_GATHER
	gpModeBilinear  = C.GP_MODE_BILINEAR
	gpModeAntialias = C.GP_MODE_ANTIALIAS
	gpModeTaps      = C.GP_MODE_TAPS
	gpEndNone       = C.GP_END_NONE
	gpEndScale      = C.GP_END_SCALE
	gpEndQuad       = C.GP_END_QUAD
	gpOutU8         = C.GP_OUT_U8
	gpOutF32        = C.GP_OUT_F32
	gpOutF16        = C.GP_OUT_F16
)

// gpAxis is gp_axis; gpYUV is gp_yuv; gpImage is gp_image.
type gpAxis C.gp_axis

type gpYUV C.gp_yuv

type gpImage C.gp_image
