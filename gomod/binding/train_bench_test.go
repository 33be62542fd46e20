//go:build cgo && !nocodecs

package binding

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"syscall"
	"testing"
	"unsafe"

	"github.com/goprep/goprep/gomod/engine"
)

// BenchmarkTrainBatch is the Go half of a 1-thread training batch (issue 36; the Python half is
// benchmarks/train_percore.py, docs/perf/2026-12-07-train-percore.md): 256 JPEGs from
// $GOPREP_TRAIN_JPEGS (the training bench's files: `python benchmarks/train_percore.py 1 512 DIR`
// makes them in DIR; or any folder of JPEGs) opened as one decode batch, each given a
// RandomResizedCrop(224) box (torchvision's draw, a fixed seed) and a coin-flip mirror, its plan built
// from a template as binding.PlanVariants builds it, then one Execute decoding and resizing every item
// into float32 CHW (the output buffer reused; Python allocates a new one per call). Sub-benchmarks:
// "full" (open, plans, execute, free), "plans" (PlanVariants and the frees alone), "floor" (the same
// boxes decoded and gathered with nearest taps to uint8 HWC, no antialias or normalisation: the
// training bench's decode floor). It reports CPU time per image (getrusage, every thread) beside the
// wall time. Skipped without the variable.
func BenchmarkTrainBatch(b *testing.B) {
	dir := os.Getenv("GOPREP_TRAIN_JPEGS")
	if dir == "" {
		b.Skip("GOPREP_TRAIN_JPEGS (a folder of JPEGs) is not set")
	}
	var files []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && filepath.Ext(p) == ".jpg" {
			files = append(files, p)
		}
		return nil
	})
	sort.Strings(files)
	const n = 256
	if len(files) < n {
		b.Skipf("%s holds %d JPEGs, fewer than %d", dir, len(files), n)
	}
	files = files[:n]
	if _, err := SetArrayDataOffset(16); err != nil {
		b.Fatal(err)
	}
	items := make([][]byte, n)
	for i, f := range files {
		var err error
		if items[i], err = os.ReadFile(f); err != nil {
			b.Fatal(err)
		}
	}
	bh, hs := openBatch(b, items)
	DecodeClose(bh)
	rng := rand.New(rand.NewPCG(7, 36))
	type item struct{ h, w, y0, x0, ph, pw int }
	its := make([]item, n)
	flips := make([]bool, n)
	for i, hd := range hs {
		y0, x0, ph, pw := rrcBox(rng, hd.Height, hd.Width)
		its[i] = item{hd.Height, hd.Width, y0, x0, ph, pw}
		flips[i] = rng.IntN(2) == 1
	}
	for _, mode := range []string{"full", "plans", "floor"} {
		b.Run(mode, func(b *testing.B) {
			var tmpl [2]int64 // not flipped, flipped
			for f := range tmpl {
				s := trainSpec(its[0].h, its[0].w, its[0].y0, its[0].x0, its[0].ph, its[0].pw, f == 1, mode == "floor")
				js, _ := json.Marshal(s)
				h, err := NewPlan(string(js))
				if err != nil {
					b.Fatal(err)
				}
				defer FreePlan(h)
				tmpl[f] = h
			}
			rows := make([]int64, 0, n*VariantCols)
			for i, it := range its {
				t := tmpl[0]
				if flips[i] {
					t = tmpl[1]
				}
				rows = append(rows, t, int64(it.h), int64(it.w), int64(it.y0), int64(it.x0), int64(it.ph), int64(it.pw))
			}
			per := 224 * 224 * 3
			if mode != "floor" {
				per *= 4
			}
			out := make([]byte, n*per)
			handles := make([]int64, n)
			jobs := make([]int64, n*JobCols)
			desc := make([]int64, 2*n)
			for i, it := range items {
				desc[2*i], desc[2*i+1] = addr(unsafe.Pointer(&it[0])), int64(len(it))
			}
			hdr := make([]int64, HeaderCols*n)
			old := NumThreads()
			SetNumThreads(1)
			defer SetNumThreads(old)
			b.ResetTimer()
			c0 := cpuTime()
			for range b.N {
				ro, ho := &fakeArray{data: unsafe.Pointer(&rows[0])}, &fakeArray{data: unsafe.Pointer(&handles[0])}
				if err := PlanVariants(addr(unsafe.Pointer(ro)), n, addr(unsafe.Pointer(ho))); err != nil {
					b.Fatal(err)
				}
				if mode != "plans" {
					dobj, hobj := &fakeArray{data: unsafe.Pointer(&desc[0])}, &fakeArray{data: unsafe.Pointer(&hdr[0])}
					bh, err := DecodeOpen(addr(unsafe.Pointer(dobj)), n, "", addr(unsafe.Pointer(hobj)), 0, "src", true)
					if err != nil {
						b.Fatal(err)
					}
					for i := range n {
						row := jobs[i*JobCols : (i+1)*JobCols]
						row[jobPlan], row[jobOut], row[jobBatch], row[jobItem], row[jobScale] = handles[i], int64(i*per), bh, int64(i), 1
					}
					if err := execRows(jobs, out, "cpu", nil); err != nil {
						b.Fatal(err)
					}
					DecodeClose(bh)
				}
				for _, h := range handles {
					FreePlan(h)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*n), "us/image")
			b.ReportMetric((cpuTime()-c0)*1e6/float64(b.N*n), "cpu-us/image")
		})
	}
}

// rrcBox is torchvision's RandomResizedCrop.get_params for an h x w image (scale (0.08, 1), ratio
// (3/4, 4/3)): top, left, height, width.
func rrcBox(rng *rand.Rand, h, w int) (y0, x0, ph, pw int) {
	area := float64(h * w)
	lr0, lr1 := math.Log(3.0/4), math.Log(4.0/3)
	for range 10 {
		ta := area * (0.08 + 0.92*rng.Float64())
		ar := math.Exp(lr0 + (lr1-lr0)*rng.Float64())
		cw, ch := int(math.Round(math.Sqrt(ta*ar))), int(math.Round(math.Sqrt(ta/ar)))
		if cw > 0 && cw <= w && ch > 0 && ch <= h {
			return rng.IntN(h - ch + 1), rng.IntN(w - cw + 1), ch, cw
		}
	}
	s := min(h, w)
	return (h - s) / 2, (w - s) / 2, s, s
}

// trainSpec is the traced spec of one training item (the recipe's, as Python traces it): an h x w RGB
// source read through the box, antialiased bilinear to 224x224, mirrored or not, normalised to float32
// CHW; floor: nearest taps to uint8 HWC instead (the decode floor).
func trainSpec(h, w, y0, x0, ph, pw int, flip, floor bool) engine.Spec {
	post := engine.View{SY: 1, SX: 1, H: 224, W: 224}
	if flip {
		post.X0, post.SX = 223, -1
	}
	s := engine.Spec{
		In:     engine.InputSpec{DType: engine.U8, H: h, W: w, C: 3, Strides: [4]int64{0, int64(w * 3), 3, 1}},
		Pre:    engine.View{Y0: y0, X0: x0, SY: 1, SX: 1, H: ph, W: pw},
		Resize: engine.ResizeSpec{Kind: "bilinear", Antialias: true, H: 224, W: 224},
		Canvas: engine.CanvasSpec{H: 224, W: 224},
		Post:   post,
		CMap:   []int{0, 1, 2},
		Norm: &engine.NormSpec{Mean: []float64{0.485, 0.456, 0.406}, Std: []float64{0.229, 0.224, 0.225}, Scale: 1.0 / 255,
			DType: engine.F32, Layout: "CHW"},
	}
	if floor {
		s.Resize = engine.ResizeSpec{Kind: "nearest", H: 224, W: 224}
		s.Norm = nil
	}
	return s
}

// cpuTime is the process's CPU time so far (user and system, every thread), in seconds.
func cpuTime() float64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
