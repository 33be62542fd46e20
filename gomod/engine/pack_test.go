package engine

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestPackRGBXRow: every width 0-70 and some long rows, random bytes, with the process's kernels (the
// AVX2 loop where the build and CPU have it) and the scalar twin: dst holds each pixel's first three
// bytes in order, and no byte past 3*w changes.
func TestPackRGBXRow(t *testing.T) {
	for _, o := range []kernelOverrides{{}, {NoSIMD: true}} {
		t.Run(fmt.Sprintf("NoSIMD=%v", o.NoSIMD), func(t *testing.T) {
			withKernels(t, o)
			testPackRGBXRow(t)
		})
	}
}

func testPackRGBXRow(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	widths := []int{1920, 1921, 4099}
	for w := 0; w <= 70; w++ {
		widths = append(widths, w)
	}
	for _, w := range widths {
		src := make([]byte, 4*w)
		for i := range src {
			src[i] = byte(rng.Uint32())
		}
		dst := make([]byte, 3*w+16)
		for i := range dst {
			dst[i] = 0xA5
		}
		PackRGBXRow(dst, src)
		for x := 0; x < w; x++ {
			for c := 0; c < 3; c++ {
				if dst[3*x+c] != src[4*x+c] {
					t.Fatalf("w=%d: pixel %d channel %d = %d, want %d", w, x, c, dst[3*x+c], src[4*x+c])
				}
			}
		}
		for i := 3 * w; i < len(dst); i++ {
			if dst[i] != 0xA5 {
				t.Fatalf("w=%d: byte %d past the row written", w, i)
			}
		}
	}
}

// BenchmarkPackRGBXRow1080p packs a 1080p RGBX image row by row (the process's kernels; -bench with
// GOEXPERIMENT=simd for the AVX2 loop).
func BenchmarkPackRGBXRow1080p(b *testing.B) {
	src, dst := make([]byte, 4*1920*1080), make([]byte, 3*1920*1080)
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		for y := 0; y < 1080; y++ {
			PackRGBXRow(dst[3*1920*y:3*1920*(y+1)], src[4*1920*y:4*1920*(y+1)])
		}
	}
}
