//go:build ignore_me_tmp || !ignore_me_tmp

package codec

// TEMPORARY stand-in (image/jpeg, image/png) until the libjpeg-turbo/libpng decoders land.

import (
	"bytes"
	"image"
	"image/draw"
	_ "image/jpeg"
	_ "image/png"

	"github.com/goprep/goprep/gomod/engine"
)

func Probe(data []byte) (Header, error) {
	cfg, f, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return Header{}, engine.Errorf(engine.CodeDecode, "data", "%v", err)
	}
	return Header{Format: Format(f), Height: cfg.Height, Width: cfg.Width, Components: 3, BitDepth: 8, Orientation: 1}, nil
}

func Decode(data []byte, o Options, dst []byte, stride int) error {
	h, err := Probe(data)
	if err != nil {
		return err
	}
	if o.MaxPixels > 0 && int64(h.Height)*int64(h.Width) > o.MaxPixels {
		return engine.Errorf(engine.CodeTooLarge, "data", "%dx%d", h.Width, h.Height)
	}
	im, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return engine.Errorf(engine.CodeDecode, "data", "%v", err)
	}
	rgba := image.NewRGBA(im.Bounds())
	draw.Draw(rgba, rgba.Bounds(), im, im.Bounds().Min, draw.Src)
	for y := 0; y < h.Height; y++ {
		for x := 0; x < h.Width; x++ {
			for c := 0; c < 3; c++ {
				dst[y*stride+x*3+c] = rgba.Pix[y*rgba.Stride+x*4+c]
			}
		}
	}
	return nil
}

func Available() map[string]string { return map[string]string{"jpeg": "image/jpeg (temporary)"} }
