package binding

// Packing a Pillow "RGB" image's own RGBX memory into a packed (h, w, 3) array, in bands of rows on
// NumThreads goroutines (gopy releases the GIL around it): python/goprep/_inputs.py's pil_as_hwc.

import (
	"unsafe"

	"github.com/goprep/goprep/gomod/engine"
)

// PackMaxBytes is the most RGBX bytes PackRGBX reads in one call (Python reads it: _native.limit;
// a larger image is packed by Pillow instead).
const PackMaxBytes = 1 << 31

// PackLimit is PackMaxBytes, for Python (one source).
func PackLimit() int64 { return PackMaxBytes }

// packBandRows is the rows of one band of PackRGBX: enough work per goroutine handoff, and enough
// bands for the threads to share a tall image evenly.
const packBandRows = 64

// PackRGBX writes the h x w pixels of the array object src (contiguous rows of 4-byte pixels: R, G,
// B and an unused byte) into the array object dst (a contiguous (h, w, 3) uint8 array) as packed RGB
// (engine.PackRGBXRow). Python makes both arrays with these shapes; h and w are checked for range.
func PackRGBX(src, dst, h, w int64) (err error) {
	defer engine.Recover(&err)
	if h < 1 || w < 1 || h > PackMaxBytes/w/4 {
		return engine.Errorf(engine.CodeInvalidArgument, "src", "bad image size %d x %d", h, w)
	}
	sp, err := readArrayData(src)
	if err != nil {
		return err
	}
	dp, err := readArrayData(dst)
	if err != nil {
		return err
	}
	s := unsafe.Slice((*byte)(sp), 4*h*w)
	d := unsafe.Slice((*byte)(dp), 3*h*w)
	rows, cols := int(h), int(w)
	eachItem((rows+packBandRows-1)/packBandRows, func(b int) {
		for y := b * packBandRows; y < min((b+1)*packBandRows, rows); y++ {
			engine.PackRGBXRow(d[3*cols*y:3*cols*(y+1)], s[4*cols*y:4*cols*(y+1)])
		}
	})
	return nil
}
