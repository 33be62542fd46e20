package engine

import (
	"math"
	"math/rand"
	"testing"
	"unsafe"
)

// The fast path must produce exactly the general path's output, for every layout it accepts.
func TestFastPathEqualsGeneral(t *testing.T) {
	forceThreads(t)
	rng := rand.New(rand.NewSource(3))
	h, w := 97, 131
	src := make([]uint8, 2*h*w*3)
	for i := range src {
		src[i] = uint8(rng.Intn(256))
	}
	type variant struct {
		name  string
		edit  func(s *Spec)
		start int // byte offset of NumPy's data pointer
	}
	variants := []variant{
		{"plain", func(s *Spec) {}, 0},
		{"upscale", func(s *Spec) {
			s.Resize.H, s.Resize.W, s.Canvas.H, s.Canvas.W, s.Post.H, s.Post.W, s.Post.X0 = 300, 250, 300, 250, 300, 250, 249
		}, 0},
		{"bgr", func(s *Spec) { s.CMap = []int{2, 1, 0} }, 0},
		{"no flip", func(s *Spec) { s.Post = View{0, 0, 1, 1, 224, 224} }, 0},
		{"vflip", func(s *Spec) { s.Post = View{223, 0, -1, 1, 224, 224} }, 0},
		{"crop", func(s *Spec) { s.Post = View{10, 20, 1, 1, 200, 180} }, 0},
		{"source flipped", func(s *Spec) { s.In.Strides[2] = -3 }, (w - 1) * 3},
		{"source rows flipped", func(s *Spec) { s.In.Strides[1] = -int64(w * 3) }, (h - 1) * w * 3},
		{"letterbox rows", func(s *Spec) {
			s.Resize.H = 150
			s.Canvas = CanvasSpec{H: 224, W: 224, Top: 37, Pad: PadValues{114}}
		}, 0},
	}
	for _, v := range variants {
		for _, n := range []int{0, 2} {
			s := imagenetSpec(n, h, w)
			v.edit(s)
			p, err := NewPlan(s)
			if err != nil {
				t.Fatalf("%s: %v", v.name, err)
			}
			if p.fast == nil {
				t.Fatalf("%s: plan does not take the fast path", v.name)
			}
			general := *p
			general.fast = nil
			ptr := unsafe.Pointer(&src[v.start])
			a := runGuarded(t, p, ptr, 2)
			b := runGuarded(t, &general, ptr, 1)
			if string(a) != string(b) {
				t.Fatalf("%s (n=%d): fast path differs from the general path (simd=%v)", v.name, n, simdEnabled)
			}
		}
	}
}

func TestFastPathDeclines(t *testing.T) {
	for name, edit := range map[string]func(s *Spec){
		"antialias": func(s *Spec) { s.Resize.Antialias = true },
		"hwc":       func(s *Spec) { s.Norm.Layout = "HWC" },
		"f16":       func(s *Spec) { s.Norm.DType = F16 },
		"no norm":   func(s *Spec) { s.Norm = nil },
		"pad cols":  func(s *Spec) { s.Resize.W = 100; s.Canvas.Left = 10 },
		"rgba":      func(s *Spec) { s.In.C = 4; s.In.Strides = [4]int64{0, 512 * 4, 4, 1} },
	} {
		s := imagenetSpec(0, 512, 512)
		edit(s)
		p, err := NewPlan(s)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if p.fast != nil {
			t.Errorf("%s: took the fast path", name)
		}
	}
}

// The fused downscale path (fastPlan.fused) must equal the general path too, tail columns included:
// through duoRows where the plan has its tables, and through fastRow's kernels with duoRows off
// (kernelOverrides.NoDuo; fusedRow on VBMI machines).
func TestFusedDownscaleEqualsGeneral(t *testing.T) {
	forceThreads(t)
	before := currentOverrides() // TestFastPathWithoutAVX512 runs this with NoVBMI
	t.Cleanup(func() { setKernelOverrides(before) })
	rng := rand.New(rand.NewSource(4))
	h, w := 300, 401
	src := make([]uint8, h*w*3)
	for i := range src {
		src[i] = uint8(rng.Intn(256))
	}
	duo := 0 // plans whose column pairs fit duoBlocks (on AVX2 they take duoRows)
	for _, off := range []bool{false, true} {
		o := before
		o.NoDuo = off
		setKernelOverrides(o)
		for _, size := range [][2]int{{100, 120}, {97, 131}, {150, 200}, {140, 250}} {
			for _, flip := range []bool{false, true} {
				s := rgbSpec(h, w, "bilinear", false, size[0], size[1])
				s.Norm = &NormSpec{Mean: []float64{0.4, 0.5, 0.6}, Std: []float64{0.2, 0.3, 0.25}, Scale: 1.0 / 255, DType: F32, Layout: "CHW"}
				if flip {
					s.Post = View{0, size[1] - 1, 1, -1, size[0], size[1]}
					s.CMap = []int{2, 1, 0}
				}
				p, general := fusedPlan(t, s, size, &duo)
				a := runGuarded(t, p, unsafe.Pointer(&src[0]), 2)
				b := runGuarded(t, general, unsafe.Pointer(&src[0]), 1)
				if string(a) != string(b) {
					t.Fatalf("%v flip=%v noDuo=%v: fused path differs from the general path (simd=%v)", size, flip, off, simdEnabled)
				}
			}
		}
	}
	if duo == 0 {
		t.Fatal("no plan had duoBlocks' column pairs")
	}
}

// Strong horizontal downscales (16 columns' pixels beyond one 128-byte window) have no byte-permute
// groups (buildGroups) and take the AVX2 kernels, on both the fused path (vertical downscale) and the
// row-cache path (vertical upscale).
func TestStrongDownscaleEqualsGeneral(t *testing.T) {
	forceThreads(t)
	rng := rand.New(rand.NewSource(5))
	h, w := 120, 1900
	src := make([]uint8, h*w*3)
	for i := range src {
		src[i] = uint8(rng.Intn(256))
	}
	for _, size := range [][2]int{{40, 224}, {300, 221}} {
		s := rgbSpec(h, w, "bilinear", false, size[0], size[1])
		s.Norm = &NormSpec{Mean: []float64{0.4, 0.5, 0.6}, Std: []float64{0.2, 0.3, 0.25}, Scale: 1.0 / 255, DType: F32, Layout: "CHW"}
		p, err := NewPlan(s)
		if err != nil {
			t.Fatal(err)
		}
		if p.fast.groups != nil || p.fast.fused != (size[0] < h) {
			t.Fatalf("%v: groups=%d fused=%v, not the path under test", size, len(p.fast.groups), p.fast.fused)
		}
		general := *p
		general.fast = nil
		a := runGuarded(t, p, unsafe.Pointer(&src[0]), 2)
		b := runGuarded(t, &general, unsafe.Pointer(&src[0]), 1)
		if string(a) != string(b) {
			t.Fatalf("%v: the strong downscale differs from the general path (simd=%v)", size, simdEnabled)
		}
	}
	// a milder downscale keeps its groups
	if p, err := NewPlan(imagenetSpec(0, 300, 300)); err != nil || p.fast.groups == nil {
		t.Fatalf("300 -> 224 lost its groups (err %v)", err)
	}
}

// duoH must write exactly the table values of vlinear on hresizeScalar's values of its two rows, for
// random fused plans: widths with tails of every length, flips, crops, BGR, row pairs near the end of
// the array (the 32-byte loads of the last blocks must take duoScalar there).
func TestDuoHEqualsScalar(t *testing.T) {
	rng := rand.New(rand.NewSource(13))
	tested, simdBlocks := 0, 0
	for it := 0; it < 400; it++ {
		h, w := 2+rng.Intn(40), 8+rng.Intn(400)
		s := imagenetSpec(0, h, w)
		oh, ow := 1+rng.Intn(max(1, h/2)), 1+rng.Intn(w/2+8)
		s.Resize.H, s.Resize.W, s.Canvas.H, s.Canvas.W = oh, ow, oh, ow
		s.Post = View{0, 0, 1, 1, oh, ow}
		if rng.Intn(2) == 0 {
			s.Post.X0, s.Post.SX = ow-1, -1
		}
		if rng.Intn(3) == 0 {
			s.CMap = []int{2, 1, 0}
		}
		if cx := rng.Intn(w / 2); rng.Intn(3) == 0 {
			s.Pre = View{0, cx, 1, 1, h, w - cx - rng.Intn(w/2-cx+1)}
		}
		start := 0
		if rng.Intn(3) == 0 {
			s.In.Strides[2], start = -3, (w-1)*3
		}
		p, err := NewPlan(s)
		if err != nil {
			t.Fatalf("it %d: %v", it, err)
		}
		f := p.fast
		if f == nil || !f.fused || f.duos == nil {
			continue
		}
		n := len(f.taps)
		src := guarded(t, h*w*3, true) // the last row ends at the end of the array, against a guard page
		for i := range src {
			src[i] = uint8(rng.Intn(256))
		}
		h0, h1 := make([]int16, 3*n), make([]int16, 3*n)
		var out [3][]float32
		planes := make([]float32, 3*n) // one array, as a plan's output: duoBlocks addresses the planes from one pointer
		for k := range out {
			out[k] = planes[k*n : (k+1)*n : (k+1)*n]
		}
		for r := 0; r < len(p.rows.Off)/2; r++ {
			b0, b1 := p.rows.Taps.WI[2*r], p.rows.Taps.WI[2*r+1]
			rb0, rb1 := start+p.rows.Off[2*r], start+p.rows.Off[2*r+1]
			for k := range out {
				for i := range out[k] {
					out[k][i] = -1
				}
			}
			p.kern.duoH(&out, src, rb0, rb1, f, b0, b1)
			hresizeScalar(h0, src, rb0, f, 0, n)
			hresizeScalar(h1, src, rb1, f, 0, n)
			for i := 0; i < 3*n; i++ {
				k, j := i/n, i%n
				c := f.duoNorm[k].plane
				want := p.norm.lutF32[c][uint8(vlinear(b0, b1, int32(h0[i]), int32(h1[i])))]
				if p.cmap[c] != k || math.Float32bits(out[k][j]) != math.Float32bits(want) {
					t.Fatalf("it %d (w=%d ow=%d pre %+v post %+v) row %d: column %d channel %d (plane %d): duoH %v, scalar %v",
						it, w, ow, s.Pre, s.Post, r, j, k, c, out[k][j], want)
				}
			}
		}
		tested++
		simdBlocks += len(f.duoEnd)
	}
	t.Logf("%d plans, %d duo blocks", tested, simdBlocks)
	if tested < 100 || simdBlocks == 0 {
		t.Fatalf("only %d random plans had duo blocks (%d blocks)", tested, simdBlocks)
	}
}

// A channel map that repeats a source channel keeps fused plans off duoH (it writes each source
// channel to one plane) and still equals the general path.
func TestDuoDeclinesRepeatedChannel(t *testing.T) {
	forceThreads(t)
	s := imagenetSpec(0, 480, 520)
	s.CMap = []int{1, 1, 0}
	p, err := NewPlan(s)
	if err != nil {
		t.Fatal(err)
	}
	if p.fast == nil || !p.fast.fused || p.fast.duos != nil {
		t.Fatalf("fast=%v: not the plan under test", p.fast != nil)
	}
	s.CMap = []int{1, 2, 0}
	if q, _ := NewPlan(s); q.fast.duos == nil {
		t.Fatal("a permuted channel map should take duoH")
	}
	src := make([]uint8, 480*520*3)
	for i := range src {
		src[i] = uint8(i * 13)
	}
	general := *p
	general.fast = nil
	if string(runGuarded(t, p, unsafe.Pointer(&src[0]), 2)) != string(runGuarded(t, &general, unsafe.Pointer(&src[0]), 1)) {
		t.Fatal("fast path differs from the general path")
	}
}

// duoRows runs whole bands and prefetches across image boundaries: batches (the next image's first
// rows), sources whose rows run backwards, 1 and 2 threads and cancellable (banded) calls must give
// exactly the general path's output.
func TestDuoRowsBatchEqualsGeneral(t *testing.T) {
	forceThreads(t)
	rng := rand.New(rand.NewSource(6))
	const n, h, w = 3, 300, 401
	src := make([]uint8, n*h*w*3)
	for i := range src {
		src[i] = uint8(rng.Intn(256))
	}
	duo := 0
	// {1, w}: fewer content rows than prefetchDist (the next-image prefetch must not index past the table)
	for _, size := range [][2]int{{100, 120}, {150, 200}, {97, 131}, {120, 150}, {110, 170}, {1, 150}, {1, 200}, {2, 160}} {
		for _, back := range []bool{false, true} {
			s := imagenetSpec(n, h, w)
			s.Resize.H, s.Resize.W, s.Canvas.H, s.Canvas.W = size[0], size[1], size[0], size[1]
			s.Post = View{0, size[1] - 1, 1, -1, size[0], size[1]}
			start := 0
			if back {
				s.In.Strides[1], start = -int64(3*w), (h-1)*w*3
			}
			p, general := fusedPlan(t, s, size, &duo)
			ptr := unsafe.Pointer(&src[start])
			want := runGuarded(t, general, ptr, 1)
			for _, threads := range []int{1, 2} {
				if got := runGuarded(t, p, ptr, threads); string(got) != string(want) {
					t.Fatalf("%v back=%v threads=%d: differs from the general path", size, back, threads)
				}
			}
			out := make([]byte, p.OutBytes())
			var stop int32
			if err := runCPU([]Job{{Plan: p, Src: ptr, Out: unsafe.Pointer(&out[0])}}, 1, &stop); err != nil {
				t.Fatal(err)
			}
			if string(out) != string(want) {
				t.Fatalf("%v back=%v: the banded (cancellable) call differs", size, back)
			}
		}
	}
	if duo == 0 && currentKernels().Duo {
		t.Fatal("no plan had duoBlocks' column pairs")
	}
}

// fusedPlan is s's plan, which must take the fused path (size names it in the failure), and the same
// plan on the general path; it counts in *duo the plans that have duoBlocks tables.
func fusedPlan(t *testing.T, s *Spec, size [2]int, duo *int) (p, general *Plan) {
	t.Helper()
	p, err := NewPlan(s)
	if err != nil {
		t.Fatal(err)
	}
	if p.fast == nil || !p.fast.fused {
		t.Fatalf("%v: not on the fused path", size)
	}
	if p.fast.duos != nil {
		*duo++
	}
	g := *p
	g.fast = nil
	return p, &g
}

// checkHresizeEqualsScalar runs kernel, a SIMD horizontal pass (hresizeAVX2; the NEON hresizeRow),
// against hresizeScalar: it must write exactly the same integers for random widths (tails of every
// length), up- and downscales, flips, crops and rows ending right at the end of the array (the 8-byte
// loads of the last columns must fall back to the scalar loop there). At least 200 random plans must
// take the fast path, or the test could not tell.
func checkHresizeEqualsScalar(t *testing.T, name string, kernel func(d []int16, src []uint8, rb int, f *fastPlan)) {
	t.Helper()
	rng := rand.New(rand.NewSource(11))
	tested, simdCols := 0, 0
	for it := 0; it < 400; it++ {
		h, w := 1+rng.Intn(4), 1+rng.Intn(300)
		if it%4 == 0 {
			w = 1 + rng.Intn(20)
		}
		s := imagenetSpec(0, h, w)
		ow := 1 + rng.Intn(400)
		s.Resize.W, s.Canvas.W, s.Post.W = ow, ow, ow
		s.Post.X0, s.Post.SX = 0, 1
		if rng.Intn(2) == 0 {
			s.Post.X0, s.Post.SX = ow-1, -1
		}
		if cx := rng.Intn(w); rng.Intn(3) == 0 {
			cw := 1 + rng.Intn(w-cx)
			s.Pre = View{0, cx, 1, 1, h, cw}
		}
		start := 0
		if rng.Intn(3) == 0 {
			s.In.Strides[2], start = -3, (w-1)*3
		}
		p, err := NewPlan(s)
		if err != nil || p.fast == nil {
			continue
		}
		f := p.fast
		n := len(f.taps)
		src := make([]uint8, h*w*3) // the last row ends at the end of the array
		for i := range src {
			src[i] = uint8(rng.Intn(256))
		}
		a, b := make([]int16, 3*n), make([]int16, 3*n)
		for _, off := range p.rows.Off {
			rb := start + off
			for i := range a {
				a[i], b[i] = -1, -2
			}
			kernel(a, src, rb, f)
			hresizeScalar(b, src, rb, f, 0, n)
			for i := range a {
				if a[i] != b[i] {
					t.Fatalf("it %d (w=%d ow=%d spec %+v %+v): column %d channel %d: %s %d, scalar %d", it, w, ow,
						s.Pre, s.Post, i%n, i/n, name, a[i], b[i])
				}
			}
		}
		tested++
		simdCols += 8 * len(f.octEnd)
	}
	if tested < 200 || simdCols == 0 {
		t.Fatalf("only %d random plans took the fast path (%d SIMD columns)", tested, simdCols)
	}
}
