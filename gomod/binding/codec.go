package binding

import (
	"encoding/json"
	"unsafe"

	"github.com/goprep/goprep/gomod/codec"
	"github.com/goprep/goprep/gomod/engine"
)

// Codecs is the JSON of codec.Available(): the decoders built in, name -> library version ({} when
// the extension was built with -tags nocodecs); goprep.info()["codecs"].
func Codecs() string {
	b, _ := json.Marshal(codec.Available()) // a map of strings always marshals
	return string(b)
}

// rawBytes views n bytes at a raw address (memory Python owns, outside Go's heap).
func rawBytes(addr, n int64) []byte {
	if addr == 0 || n <= 0 {
		return nil
	}
	p := *(*unsafe.Pointer)(unsafe.Pointer(&addr))
	return unsafe.Slice((*byte)(p), n)
}

// ProbeHeader reads the header of the n encoded bytes at address data: the JSON of codec.Header.
func ProbeHeader(data, n int64) (s string, err error) {
	defer engine.Recover(&err)
	h, err := codec.Probe(rawBytes(data, n))
	if err != nil {
		return "", err
	}
	b, _ := json.Marshal(h)
	return string(b), nil
}

// DecodeInto decodes the n encoded bytes at address data into the dstLen bytes at address dst (rows
// `stride` bytes apart), with codec.Options{Mode: mode, Scale: scale, ApplyOrientation:
// applyOrientation != 0, MaxPixels: maxPixels} and window rows [y0, y1) columns [x0, x1) (all zero:
// the whole image). The caller sizes dst from ProbeHeader and codec.OutSize's rule.
func DecodeInto(data, n, mode, scale, applyOrientation, maxPixels, y0, y1, x0, x1, dst, dstLen, stride int64) (err error) {
	defer engine.Recover(&err)
	o := codec.Options{
		Mode: codec.Mode(mode), Scale: int(scale), ApplyOrientation: applyOrientation != 0, MaxPixels: maxPixels,
		Window: codec.Window{Y0: int(y0), Y1: int(y1), X0: int(x0), X1: int(x1)},
	}
	return codec.Decode(rawBytes(data, n), o, rawBytes(dst, dstLen), int(stride))
}
