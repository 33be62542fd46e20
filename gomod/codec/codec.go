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
