package engine

import (
	"testing"
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

func BenchmarkImagenet512(b *testing.B) {
	p, err := NewPlan(imagenetSpec(0, 512, 512))
	if err != nil {
		b.Fatal(err)
	}
	src := make([]uint8, 512*512*3)
	for i := range src {
		src[i] = uint8(i * 7)
	}
	out := make([]float32, p.OutImageElems())
	jobs := []Job{{Plan: p, Src: unsafe.Pointer(&src[0]), Out: unsafe.Pointer(&out[0])}}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := runCPU(jobs, 1); err != nil {
			b.Fatal(err)
		}
	}
}

func benchBatch(b *testing.B, threads int) {
	p, err := NewPlan(imagenetSpec(32, 512, 512))
	if err != nil {
		b.Fatal(err)
	}
	src := make([]uint8, 32*512*512*3)
	for i := range src {
		src[i] = uint8(i * 7)
	}
	out := make([]float32, p.N*p.OutImageElems())
	jobs := []Job{{Plan: p, Src: unsafe.Pointer(&src[0]), Out: unsafe.Pointer(&out[0])}}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := runCPU(jobs, threads); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBatch32Threads1(b *testing.B) { benchBatch(b, 1) }
func BenchmarkBatch32Threads2(b *testing.B) { benchBatch(b, 2) }

func benchSingle(b *testing.B, n, threads int) {
	p, err := NewPlan(imagenetSpec(n, 512, 512))
	if err != nil {
		b.Fatal(err)
	}
	src := make([]uint8, p.N*512*512*3)
	out := make([]float32, p.N*p.OutImageElems())
	jobs := []Job{{Plan: p, Src: unsafe.Pointer(&src[0]), Out: unsafe.Pointer(&out[0])}}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := runCPU(jobs, threads); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkImagenet512Threads2(b *testing.B)   { benchSingle(b, 0, 2) }
func BenchmarkImagenet512x2Threads1(b *testing.B) { benchSingle(b, 2, 1) }
func BenchmarkImagenet512x2Threads2(b *testing.B) { benchSingle(b, 2, 2) }

func BenchmarkAntialias512(b *testing.B) {
	s := imagenetSpec(0, 512, 512)
	s.Resize.Antialias = true
	p, err := NewPlan(s)
	if err != nil {
		b.Fatal(err)
	}
	src := make([]uint8, 512*512*3)
	out := make([]float32, p.OutImageElems())
	jobs := []Job{{Plan: p, Src: unsafe.Pointer(&src[0]), Out: unsafe.Pointer(&out[0])}}
	for i := 0; i < b.N; i++ {
		runCPU(jobs, 1)
	}
}
