package engine

import (
	"math/rand"
	"strings"
	"testing"
	"unsafe"
)

// The fast antialias path must produce exactly the general path's output (Pillow's arithmetic), for
// both filters and every layout it accepts; with SIMD this also proves the split-weight kernels.
func TestAntialiasFastPathEqualsGeneral(t *testing.T) {
	forceThreads(t)
	rng := rand.New(rand.NewSource(5))
	h, w := 197, 263
	src := make([]uint8, 2*h*w*3+64)
	for i := range src {
		src[i] = uint8(rng.Intn(256))
	}
	type variant struct {
		name string
		edit func(s *Spec)
	}
	variants := []variant{
		{"plain", func(s *Spec) {}},
		{"upscale", func(s *Spec) {
			s.Resize.H, s.Resize.W, s.Canvas.H, s.Canvas.W, s.Post.H, s.Post.W, s.Post.X0 = 300, 350, 300, 350, 300, 350, 349
		}},
		// (the widths shrink too, by more than half what the heights do: Pillow's horizontal-first
		// order, which the fast path computes; pillowVerticalFirst)
		{"wide", func(s *Spec) {
			s.Resize.H, s.Canvas.H, s.Post.H = 37, 37, 37
			s.Resize.W, s.Canvas.W, s.Post.W, s.Post.X0 = 150, 150, 150, 149
		}},
		// ~100 (bilinear), ~200 (bicubic) and ~300 (lanczos) vertical taps: the paired VPMADDWD vertical pass and,
		// past aaVMaxPairs, the VPMULLD one
		{"tall window", func(s *Spec) {
			s.Resize.H, s.Canvas.H, s.Post.H = 2, 2, 2
			s.Resize.W, s.Canvas.W, s.Post.W, s.Post.X0 = 150, 150, 150, 149
		}},
		{"strong", func(s *Spec) {
			s.Resize.H, s.Resize.W, s.Canvas.H, s.Canvas.W, s.Post.H, s.Post.W, s.Post.X0 = 20, 9, 20, 9, 20, 9, 8
		}},
		{"bgr", func(s *Spec) { s.CMap = []int{2, 1, 0} }},
		{"torch weights", func(s *Spec) { s.Resize.TorchU8 = true }},
		{"torch weights upscale", func(s *Spec) {
			s.Resize.TorchU8 = true
			s.Resize.H, s.Resize.W, s.Canvas.H, s.Canvas.W, s.Post.H, s.Post.W, s.Post.X0 = 300, 350, 300, 350, 300, 350, 349
		}},
		{"torch plain", func(s *Spec) { s.Resize.TorchU8, s.Resize.Antialias = true, false }},
		{"torch plain upscale", func(s *Spec) {
			s.Resize.TorchU8, s.Resize.Antialias = true, false
			s.Resize.H, s.Resize.W, s.Canvas.H, s.Canvas.W, s.Post.H, s.Post.W, s.Post.X0 = 300, 350, 300, 350, 300, 350, 349
		}},
		{"no flip", func(s *Spec) { s.Post = View{0, 0, 1, 1, 224, 224} }},
		{"vflip crop", func(s *Spec) { s.Post = View{200, 0, -1, 1, 190, 224} }},
		{"source rows flipped", func(s *Spec) { s.In.Strides[1] = -int64(w * 3) }},
		{"planar", func(s *Spec) { s.In.Strides = [4]int64{int64(3 * h * w), int64(w), 1, int64(h * w)} }},
		{"letterbox rows", func(s *Spec) {
			s.Resize.H = 150
			s.Canvas = CanvasSpec{H: 224, W: 224, Top: 37, Pad: PadValues{114}}
		}},
	}
	for _, kind := range []string{"bilinear", "bicubic", "lanczos"} {
		for _, v := range variants {
			for _, n := range []int{0, 2} {
				s := imagenetSpec(n, h, w)
				s.Resize.Kind, s.Resize.Antialias = kind, true
				v.edit(s)
				if kind == "lanczos" && !s.Resize.Antialias {
					continue // PyTorch's plain kernel has no Lanczos form (a lanczos spec needs antialias)
				}
				start := 0
				if s.In.Strides[1] < 0 {
					start = (h - 1) * w * 3
				}
				p, err := NewPlan(s)
				if err != nil {
					t.Fatalf("%s: %v", v.name, err)
				}
				if p.aa == nil {
					t.Fatalf("%s %s: plan does not take the fast antialias path", kind, v.name)
				}
				if s.Resize.TorchU8 != (p.aa.hs.lo0 && p.aa.vs.lo0) {
					// torch tables must take the one-multiply-add kernels (and Pillow's these
					// 22-bit downscale tables the split ones), or this test would not cover them
					t.Fatalf("%s %s: weight splits %+v %+v", kind, v.name, p.aa.hs, p.aa.vs)
				}
				if p.fast != nil {
					t.Fatalf("%s %s: plan also takes OpenCV's bilinear fast path", kind, v.name)
				}
				general := *p
				general.aa = nil
				ptr := unsafe.Pointer(&src[start])
				a := runGuarded(t, p, ptr, 2)
				b := runGuarded(t, &general, ptr, 1)
				if string(a) != string(b) {
					t.Fatalf("%s %s (n=%d): fast antialias path differs from the general path (simd=%v)", kind, v.name, n, simdEnabled)
				}
			}
		}
	}
}

// The last rows of an array: the SIMD loads read past the last tap, so rows whose window reaches the
// end of the array must take the pure-Go kernel (Plan.checkBounds-style guard), with equal results.
func TestAntialiasFastPathAtArrayEnd(t *testing.T) {
	h, w := 40, 64
	src := make([]uint8, h*w*3) // exactly the image: nothing to read past
	for i := range src {
		src[i] = uint8(i * 13)
	}
	s := imagenetSpec(0, h, w)
	s.Resize.Antialias = true
	s.Resize.H, s.Resize.W, s.Canvas.H, s.Canvas.W, s.Post.H, s.Post.W, s.Post.X0 = 17, 23, 17, 23, 17, 23, 22
	p, err := NewPlan(s)
	if err != nil || p.aa == nil {
		t.Fatalf("plan: %v, aa=%v", err, p != nil && p.aa != nil)
	}
	general := *p
	general.aa = nil
	if string(runGuarded(t, p, unsafe.Pointer(&src[0]), 1)) != string(runGuarded(t, &general, unsafe.Pointer(&src[0]), 1)) {
		t.Fatal("fast antialias path differs from the general path at the end of the array")
	}
}

func TestAntialiasFastPathDeclines(t *testing.T) {
	for name, edit := range map[string]func(s *Spec){
		"source flipped": func(s *Spec) { s.In.Strides[2] = -3 },
		"hwc":            func(s *Spec) { s.Norm.Layout = "HWC" },
		"no norm":        func(s *Spec) { s.Norm = nil },
		"no antialias":   func(s *Spec) { s.Resize.Antialias = false },
		"column pad":     func(s *Spec) { s.Resize.W = 200; s.Canvas.Left = 10 },
	} {
		s := imagenetSpec(0, 100, 120)
		s.Resize.Antialias = true
		edit(s)
		start := 0
		_ = start
		p, err := NewPlan(s)
		if err != nil {
			continue // an edit the validator rejects cannot reach the fast path either
		}
		if p.aa != nil {
			t.Errorf("%s: took the fast antialias path", name)
		}
	}
}

// splitOf: PyTorch's int16 weights at precision p split at 22-p with no low half; Pillow's 22-bit
// weights split at 11; a table whose quotients overflow int16 never claims lo0.
func TestAASplitOf(t *testing.T) {
	for _, c := range []struct{ in, out int }{{1080, 224}, {1920, 224}, {197, 263}, {300, 7}} {
		for _, f := range []struct {
			fn      func(float64) float64
			support float64
		}{{triangleFilter, 1}, {pillowCubic, 2}} {
			tp := torchU8Taps(c.in, c.out, f.fn, f.support)
			sp := splitOf(tp.WI)
			if !sp.lo0 || sp.sh == 0 {
				t.Fatalf("torch %d->%d: split %+v", c.in, c.out, sp)
			}
			for _, w := range tp.WI {
				if hi, lo := sp.halves(w); lo != 0 || int32(hi)<<sp.sh != w {
					t.Fatalf("torch %d->%d: %d splits as %d, %d at %d", c.in, c.out, w, hi, lo, sp.sh)
				}
			}
		}
	}
	if sp := splitOf([]int32{1<<21 + 1, 3}); sp.lo0 || sp.sh != 11 {
		t.Fatalf("odd 22-bit weights: %+v", sp)
	}
	if sp := splitOf([]int32{1 << 22, -(1 << 20)}); !sp.lo0 || sp.sh != 20 {
		t.Fatalf("power-of-two weights: %+v", sp)
	}
	if sp := splitOf([]int32{(1<<16 + 1) << 4}); sp.lo0 {
		t.Fatalf("quotient past int16 claimed lo0: %+v", sp)
	}
}

// randomAASpec is a random interleaved-RGB antialias spec for the fast path's row kernels: sizes,
// down- and upscales, both filters, Pillow's and PyTorch's weight tables (with and without antialias).
func randomAASpec(rng *rand.Rand) *Spec {
	h, w := 4+rng.Intn(200), 4+rng.Intn(600)
	s := imagenetSpec(0, h, w)
	s.Resize.Kind = []string{"bilinear", "bicubic"}[rng.Intn(2)]
	s.Resize.Antialias, s.Resize.TorchU8 = true, rng.Intn(3) == 0
	if s.Resize.TorchU8 && rng.Intn(2) == 0 {
		s.Resize.Antialias = false // PyTorch's plain 2- / 4-tap kernel (torchU8PlainTaps)
	}
	oh, ow := 1+rng.Intn(h), 1+rng.Intn(w)
	if rng.Intn(4) == 0 {
		oh, ow = 1+rng.Intn(2*h), 1+rng.Intn(2*w)
	}
	s.Resize.H, s.Resize.W, s.Canvas = oh, ow, CanvasSpec{H: oh, W: ow}
	s.Post = View{0, ow - 1, 1, -1, oh, ow}
	return s
}

// The SIMD horizontal passes (aaHRows4 on four rows, aaHRows on two and one) give exactly aaHScalar's
// bytes over random specs and sources, the sources including runs of 0 and 255 (the clamps, and
// sums at the rounding boundaries the high-halves-first test in aaHRows4 must catch). With SIMD, the
// same check with that test switched off (aaCol.thr = 2^22) must fail on some spec: the test sees
// a kernel that drops the low halves.
func TestAAHRowsEqualScalarRandom(t *testing.T) {
	rng := rand.New(rand.NewSource(17))
	tried, caught, caughtP, wide, caughtZ, wideZ, caughtY, wideY := 0, 0, 0, 0, 0, 0, 0, 0
	for it := 0; it < 300; it++ {
		s := randomAASpec(rng)
		p, err := NewPlan(s)
		if err != nil {
			t.Fatalf("spec %d: %v", it, err)
		}
		if p.aa == nil || p.aa.planar {
			continue
		}
		tried++
		rs := s.In.W * 3
		src := guarded(t, s.In.H*rs, true) // exactly the image, against a guard page: the last rows take the scalar kernel
		fillExtremes(rng, src)
		n := p.OutW
		edge := guarded(t, 4*p.aa.edgeStride(), true) // the last slot against a guard page: an over-read faults
		check := func(a *aaPlan, wideOnly bool, modes []aaHMode) bool {
			var got, want [4][]uint8
			for i := range got {
				got[i], want[i] = make([]uint8, 3*n+16), make([]uint8, 3*n+16)
			}
			for y := 0; y < s.In.H; y++ {
				var rb [4]int
				for i := range rb {
					rb[i] = rng.Intn(s.In.H) * rs
					if i == 0 {
						rb[i] = y * rs
					}
					if i == 3 { // every row in the last edge slot too (the first and last rows copy into it)
						rb[i] = (s.In.H - 1 - y) * rs
					}
					aaHScalar(want[i], src, rb[i], a, p, 0, n)
				}
				if !wideOnly {
					p.kern.aaHRows4(&got, &rb, src, a, p)
					for i := range got {
						if string(got[i][:3*n]) != string(want[i][:3*n]) {
							return false
						}
					}
				}
				for _, m := range modes { // aaHRows4W with each of its column loops the CPU has
					for i := range got {
						clear(got[i])
					}
					ks := chooseKernels(cpu, kernelOverrides{NoZ: m.noZ, NoY: m.noY})
					ok := ks.aaHRows4W(&got, &rb, src, a, p, edge)
					if ok {
						wide++
						switch {
						case !m.noZ && a.zw != nil && n >= 16:
							wideZ++
						case !m.noY && n >= 16:
							wideY++
						}
						for i := range got {
							if string(got[i][:3*n]) != string(want[i][:3*n]) {
								return false
							}
						}
					}
				}
				if wideOnly {
					continue
				}
				p.kern.aaHRows(got[0], got[1], src, rb[0], rb[1], a, p)
				p.kern.aaHRows(got[2], nil, src, rb[2], 0, a, p)
				if string(got[0][:3*n]) != string(want[0][:3*n]) || string(got[1][:3*n]) != string(want[1][:3*n]) ||
					string(got[2][:3*n]) != string(want[2][:3*n]) {
					return false
				}
			}
			return true
		}
		all := []aaHMode{{}, {noZ: true}, {noZ: true, noY: true}}
		if !check(p.aa, false, all) {
			t.Fatalf("spec %d %+v: SIMD horizontal pass differs from aaHScalar (simd=%v, split %+v)", it, s.Resize, simdEnabled, p.aa.hs)
		}
		if simdEnabled && !p.aa.hs.lo0 {
			broken := *p.aa
			broken.cols = append([]aaCol(nil), p.aa.cols...)
			for j := range broken.cols {
				broken.cols[j].thr = 1 << pilPrecisionBits
			}
			if !check(&broken, false, all) {
				caught++
			}
			if !check(&broken, true, []aaHMode{{noZ: true, noY: true}}) { // aaHRows4W's archsimd loop alone
				caughtP++
			}
			// the assembly loops' own copies of the bound, each broken alone
			for _, z := range []struct {
				cols *[]aaAsmCol
				mode aaHMode
				n    *int
			}{{&broken.zcols, aaHMode{}, &caughtZ}, {&broken.ycols, aaHMode{noZ: true}, &caughtY}} {
				broken = *p.aa
				if *z.cols == nil {
					continue
				}
				*z.cols = append([]aaAsmCol(nil), *z.cols...)
				for j := range *z.cols {
					(*z.cols)[j].thrm1 = 1<<pilPrecisionBits - 1
				}
				if !check(&broken, true, []aaHMode{z.mode}) {
					*z.n++
				}
			}
		}
	}
	if tried < 200 {
		t.Fatalf("only %d of 300 random specs took the fast path", tried)
	}
	if simdEnabled && SIMDLevel() != "none (CPU lacks AVX2)" && caught == 0 {
		t.Fatal("dropping the low halves went unnoticed: the check cannot fail")
	}
	if simdEnabled && SIMDLevel() != "none (CPU lacks AVX2)" && (wide == 0 || caughtP == 0) {
		t.Fatalf("aaHRows4W ran %d times, %d specs caught with its low-half test off", wide, caughtP)
	}
	if currentKernels().AAHZ && (wideZ == 0 || caughtZ == 0) {
		t.Fatalf("aaHRowsZ ran %d times, %d specs caught with its low-half test off", wideZ, caughtZ)
	}
	if simdEnabled && SIMDLevel() != "none (CPU lacks AVX2)" && (wideY == 0 || caughtY == 0) {
		t.Fatalf("aaHRowsY ran %d times, %d specs caught with its low-half test off", wideY, caughtY)
	}
	t.Logf("%d specs, %d caught with the low-half test off (%d by aaHRows4W's archsimd loop alone; %d by aaHRowsZ, %d runs; %d by aaHRowsY, %d runs; aaHRows4W ran %d times)",
		tried, caught, caughtP, caughtZ, wideZ, caughtY, wideY, wide)
}

// aaHMode is one of aaHRows4W's column loops, as the kernel overrides select it: aaHRowsZ (none set,
// where the CPU has AVX-512 VNNI), aaHRowsY (noZ), the archsimd loop (both).
type aaHMode struct{ noZ, noY bool }

// colShift: every column of Pillow's and PyTorch's tables splits at the smallest sh whose rounded
// high halves fit int16, w = hi*2^sh + lo with |lo| <= 2^(sh-1); PyTorch's without low halves.
func TestAAColShift(t *testing.T) {
	for _, c := range []struct{ in, out int }{{1920, 224}, {1080, 224}, {512, 256}, {100, 300}, {7, 300}} {
		for _, f := range []struct {
			fn      func(float64) float64
			support float64
		}{{triangleFilter, 1}, {pillowCubic, 2}} {
			for _, torch := range []bool{false, true} {
				tp := pillowTaps(c.in, c.out, f.fn, f.support)
				if torch {
					tp = torchU8Taps(c.in, c.out, f.fn, f.support)
				}
				for j := 0; j < c.out; j++ {
					ws := tp.WI[j*tp.K : j*tp.K+int(tp.Cnt[j])]
					sh := colShift(ws)
					fitsAt := func(sh uint8) bool {
						for _, w := range ws {
							if v := (w + (1 << sh >> 1)) >> sh; v != int32(int16(v)) {
								return false
							}
						}
						return true
					}
					if !fitsAt(sh) || (sh > 0 && fitsAt(sh-1)) {
						t.Fatalf("%d->%d col %d: sh %d is not the smallest that fits", c.in, c.out, j, sh)
					}
					for _, w := range ws {
						hi, lo := colHalves(w, sh)
						if 2*int32(max(lo, -lo)) > 1<<sh || int32(hi)<<sh+int32(lo) != w || (torch && lo != 0) {
							t.Fatalf("%d->%d col %d (torch %v): %d splits as %d, %d at %d", c.in, c.out, j, torch, w, hi, lo, sh)
						}
					}
				}
			}
		}
	}
}

// The SIMD vertical pass (aaVRow with aaVPairs' weights) gives exactly aaVScalar's floats over the
// output rows of random specs (both filters, both weight tables, windows up to past aaVMaxPairs)
// and random rows with runs of 0 and 255. With SIMD, the same check with the low-half test switched
// off (aaVHead.thr = 2^22) must fail on some spec.
func TestAAVRowEqualScalarRandom(t *testing.T) {
	rng := rand.New(rand.NewSource(23))
	caught, caught3, ran3, caught3W, ran3W := 0, 0, 0, 0, 0
	for it := 0; it < 150; it++ {
		s := randomAASpec(rng)
		if it%10 == 0 { // tall windows: the VPMULLD loop
			s.Resize.H, s.Canvas.H, s.Post.H = 1, 1, 1
		}
		p, err := NewPlan(s)
		if err == nil && p.vfirst {
			continue // vertical first: the general path's (TestPillowVerticalFirst)
		}
		if err != nil || p.aa == nil {
			t.Fatalf("spec %d: %v", it, err)
		}
		n := p.OutW
		k := p.rows.Taps.K
		hs := make([][]uint8, k)
		for i := range hs {
			hs[i] = make([]uint8, 3*n+16)
			for j := range hs[i] {
				hs[i][j] = uint8(rng.Intn(256))
				if rng.Intn(4) == 0 {
					hs[i][j] = uint8(255 * rng.Intn(2))
				}
			}
		}
		got, want := make([]float32, n), make([]float32, n)
		lut := &p.norm.lutF32[1]
		var pw []int32
		var broken, broken3, broken3W bool
		for r := range p.rows.Taps.Cnt {
			kk := int(p.rows.Taps.Cnt[r])
			wv := p.rows.Taps.WI[r*k : r*k+kk]
			var vh aaVHead
			pw, vh = aaVPairs(pw, wv)
			po := rng.Intn(3) * n
			aaVScalar(want, hs[:kk], po, wv, lut, 0)
			p.kern.aaVRow(got, hs[:kk], po, wv, pw, vh, p.norm.scale[1], p.norm.mean[1], p.norm.std[1], lut)
			for x := range got {
				if got[x] != want[x] {
					t.Fatalf("spec %d %+v row %d col %d: %v, want %v (simd=%v)", it, s.Resize, r, x, got[x], want[x], simdEnabled)
				}
			}
			// the three planes at once (aaVRow3), in a random plane order, against aaVScalar per plane
			perm := rng.Perm(3)
			pos := [3]int{perm[0] * n, perm[1] * n, perm[2] * n}
			outs := [3][]float32{make([]float32, n), make([]float32, n), make([]float32, n)}
			luts := [3]*[256]float32{&p.norm.lutF32[0], &p.norm.lutF32[1], &p.norm.lutF32[2]}
			var wants [3][]float32
			for c := range wants {
				wants[c] = make([]float32, n)
				aaVScalar(wants[c], hs[:kk], pos[c], wv, luts[c], 0)
			}
			differs := func() bool {
				for c := range outs {
					if string(unsafe.Slice((*byte)(unsafe.Pointer(&outs[c][0])), 4*n)) != string(unsafe.Slice((*byte)(unsafe.Pointer(&wants[c][0])), 4*n)) {
						return true
					}
				}
				return false
			}
			wide := p.kern.AAV3W && n >= 32 // aaVRow3W takes the first n&^31 columns, unless switched off
			for _, nv := range []bool{false, true} {
				ks := chooseKernels(cpu, kernelOverrides{No512V: nv})
				ok := ks.aaVRow3(&outs, hs[:kk], &pos, wv, pw, vh, p.norm, &luts, true)
				if ok {
					ran3++
					if !nv && wide {
						ran3W++
					}
					for c := range outs {
						for x := range outs[c] {
							if outs[c][x] != wants[c][x] {
								t.Fatalf("spec %d %+v row %d plane %d col %d: aaVRow3 (No512V %v) %v, want %v", it, s.Resize, r, c, x, nv, outs[c][x], wants[c][x])
							}
						}
					}
				}
			}
			vh.thr = 1 << pilPrecisionBits
			p.kern.aaVRow(got, hs[:kk], po, wv, pw, vh, p.norm.scale[1], p.norm.mean[1], p.norm.std[1], lut)
			broken = broken || string(unsafe.Slice((*byte)(unsafe.Pointer(&got[0])), 4*n)) != string(unsafe.Slice((*byte)(unsafe.Pointer(&want[0])), 4*n))
			for _, nv := range []bool{false, true} {
				ks := chooseKernels(cpu, kernelOverrides{No512V: nv})
				ok := ks.aaVRow3(&outs, hs[:kk], &pos, wv, pw, vh, p.norm, &luts, true)
				if ok && differs() {
					if nv || !wide {
						broken3 = true
					} else {
						broken3W = true
					}
				}
			}
		}
		if broken {
			caught++
		}
		if broken3 {
			caught3++
		}
		if broken3W {
			caught3W++
		}
	}
	if currentKernels().AAV3W && (ran3W == 0 || caught3W == 0) {
		t.Fatalf("aaVRow3W ran for %d rows, and dropping the low halves went unnoticed in %d specs caught", ran3W, caught3W)
	}
	if simdEnabled && SIMDLevel() != "none (CPU lacks AVX2)" && (caught == 0 || caught3 == 0 || ran3 == 0) {
		t.Fatalf("dropping the low halves went unnoticed (aaVRow: %d specs, aaVRow3: %d, which ran %d times): the check cannot fail", caught, caught3, ran3)
	}
	t.Logf("%d of 150 specs caught with the low-half test off (aaVRow3: %d; it ran for %d rows; aaVRow3W: %d, %d rows)", caught, caught3, ran3, caught3W, ran3W)
}

// vresizeAAU8Paired (the vertical-first plans' vertical pass) gives vresizeAAU8's bytes over random
// windows of Pillow's tables (both filters, down- and upscale, up to 200 taps: past aaVMaxPairs the
// caller's scalar loop takes it all), widths not multiples of 16, rows whose storage ends with the
// row (the loads must stop short), and sources with runs of 0 and 255 (the clamps, and sums at the
// rounding boundaries the low-halves test must catch). With SIMD it must compute columns, and the
// same check with that test switched off (vh.lo0 forced) must fail on some window.
func TestVResizeAAU8PairedEqualsScalar(t *testing.T) {
	rng := rand.New(rand.NewSource(29))
	ks := currentKernels()
	ran, caught := 0, 0
	for it := 0; it < 400; it++ {
		in := 2 + rng.Intn(300)
		out := 1 + rng.Intn(in)
		if rng.Intn(4) == 0 {
			out = in + rng.Intn(2*in)
		}
		tp := antialiasTaps(in, out)
		if rng.Intn(2) == 0 {
			tp = pillowTaps(in, out, pillowCubic, 2)
		}
		o := rng.Intn(out)
		kk := int(tp.Cnt[o])
		wi := tp.WI[o*tp.K : o*tp.K+kk]
		n := 1 + rng.Intn(200)
		hs := make([][]uint8, kk)
		for i := range hs {
			row := make([]uint8, n+rng.Intn(3)*20) // often no spare capacity past the row
			switch rng.Intn(3) {
			case 0:
				for j := range row {
					row[j] = uint8(rng.Intn(256))
				}
			case 1:
				for j := range row {
					row[j] = uint8(255 * rng.Intn(2))
				}
			default:
				v := uint8(rng.Intn(256))
				for j := range row {
					row[j] = v
				}
			}
			hs[i] = row[:n]
		}
		want := make([]uint8, n)
		vresizeAAU8(want, hs, wi, make([]int32, n))
		pw, vh := aaVPairs(nil, wi)
		got := make([]uint8, n)
		x := ks.vresizeAAU8Paired(got, hs, pw, vh)
		rest := make([][]uint8, kk)
		for i := range hs {
			rest[i] = hs[i][x:]
		}
		vresizeAAU8(got[x:], rest, wi, make([]int32, n))
		if string(got) != string(want) {
			t.Fatalf("window %d (%d taps, %d columns, %d by SIMD): differs from vresizeAAU8", it, kk, n, x)
		}
		if x > 0 {
			ran++
			if !vh.lo0 {
				vh.lo0 = true // the high halves alone: must be wrong somewhere
				if ks.vresizeAAU8Paired(got, hs, pw, vh); string(got[:x]) != string(want[:x]) {
					caught++
				}
			}
		}
	}
	if simdEnabled && !strings.HasPrefix(SIMDLevel(), "none") && (ran < 100 || caught == 0) {
		t.Fatalf("SIMD ran on %d windows, the low-halves test was needed on %d", ran, caught)
	}
	t.Logf("SIMD ran on %d of 400 windows; dropping the low halves changed %d", ran, caught)
}
