// Package codec decodes encoded images (JPEG with libjpeg-turbo, PNG with libpng) into 8-bit
// interleaved pixels, for goprep's decode op. It reads headers without decoding (Probe), so that a
// caller can plan the rest of the pipeline and refuse decompression bombs before any allocation,
// then decodes into caller-owned memory (Decode).
//
// Exactness contract: with Options{Scale: 1} and no Window, Decode's RGB output equals Pillow's
// np.asarray(Image.open(f).convert("RGB")) byte for byte (the same libjpeg-turbo settings: ISLOW DCT,
// fancy upsampling; CMYK and grayscale converted as Pillow converts them).
//
// Every error is an *engine.Error: CodeDecode for bad data (empty, truncated, corrupt, an unknown
// or unsupported format), CodeTooLarge for an image over Options.MaxPixels.
package codec

import "github.com/goprep/goprep/gomod/engine"

// Format names an encoded format.
type Format string

const (
	JPEG Format = "jpeg"
	PNG  Format = "png"
)

// Mode is the pixel layout Decode writes.
type Mode int

const (
	RGB  Mode = iota // 3 channels, R G B
	Gray             // 1 channel (JPEG: the luma plane; PNG: Pillow's convert("L"))
	RGBA             // 4 channels (PNG's alpha; 255 for formats without one)
)

// Channels is the number of interleaved channels of a Mode.
func (m Mode) Channels() int {
	switch m {
	case Gray:
		return 1
	case RGBA:
		return 4
	}
	return 3
}

// Header is what Probe reads from the file's header: no pixel data is decoded.
type Header struct {
	Format      Format
	Height      int  // as stored, before any EXIF orientation
	Width       int  // as stored
	Components  int  // JPEG: 1 gray, 3 YCbCr/RGB, 4 CMYK/YCCK; PNG: 1 gray, 2 gray+alpha, 3 RGB, 4 RGBA (palette: 3 or 4)
	BitDepth    int  // 8 (16-bit PNGs are refused by Decode)
	Progressive bool // JPEG only
	Orientation int  // EXIF orientation 1..8; 1 when absent or unreadable
}

// Window is a rectangle of the decoded image (after Scale): rows [Y0, Y1), columns [X0, X1). The
// zero Window means the whole image.
type Window struct{ Y0, Y1, X0, X1 int }

// Empty reports whether the window is the zero window (the whole image).
func (w Window) Empty() bool { return w == Window{} }

// Options control Decode.
type Options struct {
	Mode  Mode
	Scale int // JPEG DCT scaling: the image is decoded at 1/Scale, Scale in {1, 2, 4, 8} (0 means 1); ignored for PNG
	// ApplyOrientation rotates/flips the decoded image by its EXIF orientation (the output's
	// height and width swap for orientations 5..8).
	ApplyOrientation bool
	// Window: only these rows and columns of the output must be exact (others may hold anything);
	// the decoder may skip the rest (JPEG: jpeg_crop_scanline / jpeg_skip_scanlines, iMCU-aligned,
	// wide enough that fancy upsampling at the window's edges reads the same neighbours as a full
	// decode). Ignored when ApplyOrientation changes the image.
	Window Window
	// MaxPixels refuses (CodeTooLarge) any image whose header claims more pixels, before any
	// allocation. 0 means no limit.
	MaxPixels int64
}

// OutSize is the size Decode writes for header h under options o: height, width, channels. The JPEG
// scaled size is ceil(dim / Scale), libjpeg's rule (and Pillow's draft).
func OutSize(h Header, o Options) (height, width, channels int) {
	s := max(o.Scale, 1)
	if h.Format != JPEG {
		s = 1
	}
	height, width = (h.Height+s-1)/s, (h.Width+s-1)/s
	if o.ApplyOrientation && h.Orientation >= 5 {
		height, width = width, height
	}
	return height, width, o.Mode.Channels()
}

// Probe reads the header only (no pixel decode, no big allocation).
func Probe(data []byte) (Header, error) {
	switch sniff(data) {
	case JPEG:
		h, err := probeJPEG(data)
		if err != nil {
			return Header{}, err
		}
		h.Orientation = jpegOrientation(data)
		return h, nil
	case PNG:
		return probePNG(data)
	}
	if len(data) == 0 {
		return Header{}, decodeErr("empty data (0 bytes)")
	}
	return Header{}, decodeErr("unknown image format (the data starts with % x; JPEG and PNG are supported)",
		data[:min(len(data), 8)])
}

// Decode writes the OutSize(h, o) image (8-bit interleaved, row stride `stride` bytes) into dst.
// It probes itself; it checks o.MaxPixels against the header before allocating anything.
func Decode(data []byte, o Options, dst []byte, stride int) error {
	h, err := Probe(data)
	if err != nil {
		return err
	}
	if err := checkPixels(h.Width, h.Height, o.MaxPixels); err != nil {
		return err
	}
	switch o.Scale {
	case 0, 1, 2, 4, 8:
	default:
		return engine.Errorf(engine.CodeInvalidArgument, "scale", "must be 1, 2, 4 or 8, got %d", o.Scale)
	}
	if o.Mode < RGB || o.Mode > RGBA {
		return engine.Errorf(engine.CodeInvalidArgument, "mode", "unknown mode %d", o.Mode)
	}
	oh, ow, ch := OutSize(h, o)
	if stride < ow*ch || (oh > 0 && len(dst) < (oh-1)*stride+ow*ch) {
		return engine.Errorf(engine.CodeInvalidArgument, "dst",
			"%d bytes with row stride %d cannot hold a %dx%dx%d image", len(dst), stride, oh, ow, ch)
	}
	orient := 1
	if o.ApplyOrientation && h.Orientation >= 2 && h.Orientation <= 8 {
		orient = h.Orientation
	}
	w := o.Window
	if orient != 1 || h.Format != JPEG {
		w = Window{}
	}
	if !w.Empty() {
		if w.Y0 < 0 || w.Y0 >= w.Y1 || w.Y1 > oh || w.X0 < 0 || w.X0 >= w.X1 || w.X1 > ow {
			return engine.Errorf(engine.CodeInvalidArgument, "window",
				"rows [%d, %d) columns [%d, %d) are not a non-empty part of the %dx%d image", w.Y0, w.Y1, w.X0, w.X1, oh, ow)
		}
		if w == (Window{0, oh, 0, ow}) {
			w = Window{}
		}
	}
	if orient == 1 {
		return decodeStored(data, h, o, w, dst, stride)
	}
	// Decode as stored, then the orientation's transposing copy.
	sh, sw := oh, ow
	if orient >= 5 {
		sh, sw = ow, oh
	}
	tmp := make([]byte, sh*sw*ch)
	if err := decodeStored(data, h, o, Window{}, tmp, sw*ch); err != nil {
		return err
	}
	orientCopy(dst, stride, tmp, sh, sw, ch, orient)
	return nil
}

func decodeStored(data []byte, h Header, o Options, w Window, dst []byte, stride int) error {
	if h.Format == JPEG {
		return decodeJPEG(data, o, w, dst, stride)
	}
	return decodePNG(data, h, o, dst, stride)
}

func sniff(data []byte) Format {
	if len(data) >= 3 && data[0] == 0xFF && data[1] == 0xD8 && data[2] == 0xFF {
		return JPEG
	}
	if len(data) >= 8 && string(data[:8]) == "\x89PNG\r\n\x1a\n" {
		return PNG
	}
	return ""
}

func checkPixels(w, h int, limit int64) error {
	if limit > 0 && int64(w)*int64(h) > limit {
		return engine.Errorf(engine.CodeTooLarge, "data", "the image is %dx%d (%d pixels), over the limit of %d pixels",
			w, h, int64(w)*int64(h), limit)
	}
	return nil
}

func decodeErr(format string, a ...any) error {
	return engine.Errorf(engine.CodeDecode, "data", format, a...)
}
