//go:build !nocodecs

package codec

// #cgo pkg-config: libjpeg
// #include <stdlib.h>
// #include "jpeg.h"
import "C"

import (
	"unsafe"

	"github.com/goprep/goprep/gomod/engine"
)

func jpegVersion() string { return C.GoString(C.gp_jpeg_version()) }

func jpegError(rc C.int, msg *C.char) error {
	m := C.GoString(msg)
	switch rc {
	case C.GP_ERR_TOO_LARGE:
		return engine.Errorf(engine.CodeTooLarge, "data", "%s", m)
	case C.GP_ERR_NOMEM:
		return engine.Errorf(engine.CodeInternal, "", "JPEG decoder: %s", m)
	}
	return decodeErr("%s", m)
}

func probeJPEG(data []byte) (Header, error) {
	var h C.gp_jpeg_header
	if rc := C.gp_jpeg_probe((*C.uint8_t)(unsafe.Pointer(&data[0])), C.size_t(len(data)), &h); rc != C.GP_OK {
		return Header{}, jpegError(rc, &h.msg[0])
	}
	return Header{
		Format: JPEG, Height: int(h.height), Width: int(h.width), Components: int(h.components),
		BitDepth: 8, Progressive: h.progressive != 0, Orientation: 1,
	}, nil
}

// decodeJPEG decodes the stored (unoriented) image at o.Scale into dst; w, when not empty, is the
// part of it that must be exact.
func decodeJPEG(data []byte, o Options, w Window, dst []byte, stride int) error {
	r := C.gp_jpeg_request{mode: C.int(o.Mode), scale: C.int(max(o.Scale, 1)), max_pixels: C.longlong(o.MaxPixels)}
	if !w.Empty() {
		r.y0, r.y1, r.x0, r.x1 = C.int(w.Y0), C.int(w.Y1), C.int(w.X0), C.int(w.X1)
	}
	var dp *C.uint8_t
	if len(dst) > 0 {
		dp = (*C.uint8_t)(unsafe.Pointer(&dst[0]))
	}
	rc := C.gp_jpeg_decode((*C.uint8_t)(unsafe.Pointer(&data[0])), C.size_t(len(data)), &r, dp, C.size_t(len(dst)),
		C.size_t(stride))
	if rc != C.GP_OK {
		return jpegError(rc, &r.msg[0])
	}
	return nil
}
