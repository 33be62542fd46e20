package engine

import (
	"math"
	"sort"
	"strings"
	"testing"
	"time"
	"unsafe"
)

// imagenetSpec is the benchmark task: 512x512 RGB -> bilinear 224x224 -> hflip -> normalize CHW float32.
func imagenetSpec(n, h, w int) *Spec {
	return &Spec{
		In:     InputSpec{DType: U8, N: n, H: h, W: w, C: 3, Strides: [4]int64{int64(h * w * 3), int64(w * 3), 3, 1}},
		Pre:    View{0, 0, 1, 1, h, w},
		Resize: ResizeSpec{Kind: "bilinear", H: 224, W: 224},
		Canvas: CanvasSpec{H: 224, W: 224},
		Post:   View{0, 223, 1, -1, 224, 224},
		CMap:   []int{0, 1, 2},
		Norm:   &NormSpec{Mean: []float64{0.485, 0.456, 0.406}, Std: []float64{0.229, 0.224, 0.225}, Scale: 1.0 / 255, DType: F32, Layout: "CHW"},
	}
}

// benchPlan times one plan over a synthetic source on the given number of threads.
func benchPlan(b *testing.B, s *Spec, threads int) { benchPlanEdit(b, s, threads, nil) }

// benchPlanEdit is benchPlan with the plan edited first (e.g. a fast path switched off, for A/B runs).
func benchPlanEdit(b *testing.B, s *Spec, threads int, edit func(p *Plan)) {
	p, err := NewPlan(s)
	if err != nil {
		b.Fatal(err)
	}
	if edit != nil {
		edit(p)
	}
	src := make([]uint8, p.N*s.In.H*s.In.W*3)
	for i := range src {
		src[i] = uint8(i * 7)
	}
	out := make([]float32, p.N*p.OutImageElems())
	jobs := []Job{{Plan: p, Src: unsafe.Pointer(&src[0]), Out: unsafe.Pointer(&out[0])}}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := runCPU(jobs, threads, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// The figures in docs/perf/2026-12-03-engine-notes.md come from these, on this project's 2-core machine.
func BenchmarkImagenet512(b *testing.B)           { benchPlan(b, imagenetSpec(0, 512, 512), 1) }
func BenchmarkImagenet512Threads2(b *testing.B)   { benchPlan(b, imagenetSpec(0, 512, 512), 2) }
func BenchmarkImagenet512x2Threads1(b *testing.B) { benchPlan(b, imagenetSpec(2, 512, 512), 1) }
func BenchmarkImagenet512x2Threads2(b *testing.B) { benchPlan(b, imagenetSpec(2, 512, 512), 2) }
func BenchmarkBatch32Threads1(b *testing.B)       { benchPlan(b, imagenetSpec(32, 512, 512), 1) }
func BenchmarkBatch32Threads2(b *testing.B)       { benchPlan(b, imagenetSpec(32, 512, 512), 2) }
func BenchmarkImagenet1080(b *testing.B)          { benchPlan(b, imagenetSpec(0, 1080, 1920), 1) }

func BenchmarkAntialias512(b *testing.B) {
	s := imagenetSpec(0, 512, 512)
	s.Resize.Antialias = true
	benchPlan(b, s, 1)
}

// The antialiased model-zoo tasks (issue 13): 1080p -> 224, flip, normalize, 1 thread.
func benchAA(b *testing.B, h, w int, kind string) {
	s := imagenetSpec(0, h, w)
	s.Resize.Kind, s.Resize.Antialias = kind, true
	benchPlan(b, s, 1)
}

// BenchmarkAntialias1080General is BenchmarkAntialias1080 on the general path (fast path off).
func BenchmarkAntialias1080General(b *testing.B) {
	s := imagenetSpec(0, 1080, 1920)
	s.Resize.Antialias = true
	benchPlanEdit(b, s, 1, func(p *Plan) { p.aa = nil })
}

// BenchmarkAntialias512Planar reads a planar (C, H, W) source, as a torchvision tensor is
// (aaHPlanar); BenchmarkAntialias512PlanarGeneral is the same on the general path.
func BenchmarkAntialias512Planar(b *testing.B) {
	s := imagenetSpec(0, 512, 512)
	s.Resize.Antialias = true
	s.In.Strides = [4]int64{0, 512, 1, 512 * 512}
	benchPlan(b, s, 1)
}

func BenchmarkAntialias512PlanarGeneral(b *testing.B) {
	s := imagenetSpec(0, 512, 512)
	s.Resize.Antialias = true
	s.In.Strides = [4]int64{0, 512, 1, 512 * 512}
	benchPlanEdit(b, s, 1, func(p *Plan) { p.aa = nil })
}

func BenchmarkAntialias1080(b *testing.B)      { benchAA(b, 1080, 1920, "bilinear") }
func BenchmarkAntialiasCubic1080(b *testing.B) { benchAA(b, 1080, 1920, "bicubic") }
func BenchmarkAntialiasCubic512(b *testing.B)  { benchAA(b, 512, 512, "bicubic") }

// The same tasks with PyTorch's uint8 weights (antialias="torch"): the one-multiply-add kernels (aaSplit).
func benchAATorch(b *testing.B, kind string) {
	s := imagenetSpec(0, 1080, 1920)
	s.Resize.Kind, s.Resize.Antialias, s.Resize.TorchU8 = kind, true, true
	benchPlan(b, s, 1)
}

func BenchmarkAntialiasTorch1080(b *testing.B)      { benchAATorch(b, "bilinear") }
func BenchmarkAntialiasCubicTorch1080(b *testing.B) { benchAATorch(b, "bicubic") }

// The ImageNet eval transform on a planar (C, H, W) tensor, as from_torchvision runs it: the shorter
// side resized to 256 (antialias), center crop 224, normalize; 1 thread.
func evalPlanarSpec(h, w int) *Spec {
	s := imagenetSpec(0, h, w)
	s.Resize.Antialias = true
	s.In.Strides = [4]int64{0, int64(w), 1, int64(h * w)}
	rh, rw := 256, 256*w/h
	if w < h {
		rh, rw = 256*h/w, 256
	}
	s.Resize.H, s.Resize.W, s.Canvas.H, s.Canvas.W = rh, rw, rh, rw
	s.Post = View{int(math.Round(float64(rh-224) / 2)), int(math.Round(float64(rw-224) / 2)), 1, 1, 224, 224}
	return s
}

func BenchmarkEvalPlanar512(b *testing.B)  { benchPlan(b, evalPlanarSpec(512, 512), 1) }
func BenchmarkEvalPlanar1080(b *testing.B) { benchPlan(b, evalPlanarSpec(1080, 1920), 1) }

// BenchmarkAAHPass times the horizontal pass of one 1080p -> 224 image (every source row once, in
// groups of four) with aaHRows4 ("old"), aaHRows4W on AVX2 alone ("wide", kernelOverrides.NoZ) and aaHRows4W as
// it runs ("vnni": aaHRowsZ where the CPU has AVX-512 VNNI, else "wide" again), in rotating order image
// by image in one process, and reports each kernel's minimum and 10th percentile in us: a load on the
// machine slows all alike.
func BenchmarkAAHPass(b *testing.B) {
	for _, kind := range []string{"bilinear", "bicubic", "bilinear-torch", "bicubic-torch"} {
		b.Run(kind, func(b *testing.B) {
			s := imagenetSpec(0, 1080, 1920)
			s.Resize.Kind, s.Resize.Antialias = strings.TrimSuffix(kind, "-torch"), true
			s.Resize.TorchU8 = strings.HasSuffix(kind, "-torch")
			p, err := NewPlan(s)
			if err != nil || p.aa == nil {
				b.Fatal("no fast antialias plan", err)
			}
			src := make([]uint8, 1080*1920*3)
			for i := range src {
				src[i] = uint8(i * 7)
			}
			n := p.OutW
			var h [4][]uint8
			for i := range h {
				h[i] = make([]uint8, 3*n+16)
			}
			edge := make([]byte, 4*p.aa.edgeStride())
			var ts [4][]float64
			var ks [4]kernelSet // the kernel set each of the four runs under
			for k := range ks {
				ks[k] = chooseKernels(cpu, kernelOverrides{NoZ: k == 1 || k == 3, NoY: k == 1})
			}
			for it := 0; it < b.N; it++ {
				for j := 0; j < 4; j++ {
					k := (j + it) % 4 // the order rotates: each kernel reads what another left in cache
					t0 := time.Now()
					for y := 0; y+4 <= 1080; y += 4 {
						rb := [4]int{y * 5760, (y + 1) * 5760, (y + 2) * 5760, (y + 3) * 5760}
						if k == 0 || !ks[k].aaHRows4W(&h, &rb, src, p.aa, p, edge) {
							ks[k].aaHRows4(&h, &rb, src, p.aa, p)
						}
					}
					ts[k] = append(ts[k], float64(time.Since(t0).Microseconds()))
				}
			}
			for k, name := range []string{"old", "wide", "vnni", "asm2"} {
				sort.Float64s(ts[k])
				b.ReportMetric(ts[k][0], name+"-min-us")
				b.ReportMetric(ts[k][len(ts[k])/10], name+"-p10-us")
			}
		})
	}
}

// BenchmarkAAVPass times the vertical pass plus normalisation of one 1080p -> 224 image (224 output
// rows, three planes each) with aaVRow per plane, aaVRow3 on AVX2 alone (kernelOverrides.No512V) and aaVRow3 as it
// runs ("aaVRow3W": its AVX-512 loop where the CPU has it), in rotating order image by image in one
// process; it reports each one's minimum and 10th percentile in us.
func BenchmarkAAVPass(b *testing.B) {
	for _, kind := range []string{"bilinear", "bicubic"} {
		b.Run(kind, func(b *testing.B) {
			s := imagenetSpec(0, 1080, 1920)
			s.Resize.Kind, s.Resize.Antialias = kind, true
			p, err := NewPlan(s)
			if err != nil || p.aa == nil {
				b.Fatal("no fast antialias plan", err)
			}
			n, rt, nt := p.OutW, &p.rows.Taps, p.norm
			hs := make([][]uint8, 1080)
			for i := range hs {
				hs[i] = make([]uint8, 3*n+16)
				for j := range hs[i] {
					hs[i][j] = uint8(i*31 + j*7)
				}
			}
			out := make([]float32, 3*224*n)
			luts := [3]*[256]float32{&nt.lutF32[0], &nt.lutF32[1], &nt.lutF32[2]}
			var ts [3][]float64
			ks := [3]kernelSet{p.kern, chooseKernels(cpu, kernelOverrides{No512V: true}), p.kern}
			for it := 0; it < b.N; it++ {
				for j := 0; j < 3; j++ {
					k := (j + it) % 3 // the order rotates: each kernel reads what another left in cache
					t0 := time.Now()
					for r := range rt.Cnt {
						kk := int(rt.Cnt[r])
						rows := make([][]uint8, 0, 64)
						for t := 0; t < kk; t++ {
							rows = append(rows, hs[p.rows.Src[r*rt.K+t]])
						}
						o := [3][]float32{out[r*n : r*n+n], out[(224+r)*n : (224+r)*n+n], out[(448+r)*n : (448+r)*n+n]}
						po := [3]int{0, n, 2 * n}
						wv := rt.WI[r*rt.K : r*rt.K+kk]
						if k >= 1 && ks[k].aaVRow3(&o, rows, &po, wv, p.aa.vw[r], p.aa.vh[r], nt, &luts, p.aa.zw != nil) {
							continue
						}
						for c := 0; c < 3; c++ {
							ks[k].aaVRow(o[c], rows, po[c], wv, p.aa.vw[r], p.aa.vh[r], nt.scale[c], nt.mean[c], nt.std[c], luts[c])
						}
					}
					ts[k] = append(ts[k], float64(time.Since(t0).Microseconds()))
				}
			}
			for k, name := range []string{"aaVRow", "aaVRow3", "aaVRow3W"} {
				sort.Float64s(ts[k])
				b.ReportMetric(ts[k][0], name+"-min-us")
				b.ReportMetric(ts[k][len(ts[k])/10], name+"-p10-us")
			}
		})
	}
}

// BenchmarkNewPlanTrainCrop builds the plan of one training item (issue 36): a 300x260 box of a
// 375x500 decoded source, antialiased bilinear to 224x224, flipped, normalized to CHW float32, as
// binding.PlanVariants builds one per item of a batch (about a tenth of the 1-core training call).
func BenchmarkNewPlanTrainCrop(b *testing.B) {
	s := imagenetSpec(0, 375, 500)
	s.Pre = View{40, 100, 1, 1, 300, 260}
	s.Resize.Antialias = true
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := NewPlan(s); err != nil {
			b.Fatal(err)
		}
	}
}
