package engine

import (
	"math/rand"
	"slices"
	"testing"
)

// The NEON YUV converter of yuv_arm64.s against yuvConvScalar, in one arm64 binary (kernelSet{} and
// kernelOverrides.NoSIMD run the scalar twin). Run under qemu-aarch64:
// scripts/test_arm64.sh -test.run 'YUV'.

// yuvGuardedRows is one image row of a format's planes, each plane row in its own buffer ending
// (atEnd) or starting against a PROT_NONE page (guarded, plan_fuzz_test.go), random bytes: the
// converters' slices as yuvAt cuts them (Y, U, V of pixel 0 onward), for ys0 and, 4:2:0, a second
// luma row ys1 sharing the chroma row.
func yuvGuardedRows(t *testing.T, rng *rand.Rand, yp *yuvPlan, format string, w int, atEnd bool) (ys0, ys1, us, vs []uint8) {
	g := yuvFormats[format]
	plane := func(i int) []uint8 {
		_, n := yuvPlaneSize(g, i, 2, w)
		b := guarded(t, n, atEnd)
		for j := range b {
			b[j] = uint8(rng.Intn(256))
		}
		return b
	}
	p0 := plane(0)
	ys0 = p0[g.yOff:]
	ys1 = ys0
	if g.chromaRows == 2 {
		ys1 = plane(0)[g.yOff:]
	}
	pl := [3][]uint8{p0}
	for i := 1; i < g.planes; i++ {
		pl[i] = plane(i)
	}
	return ys0, ys1, pl[g.uP][g.uOff:], pl[g.vP][g.vOff:]
}

// yuvOutRows is n random bytes (fill) and mk, which makes output rows holding them: one row, or two
// when two; each in a buffer ending against a PROT_NONE page when guard (a store past the row
// faults), else a plain copy (the reference's).
func yuvOutRows(t *testing.T, rng *rand.Rand, n int, two bool) (fill []uint8, mk func(guard bool) (d0, d1 []uint8)) {
	fill = make([]uint8, n)
	for i := range fill {
		fill[i] = uint8(rng.Intn(256))
	}
	buf := func(guard bool) []uint8 {
		if !guard {
			return slices.Clone(fill)
		}
		b := guarded(t, n, true)
		copy(b, fill)
		return b
	}
	return fill, func(guard bool) (d0, d1 []uint8) {
		d0 = buf(guard)
		if two {
			d1 = buf(guard)
		}
		return d0, d1
	}
}

// TestYUVConvNEONEqualsScalar: yuvConv with NEON writes exactly yuvConvScalar's bytes, and no other
// byte of the output rows (they are random and compared whole), for every format, matrix, range and
// OpenCV's preset, one row and two sharing chroma, every even [x0, x1) including runs of 16-31
// pixels (the overlapped last step) and runs shorter than a step (the scalar path); plane rows end
// at (or start at) a PROT_NONE page, so a load past a row's samples faults, and the output rows are
// exactly 3*x1 bytes, ending at one, so a store past the run faults.
func TestYUVConvNEONEqualsScalar(t *testing.T) {
	neon := kernelSet{NEON: true}
	rng := rand.New(rand.NewSource(37))
	formats := []string{"nv12", "nv21", "i420", "yuyv", "uyvy"}
	steps := 0
	for it := 0; it < 1500; it++ {
		format := formats[it%len(formats)]
		w := 2 * (1 + rng.Intn(100))
		if it%7 == 0 {
			w = 2 * (8 + rng.Intn(8)) // 16-30 pixels: one step, or two overlapping
		}
		p, _ := randYUVRowPlan(t, rng, format, w)
		yp := p.yuv
		ys0, ys1, us, vs := yuvGuardedRows(t, rng, yp, format, w, it%3 != 0)
		x1 := w
		if rng.Intn(2) == 0 {
			x1 = 2 * rng.Intn(w/2+1)
		}
		x0 := 2 * rng.Intn(x1/2+1)
		if rng.Intn(3) == 0 && x1 >= 16 {
			x0 = x1 - 16 - 2*rng.Intn(min(8, (x1-16)/2+1)) // 16-30 pixels
		}
		two := rng.Intn(2) == 0 && yp.cShift == 1 // pairs: 4:2:0 only
		fill, mk := yuvOutRows(t, rng, 3*x1, two)
		g0, g1 := mk(true)
		w0, w1 := mk(false)
		neon.yuvConv(g0, g1, ys0, ys1, us, vs, x0, x1, yp)
		yuvConvScalar(w0, w1, ys0, ys1, us, vs, x0, x1, yp)
		if x1-x0 >= 16 {
			steps++
		}
		for i := range fill {
			if g0[i] != w0[i] || two && g1[i] != w1[i] {
				t.Fatalf("it %d: %s %+v w %d [%d, %d) two %v: NEON differs from scalar at byte %d (pixel %d)", it, format, *p.Spec.In.YUV, w, x0, x1, two, i, i/3)
			}
		}
	}
	if steps < 500 {
		t.Fatalf("only %d runs reached the NEON loop", steps)
	}
}

// TestYUVPairsNEONEqualsScalar: yuvConvPairs with NEON (yuvConvPairsVector's NEON steps) writes each
// listed pair's 6 bytes as yuvConvScalar does and no other byte (it stores by lane: not even the 2
// bytes of spill yuvConvPairs' contract allows), for every format, matrix, range and preset, one row
// and two sharing chroma, lists of 1-7 pairs (padded), exactly 8, and longer ones of any density and
// length (the last step overlapping); guarded plane rows and output rows ending at PROT_NONE pages,
// as in TestYUVConvNEONEqualsScalar.
func TestYUVPairsNEONEqualsScalar(t *testing.T) {
	neon := kernelSet{NEON: true}
	rng := rand.New(rand.NewSource(38))
	formats := []string{"nv12", "nv21", "i420", "yuyv", "uyvy"}
	short, long := 0, 0
	for it := 0; it < 1500; it++ {
		format := formats[it%len(formats)]
		w := 2 * (1 + rng.Intn(200))
		p, _ := randYUVRowPlan(t, rng, format, w)
		yp := p.yuv
		ys0, ys1, us, vs := yuvGuardedRows(t, rng, yp, format, w, it%3 != 0)
		var ps []int32
		density := rng.Float64()
		if it%4 == 0 {
			density = 0.02 // a few pairs: padded lists
		}
		for q := 0; q < w/2; q++ {
			if rng.Float64() < density {
				ps = append(ps, int32(q))
			}
		}
		if len(ps) == 0 {
			ps = []int32{int32(rng.Intn(w / 2))}
		}
		if it%5 == 1 { // the last pair of the row: its samples end the plane rows
			if ps[len(ps)-1] != int32(w/2-1) {
				ps = append(ps, int32(w/2-1))
			}
		}
		if len(ps) < 8 {
			short++
		} else {
			long++
		}
		two := rng.Intn(2) == 0 && yp.cShift == 1
		last := int(ps[len(ps)-1])
		fill, mk := yuvOutRows(t, rng, 6*last+6, two)
		w0, w1 := mk(false)
		for _, q := range ps {
			yuvConvScalar(w0, w1, ys0, ys1, us, vs, 2*int(q), 2*int(q)+2, yp)
		}
		g0, g1 := mk(true)
		if !neon.yuvConvPairsVector(g0, g1, ys0, ys1, us, vs, ps, yp) {
			t.Fatalf("it %d: %s: the NEON pair converter declined", it, format)
		}
		for i := range fill {
			if g0[i] != w0[i] || two && g1[i] != w1[i] {
				t.Fatalf("it %d: %s %+v w %d, %d pairs (density %.2f), two %v: NEON differs from scalar at byte %d (pixel %d)", it, format, *p.Spec.In.YUV, w, len(ps), density, two, i, i/3)
			}
		}
		// and through yuvConvPairs, which hands the pairs to it
		c0, c1 := mk(false)
		neon.yuvConvPairs(c0, c1, ys0, ys1, us, vs, ps, yp)
		if !slices.Equal(c0, w0) || two && !slices.Equal(c1, w1) {
			t.Fatalf("it %d: %s: yuvConvPairs (NEON) differs from scalar", it, format)
		}
	}
	if short < 100 || long < 500 {
		t.Fatalf("%d short and %d long pair lists: a case went untested", short, long)
	}
}

// With NoSIMD the arm64 build converts with yuvConvScalar: the whole-plan YUV tests again on it
// (TestYUVEqualsConvertThenResize runs NEON plans in the same binary).
func TestYUVPureGoOnArm64(t *testing.T) {
	withKernels(t, kernelOverrides{NoSIMD: true})
	if k := currentKernels(); k.NEON || k.yuvSIMD() {
		t.Fatal("NoSIMD left NEON on")
	}
	TestYUVEqualsConvertThenResize(t)
}

// BenchmarkYUVConvPairsPureGo is BenchmarkYUVConvPairs with the NEON converter switched off (every
// pair through yuvConvScalar), for A/B runs on arm64 hardware in one process; BenchmarkYUVConv has
// its own scalar variants. Under qemu these time the emulator, not a core.
func BenchmarkYUVConvPairsPureGo(b *testing.B) {
	withKernels(b, kernelOverrides{NoSIMD: true})
	BenchmarkYUVConvPairs(b)
}

// BenchmarkNV12ImagenetNoAAPureGo is BenchmarkNV12ImagenetNoAA (1080p NV12, shorter side 256 + crop
// 224) on the pure-Go converter and kernels, the NEON plan's A/B twin on arm64 hardware.
func BenchmarkNV12ImagenetNoAAPureGo(b *testing.B) {
	withKernels(b, kernelOverrides{NoSIMD: true})
	benchNV12(b, mustPlan(b, nv12Imagenet(false)))
}

// BenchmarkNV12SquashColumns: 1080p NV12 -> 224x224 bilinear CHW float32 on 1 thread with the
// plan's columns forced to merged spans (dense) and to exact pairs (sparse), NEON and pure Go: on
// arm64 hardware, the measurement that would set setColumns' sparse cost for NEON (yuvSparseCostOf
// gives it the non-VBMI 4, unmeasured there).
func BenchmarkNV12SquashColumns(b *testing.B) {
	for _, c := range []struct {
		name string
		mode yuvColMode
		o    kernelOverrides
	}{{"dense", yuvDense, kernelOverrides{}}, {"sparse", yuvSparse, kernelOverrides{}},
		{"dense-purego", yuvDense, kernelOverrides{NoSIMD: true}}, {"sparse-purego", yuvSparse, kernelOverrides{NoSIMD: true}}} {
		b.Run(c.name, func(b *testing.B) {
			withKernels(b, c.o)
			benchNV12(b, yuvPlanMode(mustPlan(b, nv12Squash224()), c.mode))
		})
	}
}
