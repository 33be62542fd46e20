//go:build !nocodecs

package codec

// #cgo pkg-config: libpng
// #include <stdlib.h>
// #include "png_codec.h"
import "C"

import (
	"unsafe"

	"github.com/goprep/goprep/gomod/engine"
)

func pngVersion() string { return C.GoString(C.gp_png_version()) }

// decodePNG decodes the whole image (PNG has no scaling or windows) into dst.
func decodePNG(data []byte, h Header, o Options, dst []byte, stride int) error {
	if h.BitDepth == 16 {
		return decodeErr("16-bit PNG is not supported (8-bit and below only)")
	}
	r := C.gp_png_request{mode: C.int(o.Mode), max_pixels: C.longlong(o.MaxPixels)}
	var dp *C.uint8_t
	if len(dst) > 0 {
		dp = (*C.uint8_t)(unsafe.Pointer(&dst[0]))
	}
	rc := C.gp_png_decode((*C.uint8_t)(unsafe.Pointer(&data[0])), C.size_t(len(data)), &r, dp, C.size_t(len(dst)),
		C.size_t(stride))
	switch rc {
	case C.GP_OK:
		return nil
	case C.GP_ERR_TOO_LARGE:
		return engine.Errorf(engine.CodeTooLarge, "data", "%s", C.GoString(&r.msg[0]))
	case C.GP_ERR_NOMEM:
		return engine.Errorf(engine.CodeInternal, "", "PNG decoder: %s", C.GoString(&r.msg[0]))
	}
	return decodeErr("%s", C.GoString(&r.msg[0]))
}
