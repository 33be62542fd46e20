package engine

import (
	"math/rand"
	"testing"
	"unsafe"
)

// randomPlanarAASpec is a random planar (C, H, W) antialias spec: sizes, down- and upscales, both
// filters, crops before and after the resize, row flips, output flips, gaps between rows and planes.
func randomPlanarAASpec(rng *rand.Rand) (s *Spec, srcLen int, start int) {
	h, w := 8+rng.Intn(120), 8+rng.Intn(160)
	rowGap, planeGap := rng.Intn(3)*rng.Intn(40), rng.Intn(2)*rng.Intn(100)
	rs := w + rowGap
	plane := h*rs + planeGap
	s = imagenetSpec(0, h, w)
	s.Resize.Kind = []string{"bilinear", "bicubic"}[rng.Intn(2)]
	s.Resize.Antialias = true
	s.In.Strides = [4]int64{0, int64(rs), 1, int64(plane)}
	srcLen = 3 * plane
	if rng.Intn(3) == 0 { // source rows flipped: the array starts at the last row
		s.In.Strides[1] = -int64(rs)
		start = (h - 1) * rs
	}
	// a crop before the resize (rows may be flipped; columns stay ascending, as the fast path needs)
	ch, cw := 4+rng.Intn(h-3), 4+rng.Intn(w-3)
	y0, x0 := rng.Intn(h-ch+1), rng.Intn(w-cw+1)
	s.Pre = View{y0, x0, 1, 1, ch, cw}
	if rng.Intn(3) == 0 {
		s.Pre = View{y0 + ch - 1, x0, -1, 1, ch, cw}
	}
	oh, ow := 1+rng.Intn(2*ch), 1+rng.Intn(2*cw)
	if rng.Intn(2) == 0 { // mostly downscales, as the model zoo's
		oh, ow = 1+rng.Intn(ch), 1+rng.Intn(cw)
	}
	s.Resize.H, s.Resize.W = oh, ow
	s.Canvas = CanvasSpec{H: oh, W: ow}
	ph, pw := 1+rng.Intn(oh), 1+rng.Intn(ow)
	py, px := rng.Intn(oh-ph+1), rng.Intn(ow-pw+1)
	sy, sx := 1, 1
	if rng.Intn(2) == 0 {
		sy, py = -1, py+ph-1
	}
	if rng.Intn(2) == 0 {
		sx, px = -1, px+pw-1
	}
	s.Post = View{py, px, sy, sx, ph, pw}
	if rng.Intn(4) == 0 {
		s.CMap = []int{2, 1, 0}
	}
	return s, srcLen, start
}

// The AVX2 planar horizontal pass (aaHPlanarRows) gives exactly aaHPlanar's bytes for every source
// row, in pairs and alone, over random specs; the rows nearest the end of the array (whose 16-byte
// loads would run past it) take the pure-Go kernel. Without SIMD this checks the pairing only.
func TestAAPlanarRowsEqualPureGo(t *testing.T) {
	rng := rand.New(rand.NewSource(13))
	tried := 0
	for it := 0; it < 400; it++ {
		s, srcLen, start := randomPlanarAASpec(rng)
		p, err := NewPlan(s)
		if err != nil {
			t.Fatalf("spec %d: %v", it, err)
		}
		if p.aa == nil || !p.aa.planar || p.aa.pl == nil {
			continue
		}
		tried++
		src := make([]uint8, srcLen) // exactly the array: nothing to read past
		for i := range src {
			src[i] = uint8(rng.Intn(256))
		}
		if rng.Intn(2) == 0 { // extremes, for the clamps
			for i := range src {
				src[i] = uint8(255 * rng.Intn(2))
			}
		}
		view := unsafe.Slice((*uint8)(unsafe.Add(unsafe.Pointer(&src[start]), p.minOff)), p.spanElems)
		base := -p.minOff
		n := p.OutW
		got0, got1 := make([]uint8, 3*n+16), make([]uint8, 3*n+16)
		want0, want1 := make([]uint8, 3*n+16), make([]uint8, 3*n+16)
		for _, rb0 := range p.rows.Off {
			rb1 := p.rows.Off[rng.Intn(len(p.rows.Off))]
			aaHPlanar(want0, view, base+rb0, p.aa, p)
			aaHPlanar(want1, view, base+rb1, p.aa, p)
			p.kern.aaHPlanarRows(got0, got1, view, base+rb0, base+rb1, p.aa, p)
			if string(got0[:3*n]) != string(want0[:3*n]) || string(got1[:3*n]) != string(want1[:3*n]) {
				t.Fatalf("spec %d %+v: planar rows (%d, %d) differ from aaHPlanar (simd=%v)", it, s, rb0, rb1, simdEnabled)
			}
			clear(got0)
			p.kern.aaHPlanarRows(got0, nil, view, base+rb0, 0, p.aa, p)
			if string(got0[:3*n]) != string(want0[:3*n]) {
				t.Fatalf("spec %d %+v: single planar row %d differs from aaHPlanar (simd=%v)", it, s, rb0, simdEnabled)
			}
		}
	}
	if tried < 200 {
		t.Fatalf("only %d of 400 random specs took the planar fast path", tried)
	}
}

// The whole planar fast path (horizontal pass, row cache, vertical pass, normalisation) equals the
// general path over random specs and batches, as runGuarded sees it (no write outside the output).
func TestAAPlanarFastPathEqualsGeneralRandom(t *testing.T) {
	forceThreads(t)
	rng := rand.New(rand.NewSource(21))
	for it := 0; it < 120; it++ {
		s, srcLen, start := randomPlanarAASpec(rng)
		if start == 0 && rng.Intn(2) == 0 { // a batch of two
			s.In.N, s.In.Strides[0] = 2, int64(srcLen)
			srcLen *= 2
		}
		p, err := NewPlan(s)
		if err != nil {
			t.Fatalf("spec %d: %v", it, err)
		}
		if p.aa == nil {
			continue
		}
		src := make([]uint8, srcLen)
		for i := range src {
			src[i] = uint8(rng.Intn(256))
		}
		general := *p
		general.aa = nil
		ptr := unsafe.Pointer(&src[start])
		if a, b := runGuarded(t, p, ptr, 1+rng.Intn(2)), runGuarded(t, &general, ptr, 1); string(a) != string(b) {
			t.Fatalf("spec %d %+v: planar fast antialias path differs from the general path (simd=%v)", it, s, simdEnabled)
		}
	}
}

// The kernel follows its table's precision: with 14-bit weights and shift (as a lower-precision table
// would have) it still computes round(sum(p*w) >> 14), checked against a reference written here.
func TestAAPlanarRowsOtherPrecision(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for _, kind := range []string{"bilinear", "bicubic"} {
		h, w := 64, 300
		s := imagenetSpec(0, h, w)
		s.Resize.Kind, s.Resize.Antialias = kind, true
		s.In.Strides = [4]int64{0, int64(w), 1, int64(h * w)}
		s.Resize.W, s.Canvas.W, s.Post.W, s.Post.X0 = 97, 97, 97, 96
		p, err := NewPlan(s)
		if err != nil || p.aa == nil || p.aa.pl == nil {
			t.Fatalf("%s: plan %v, fast path %v", kind, err, p != nil && p.aa != nil)
		}
		q := *p
		q.cols.Taps.WI = append([]int32(nil), p.cols.Taps.WI...)
		const shift = 14
		for i := range q.cols.Taps.WI {
			q.cols.Taps.WI[i] >>= pilPrecisionBits - shift
		}
		a := *p.aa
		q.aa = &a
		a.pl = newAAPlanarTab(&a, &q)
		a.pl.shift = shift
		src := make([]uint8, 3*h*w)
		for i := range src {
			src[i] = uint8(rng.Intn(256))
		}
		n := q.OutW
		got0, got1 := make([]uint8, 3*n), make([]uint8, 3*n)
		for y := 0; y+1 < h; y += 2 {
			q.kern.aaHPlanarRows(got0, got1, src, y*w, (y+1)*w, &a, &q)
			for r, got := range [][]uint8{got0, got1} {
				rb := (y + r) * w
				for ch := 0; ch < 3; ch++ {
					for j, c := range a.cols {
						sum := int32(1 << (shift - 1))
						for k := int32(0); k < c.cnt; k++ {
							sum += int32(src[rb+a.minOff+ch*a.strideC+int(c.off+k)]) * q.cols.Taps.WI[c.w+k]
						}
						if want := clampU8(sum >> shift); got[ch*n+j] != want {
							t.Fatalf("%s row %d ch %d col %d: %d, want %d", kind, y+r, ch, j, got[ch*n+j], want)
						}
					}
				}
			}
		}
	}
}
