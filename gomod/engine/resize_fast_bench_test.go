package engine

import (
	"syscall"
	"testing"
	"unsafe"
)

// BenchmarkDuoHRowHot runs duoH over one pair of source rows as many times as a 512 -> 224 image has
// output rows: the kernel's compute time with every byte in L1, to set against BenchmarkImagenet512
// (the same work over the whole image) and BenchmarkImagenet512Cold (distinct images).
func BenchmarkDuoHRowHot(b *testing.B) {
	p, err := NewPlan(imagenetSpec(0, 512, 512))
	if err != nil {
		b.Fatal(err)
	}
	f := p.fast
	src := make([]uint8, 512*512*3)
	for i := range src {
		src[i] = uint8(i * 7)
	}
	n := len(f.taps)
	planes := make([]float32, 3*n) // one array, as a plan's output (duoBlocks addresses the planes from one pointer)
	out := [3][]float32{planes[:n:n], planes[n : 2*n : 2*n], planes[2*n:]}
	base := -p.minOff
	b0, b1 := p.rows.Taps.WI[200], p.rows.Taps.WI[201]
	for i := 0; i < b.N; i++ {
		for y := 0; y < p.OutH; y++ {
			p.kern.duoH(&out, src, base+p.rows.Off[200], base+p.rows.Off[201], f, b0, b1)
		}
	}
}

// BenchmarkImagenet512Cold runs the 512 -> 224 task over 64 distinct images per op, one batch call,
// as the cold bench (python/goprep/_benchsuite/cold.py) does: 48 MiB in, 37 MiB out, beyond L3.
// BenchmarkImagenet512ColdLoop is the same 64 images, one call per image (the cold bench's Python
// loop, without Python).
func BenchmarkImagenet512Cold(b *testing.B)         { benchCold(b, 1, false) }
func BenchmarkImagenet512ColdThreads2(b *testing.B) { benchCold(b, 2, false) }
func BenchmarkImagenet512ColdLoop(b *testing.B)     { benchCold(b, 1, true) }

func benchCold(b *testing.B, threads int, loop bool) {
	const n = 64
	s := imagenetSpec(n, 512, 512)
	p, err := NewPlan(s)
	if err != nil {
		b.Fatal(err)
	}
	one, err := NewPlan(imagenetSpec(0, 512, 512))
	if err != nil {
		b.Fatal(err)
	}
	src := make([]uint8, n*512*512*3)
	for i := range src {
		src[i] = uint8(i * 7)
	}
	out := make([]float32, n*p.OutImageElems())
	jobs := []Job{{Plan: p, Src: unsafe.Pointer(&src[0]), Out: unsafe.Pointer(&out[0])}}
	b.ResetTimer()
	cpu0 := processCPU()
	for i := 0; i < b.N; i++ {
		if !loop {
			if err := runCPU(jobs, threads, nil); err != nil {
				b.Fatal(err)
			}
			continue
		}
		for k := 0; k < n; k++ {
			j := []Job{{Plan: one, Src: unsafe.Pointer(&src[k*512*512*3]), Out: unsafe.Pointer(&out[k*one.OutImageElems()])}}
			if err := runCPU(j, threads, nil); err != nil {
				b.Fatal(err)
			}
		}
	}
	// process CPU time, not wall time: the 2-core machine this is measured on is shared
	b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N*n)/1e3, "cpu-us/image")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n)/1e3, "us/image")
}

// processCPU is the process's user + system CPU time in nanoseconds.
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
