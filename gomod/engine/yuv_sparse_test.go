package engine

import (
	"math/rand"
	"slices"
	"testing"
	"time"
	"unsafe"
)

// yuvPlanMode is p with its YUV columns chosen by mode (yuvDense: merged spans, the conversion
// before yuv_sparse.go; yuvSparse: exact pairs and long spans); the rest of the plan is shared.
func yuvPlanMode(p *Plan, mode yuvColMode) *Plan {
	q := *p
	yp := *p.yuv
	yp.setColumns(yuvPlanCols(p), p.Spec.In.W, yuvSparseCostOf(p.kern), mode)
	q.yuv = &yp
	return &q
}

// TestYUVConvPairsEqualsScalar: yuvConvPairs (the gathered SIMD chunks where the CPU has AVX2)
// writes each listed pair's 6 bytes as yuvConvScalar does and leaves every other byte untouched
// (but the 2 it may spill into after a pair),
// for every format, preset and matrix, one row and two rows sharing chroma, and pair lists from
// empty to longer than a chunk.
func TestYUVConvPairsEqualsScalar(t *testing.T) {
	k := currentKernels()
	t.Logf("SIMD converter: %v", k.yuvSIMD())
	rng := rand.New(rand.NewSource(5))
	formats := []string{"nv12", "nv21", "i420", "yuyv", "uyvy"}
	vbmi := 0
	defer func() {
		t.Logf("%d cases on the VBMI converter", vbmi)
		if k.VBMI && vbmi == 0 {
			t.Error("the VBMI converter went untested")
		}
	}()
	for it := 0; it < 1500; it++ {
		format := formats[it%len(formats)]
		w := 2 * (1 + rng.Intn(400))
		p, f := randYUVRowPlan(t, rng, format, w)
		yp := p.yuv
		src, base := f.buf, f.origin
		ys0, ys1 := src[base+yp.yOff:], src[base+yp.yOff+yp.yRow:]
		if yp.cShift == 0 {
			ys1 = ys0
		}
		us, vs := src[base+yp.uOff:], src[base+yp.vOff:]
		var ps []int32
		density := rng.Float64()
		for q := 0; q < w/2; q++ {
			if rng.Float64() < density {
				ps = append(ps, int32(q))
			}
		}
		two := rng.Intn(2) == 0 && yp.cShift == 1 // row pairs: 4:2:0 only
		fill := make([]uint8, 3*w+64)
		for i := range fill {
			fill[i] = uint8(rng.Intn(256))
		}
		mk := func() (d0, d1 []uint8) {
			d0 = slices.Clone(fill)
			if two {
				d1 = slices.Clone(fill)
			}
			return d0, d1
		}
		w0, w1 := mk()
		for _, q := range ps {
			yuvConvScalar(w0, w1, ys0, ys1, us, vs, 2*int(q), 2*int(q)+2, yp)
		}
		// with the plan's VBMI tables for ps (where the CPU and width allow), and without
		yp.sparse = ps
		yp.buildBlocks(w)
		if len(yp.vblocks) > 0 && k.VBMI {
			vbmi++
		}
		g0, g1 := mk()
		k.yuvConvPairs(g0, g1, ys0, ys1, us, vs, ps, yp)
		yp.vblocks = nil
		c0, c1 := mk()
		k.yuvConvPairs(c0, c1, ys0, ys1, us, vs, ps, yp)
		// the 2 bytes after a listed pair whose next pair is not listed may hold anything
		free := make([]bool, len(fill))
		for i, q := range ps {
			if i+1 == len(ps) || ps[i+1] != q+1 {
				free[6*q+6], free[6*q+7] = true, true
			}
		}
		for i := range fill {
			if (g0[i] != w0[i] || two && g1[i] != w1[i]) && (!free[i] || k.VBMI && len(ps) > 0 && w >= 128) {
				t.Fatalf("%s %+v w %d, %d pairs, two %v: yuvConvPairs (VBMI tables) differs from yuvConvScalar per pair at byte %d", format, *p.Spec.In.YUV, w, len(ps), two, i)
			}
			if !free[i] && (c0[i] != w0[i] || two && c1[i] != w1[i]) {
				t.Fatalf("%s %+v w %d, %d pairs, two %v: yuvConvPairs (chunks) differs from yuvConvScalar per pair at byte %d", format, *p.Spec.In.YUV, w, len(ps), two, i)
			}
		}
	}
}

// TestYUVSetColumns: every column a plan's taps read lies in a run or a sparse pair, runs and pairs
// ascend and do not overlap; auto takes the sparse pairs where they convert under 1/cost of the
// merged spans' pixels (a 4K -> 224 squash; the 1080p squash, 1/3 of its row, on the VBMI
// converter only), and keeps merged spans elsewhere (the 1080p crop task, whose taps cover over
// half the span; an upscale; antialias windows that overlap).
func TestYUVSetColumns(t *testing.T) {
	squash := nv12Squash224()
	squash4k := nv12Imagenet(false)
	squash4k.In.H, squash4k.In.W, squash4k.Pre = 2160, 3840, View{0, 0, 1, 1, 2160, 3840}
	squash4k.In.YUV.Planes = []YUVPlane{{0, 3840}, {2160 * 3840, 3840}}
	squash4k.Resize, squash4k.Canvas, squash4k.Post = squash.Resize, squash.Canvas, squash.Post
	up := nv12Imagenet(false)
	up.Pre = View{0, 0, 1, 1, 100, 100}
	up.Resize.H, up.Resize.W = 224, 224
	up.Canvas = CanvasSpec{H: 224, W: 224}
	up.Post = View{0, 0, 1, 1, 224, 224}
	vbmi := currentKernels().VBMI
	for _, c := range []struct {
		name   string
		s      *Spec
		sparse bool
	}{{"short256+crop", nv12Imagenet(false), false}, {"squash224", squash, vbmi}, {"4k-squash224", squash4k, true},
		{"upscale", up, false}, {"antialias", nv12Imagenet(true), false}} {
		p, err := NewPlan(c.s)
		if err != nil {
			t.Fatal(err)
		}
		for _, mode := range []yuvColMode{yuvAuto, yuvDense, yuvSparse} {
			yp := yuvPlanMode(p, mode).yuv
			in := make([]bool, c.s.In.W)
			end := 0
			for _, r := range yp.runs {
				if r[0] < end || r[1] <= r[0] || r[0]%2 != 0 || r[1]%2 != 0 {
					t.Fatalf("%s mode %d: runs %v not ascending even spans", c.name, mode, yp.runs)
				}
				end = r[1]
				for x := r[0]; x < r[1]; x++ {
					in[x] = true
				}
			}
			for i, q := range yp.sparse {
				if i > 0 && q <= yp.sparse[i-1] || in[2*q] {
					t.Fatalf("%s mode %d: sparse pair %d out of order or inside a run", c.name, mode, q)
				}
				in[2*q], in[2*q+1] = true, true
			}
			for _, x := range yuvPlanCols(p) {
				if !in[x] {
					t.Fatalf("%s mode %d: column %d is read but not converted", c.name, mode, x)
				}
			}
			if mode == yuvAuto && (len(yp.sparse) > 0) != c.sparse {
				t.Errorf("%s: %d sparse pairs, %d runs; want sparse %v", c.name, len(yp.sparse), len(yp.runs), c.sparse)
			}
		}
	}
}

// TestYUVSparseEqualsDense1080p: on 1080p frames of every format, the bilinear tasks (squash to
// 224, shorter side 256 + crop 224, flipped) give the same bytes with sparse and dense columns.
func TestYUVSparseEqualsDense1080p(t *testing.T) {
	rng := rand.New(rand.NewSource(9))
	for _, format := range []string{"nv12", "nv21", "i420", "yuyv", "uyvy"} {
		f := newYUVFrame(rng, format, 2, 1080, 1920, 4, 8, format == "i420")
		for v := 0; v < 3; v++ {
			s := nv12Imagenet(v == 2)
			s.In.N = 2
			s.In.Strides = [4]int64{f.bstride}
			s.In.YUV = &YUVSpec{Format: format, Matrix: "bt709", Range: "limited", Planes: f.planes}
			if v == 1 { // squash, flipped both ways, no crop
				s.Resize.H, s.Resize.W = 224, 224
				s.Canvas = CanvasSpec{H: 224, W: 224}
				s.Post = View{0, 0, 1, 1, 224, 224}
				s.Pre = View{1079, 1919, -1, -1, 1080, 1920}
			}
			p, err := NewPlan(s)
			if err != nil {
				t.Fatal(err)
			}
			src := unsafe.Pointer(&f.buf[f.origin])
			want := runGuarded(t, yuvPlanMode(p, yuvDense), src, 2)
			for _, mode := range []yuvColMode{yuvAuto, yuvSparse} {
				if got := runGuarded(t, yuvPlanMode(p, mode), src, 2); string(got) != string(want) {
					t.Fatalf("%s task %d mode %d: differs from the dense conversion", format, v, mode)
				}
			}
		}
	}
}

// BenchmarkYUVConvPairs: the converter on a 1920-pixel NV12 row pair, as one dense span and as
// sparse pairs (every pair, and every 4th: ns/op over the pairs' pixels, both rows), with the
// VBMI tables (yuvConvPairsVector where the CPU has it) and without (the chunked path).
func BenchmarkYUVConvPairs(b *testing.B) {
	p := mustPlan(b, nv12Imagenet(false))
	src := patternFrame(1080*1920*3/2, 7)
	yp := p.yuv
	d0, d1 := make([]uint8, 3*1920+64), make([]uint8, 3*1920+64)
	k := currentKernels()
	ys0, ys1, us, vs := src[yp.yOff:], src[yp.yOff+yp.yRow:], src[yp.uOff:], src[yp.vOff:]
	b.Run("dense", func(b *testing.B) {
		for range b.N {
			k.yuvConv(d0, d1, ys0, ys1, us, vs, 0, 1920, yp)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/(2*1920), "ns/px")
	})
	for _, step := range []int{1, 4} {
		var ps []int32
		for q := 0; q < 960; q += step {
			ps = append(ps, int32(q))
		}
		for _, tables := range []bool{true, false} {
			name := "pairs-every-" + string(rune('0'+step))
			if !tables {
				name += "-chunks"
			}
			b.Run(name, func(b *testing.B) {
				yq := *yp
				yq.sparse = ps
				if tables {
					yq.buildBlocks(1920)
				}
				for range b.N {
					k.yuvConvPairs(d0, d1, ys0, ys1, us, vs, ps, &yq)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(4*len(ps)), "ns/px")
			})
		}
	}
}

// BenchmarkYUVSparseRatios: the 1080p NV12 tasks with dense, forced sparse and the plan's own
// (auto) columns against the same task on the RGB frame, measured in alternating rounds (each round
// times every variant once, 20 calls each) on 1 thread; reports the median over rounds of each NV12
// variant's time over RGB's, and the sparse plan's pairs. Run with -benchtime=1x (the rounds are
// the repetitions).
func BenchmarkYUVSparseRatios(b *testing.B) {
	src, rgb := patternFrame(1080*1920*3/2, 7), patternFrame(1080*1920*3, 5)
	out := make([]float32, 3*256*456)
	tasks := []struct {
		name string
		s    func() *Spec
	}{{"squash224", nv12Squash224},
		{"short256-crop224", func() *Spec { return nv12Imagenet(false) }},
		{"aa-short256-crop224", func() *Spec { return nv12Imagenet(true) }}}
	for _, task := range tasks {
		b.Run(task.name, func(b *testing.B) {
			p, err := NewPlan(task.s())
			if err != nil {
				b.Fatal(err)
			}
			rs := task.s()
			rs.In.YUV = nil
			rs.In.Strides = [4]int64{0, 1920 * 3, 3, 1}
			rp, err := NewPlan(rs)
			if err != nil {
				b.Fatal(err)
			}
			jobs := []Job{{Plan: rp, Src: unsafe.Pointer(&rgb[0]), Out: unsafe.Pointer(&out[0])},
				{Plan: yuvPlanMode(p, yuvDense), Src: unsafe.Pointer(&src[0]), Out: unsafe.Pointer(&out[0])},
				{Plan: yuvPlanMode(p, yuvSparse), Src: unsafe.Pointer(&src[0]), Out: unsafe.Pointer(&out[0])},
				{Plan: p, Src: unsafe.Pointer(&src[0]), Out: unsafe.Pointer(&out[0])}}
			const rounds, calls = 15, 20
			t := make([][]float64, len(jobs))
			for range b.N {
				for range rounds {
					for v, j := range jobs {
						start := time.Now()
						for range calls {
							if err := runCPU([]Job{j}, 1, nil); err != nil {
								b.Fatal(err)
							}
						}
						t[v] = append(t[v], float64(time.Since(start).Nanoseconds())/calls)
					}
				}
			}
			med := func(x []float64) float64 { x = slices.Clone(x); slices.Sort(x); return x[len(x)/2] }
			b.ReportMetric(med(t[0])/1e3, "rgb-us")
			for v, name := range []string{"", "dense", "sparse", "auto"} {
				if v == 0 {
					continue
				}
				var r []float64
				for i := range t[0] {
					r = append(r, t[v][i]/t[0][i])
				}
				b.ReportMetric(med(r), name+"/rgb")
			}
			b.ReportMetric(float64(len(yuvPlanMode(p, yuvSparse).yuv.sparse)), "pairs")
		})
	}
}
