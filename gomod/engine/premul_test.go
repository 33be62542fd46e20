package engine

import (
	"fmt"
	"math/rand"
	"testing"
	"unsafe"
)

// premulRef is Pillow's RGBA resize written out step by step: the (viewed) image premultiplied
// pixel by pixel (rgbA2rgba's MULDIV255), resized by a plain 4-channel Pillow plan, converted back
// (rgba2rgbA: 255*c/a in integers, clipped; alpha 0 and 255 kept).
func premulRef(t *testing.T, img []uint8, h, w int, kind string, oh, ow int) []uint8 {
	t.Helper()
	pm := make([]uint8, len(img))
	for i := 0; i < len(img); i += 4 {
		a := int(img[i+3])
		for c := 0; c < 3; c++ {
			v := int(img[i+c])*a + 128
			pm[i+c] = uint8(((v >> 8) + v) >> 8)
		}
		pm[i+3] = img[i+3]
	}
	s := rgbaSpec(h, w, kind, oh, ow)
	p, err := NewPlan(s)
	if err != nil {
		t.Fatal(err)
	}
	out := runGuarded(t, p, unsafe.Pointer(&pm[0]), 1)
	for i := 0; i < len(out); i += 4 {
		a := int(out[i+3])
		if a == 0 || a == 255 {
			continue
		}
		for c := 0; c < 3; c++ {
			out[i+c] = uint8(min(255*int(out[i+c])/a, 255))
		}
	}
	return out
}

func rgbaSpec(h, w int, kind string, oh, ow int) *Spec {
	return &Spec{
		In:     InputSpec{DType: U8, H: h, W: w, C: 4, Strides: [4]int64{0, int64(4 * w), 4, 1}},
		Pre:    View{0, 0, 1, 1, h, w},
		Resize: ResizeSpec{Kind: kind, Antialias: true, H: oh, W: ow},
		Canvas: CanvasSpec{H: oh, W: ow},
		Post:   View{0, 0, 1, 1, oh, ow},
		CMap:   []int{0, 1, 2, 3},
	}
}

// randRGBA is an h x w RGBA image whose alpha is often 0 or 255 and otherwise random.
func randRGBA(rng *rand.Rand, h, w int) []uint8 {
	img := make([]uint8, h*w*4)
	for i := range img {
		img[i] = uint8(rng.Intn(256))
	}
	for i := 3; i < len(img); i += 4 {
		switch rng.Intn(4) {
		case 0:
			img[i] = 0
		case 1:
			img[i] = 255
		}
	}
	return img
}

// TestPremultiplyEqualsStepByStep: a premultiplied plan equals premultiplying, resizing and
// converting back step by step, for both pass orders (vertical-first plans included), up- and
// downscales, a source view (crop and flips), interleaved, planar and strided layouts, batches and
// threads.
func TestPremultiplyEqualsStepByStep(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	const H, W = 37, 53
	sizes := [][2]int{{20, 30}, {9, 50}, {60, 80}, {37, 20}, {37, 53 + 7}, {5, 51}}
	for _, kind := range []string{"bilinear", "bicubic"} {
		for _, sz := range sizes {
			for _, layout := range []string{"hwc", "chw", "strided", "flipped"} {
				t.Run(fmt.Sprintf("%s_%dx%d_%s", kind, sz[0], sz[1], layout), func(t *testing.T) {
					const n = 2
					imgs := [n][]uint8{randRGBA(rng, H, W), randRGBA(rng, H, W)}
					// the source view: rows 2..H-2 flipped vertically, columns 3..W-1
					vh, vw := H-4, W-3
					view := func(img []uint8) []uint8 {
						v := make([]uint8, vh*vw*4)
						for y := 0; y < vh; y++ {
							for x := 0; x < vw; x++ {
								copy(v[(y*vw+x)*4:(y*vw+x)*4+4], img[((H-3-y)*W+3+x)*4:])
							}
						}
						return v
					}
					// the batch laid out per layout: element (n, y, x, c) at the returned strides
					var buf []uint8
					var st [4]int64
					switch layout {
					case "hwc":
						st = [4]int64{int64(H * W * 4), int64(W * 4), 4, 1}
					case "chw":
						st = [4]int64{int64(H * W * 4), int64(W), 1, int64(H * W)}
					case "strided": // pixels 6 bytes apart, channels 1 apart
						st = [4]int64{int64(H*W*6 + 5), int64(W*6 + 3), 6, 1}
					case "flipped": // the source's columns reversed in memory (negative pixel stride)
						st = [4]int64{int64(H * W * 4), int64(W * 4), -4, 1}
					}
					lo, span := extent([2]int{n, int(st[0])}, [2]int{H, int(st[1])}, [2]int{W, int(st[2])}, [2]int{4, int(st[3])})
					buf = make([]uint8, span)
					org := -lo
					for i := range n {
						for y := 0; y < H; y++ {
							for x := 0; x < W; x++ {
								for c := 0; c < 4; c++ {
									buf[org+i*int(st[0])+y*int(st[1])+x*int(st[2])+c*int(st[3])] = imgs[i][(y*W+x)*4+c]
								}
							}
						}
					}
					s := rgbaSpec(H, W, kind, sz[0], sz[1])
					s.In.N, s.In.Strides = n, st
					s.Pre = View{H - 3, 3, -1, 1, vh, vw}
					s.Resize.Premultiply = true
					p, err := NewPlan(s)
					if err != nil {
						t.Fatal(err)
					}
					if p.pm == nil {
						t.Fatal("no premultiplied plan")
					}
					if ok, _ := p.GPUSupported(); ok {
						t.Fatal("a premultiplied plan is declined by the GPU kernels")
					}
					for _, threads := range []int{1, 3} {
						inline := inlineElems
						inlineElems = 0
						got := runGuarded(t, p, unsafe.Pointer(&buf[org]), threads)
						inlineElems = inline
						for i := range n {
							want := premulRef(t, view(imgs[i]), vh, vw, kind, sz[0], sz[1])
							g := got[i*p.OutImageElems() : (i+1)*p.OutImageElems()]
							for j := range want {
								if g[j] != want[j] {
									t.Fatalf("threads %d image %d element %d (pixel %d ch %d): got %d, want %d", threads, i, j, j/4, j%4, g[j], want[j])
								}
							}
						}
					}
				})
			}
		}
	}
}

// TestPremultiplySpec: premultiply is refused where it does not apply, and an unchanged size
// leaves the image alone (Pillow returns it as a copy).
func TestPremultiplySpec(t *testing.T) {
	bad := []func(s *Spec){
		func(s *Spec) { s.Resize.Antialias = false },
		func(s *Spec) { s.Resize.TorchU8 = true },
		func(s *Spec) { s.Resize.Kind, s.Resize.Antialias = "nearest", false },
		func(s *Spec) { s.In.C, s.In.Strides[2], s.CMap = 3, 3, []int{0, 1, 2} },
		func(s *Spec) { s.In.DType, s.In.Strides = F32, [4]int64{0, 4 * 4 * 9, 16, 4} },
	}
	for i, edit := range bad {
		s := rgbaSpec(8, 9, "bilinear", 4, 5)
		s.Resize.Premultiply = true
		edit(s)
		if _, err := NewPlan(s); err == nil {
			t.Fatalf("case %d accepted", i)
		} else if e, ok := err.(*Error); !ok || e.Arg != "premultiply" && e.Arg != "antialias" {
			t.Fatalf("case %d: %v", i, err)
		}
	}
	s := rgbaSpec(8, 9, "bicubic", 8, 9)
	s.Resize.Premultiply = true
	p, err := NewPlan(s)
	if err != nil || p.pm != nil {
		t.Fatalf("unchanged size: %v, premultiplied %v", err, p != nil && p.pm != nil)
	}
	img := randRGBA(rand.New(rand.NewSource(1)), 8, 9)
	if got := runGuarded(t, p, unsafe.Pointer(&img[0]), 1); string(got) != string(img) {
		t.Fatal("an unchanged size changed the image")
	}
}
