package engine

import (
	"math"
	"math/rand"
	"testing"
)

// The NEON kernels of resize_fast_arm64.s against their pure-Go twins, in one arm64 binary
// (kernelOverrides.NoSIMD and kernelSet{} run the twins). Run under qemu-aarch64:
// scripts/test_arm64.sh -test.run 'NEON|FastPath'.

// hresizeRow with NEON must write exactly hresizeScalar's integers (checkHresizeEqualsScalar).
func TestHresizeNEONEqualsScalar(t *testing.T) {
	neon := kernelSet{NEON: true}
	checkHresizeEqualsScalar(t, "neon", neon.hresizeRow)
}

// hresizeNEON on hand-made taps: random offsets (any order, overlapping), weights over the whole
// int16 range including negative ones and wHi 0, every pixel value.
func TestHresizeNEONRandomTaps(t *testing.T) {
	neon := kernelSet{NEON: true}
	rng := rand.New(rand.NewSource(12))
	for it := 0; it < 300; it++ {
		n := 1 + rng.Intn(70)
		src := make([]uint8, 8+rng.Intn(200))
		for i := range src {
			src[i] = uint8(rng.Intn(256))
		}
		f := &fastPlan{taps: make([]pairTap, n)}
		for j := range f.taps {
			wLo, wHi := int32(rng.Intn(2049)), int32(0)
			switch rng.Intn(4) {
			case 0: // a clamped border
			case 1: // anything int16 holds
				wLo, wHi = int32(int16(rng.Uint32())), int32(int16(rng.Uint32()))
			default:
				wHi = 2048 - wLo
			}
			hi := len(src) - 6
			if wHi == 0 {
				hi = len(src) - 3
			}
			f.taps[j] = pairTap{int32(rng.Intn(hi + 1)), wLo, wHi}
		}
		f.buildQuads()
		a, b := make([]int16, 3*n), make([]int16, 3*n)
		neon.hresizeRow(a, src, 0, f)
		hresizeScalar(b, src, 0, f, 0, n)
		for i := range a {
			if a[i] != b[i] {
				t.Fatalf("it %d n=%d: column %d channel %d (tap %+v): neon %d, scalar %d", it, n, i%n, i/n, f.taps[i%n], a[i], b[i])
			}
		}
	}
}

// vnormRow with NEON must equal vnormScalar's table bit for bit: random lengths (tails 0-7) and
// starts, weights, row values over the range the horizontal pass writes, and normalisations (scales,
// means and stds of either sign, tiny and huge).
func TestVnormNEONEqualsScalar(t *testing.T) {
	neon := kernelSet{NEON: true}
	rng := rand.New(rand.NewSource(13))
	for it := 0; it < 500; it++ {
		spec := randNormSpec1(rng, it)
		nt := newNormTables(spec, U8)
		n := rng.Intn(300)
		at := rng.Intn(9)
		s0, s1 := make([]int16, at+n), make([]int16, at+n)
		for i := range s0 {
			s0[i], s1[i] = int16(rng.Intn(32641)), int16(rng.Intn(32641))
		}
		b0 := int32(rng.Intn(2049))
		b1 := 2048 - b0
		a, b := make([]float32, at+n), make([]float32, at+n)
		neon.vnormRow(a[at:], s0[at:], s1[at:], b0, b1, nt.scale[0], nt.mean[0], nt.std[0], &nt.lutF32[0])
		vnormScalar(b[at:], s0[at:], s1[at:], b0, b1, &nt.lutF32[0])
		for i := range a {
			if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
				t.Fatalf("it %d n=%d at=%d col %d (%d, %d; b %d %d): neon %v, scalar %v", it, n, at, i-at, s0[i], s1[i], b0, b1, a[i], b[i])
			}
		}
	}
}

// With NoSIMD the arm64 build runs the pure-Go kernels: the same whole-path tests again on them.
func TestFastPathPureGoOnArm64(t *testing.T) {
	withKernels(t, kernelOverrides{NoSIMD: true})
	if k := currentKernels(); k.NEON {
		t.Fatal("NoSIMD left NEON on")
	}
	TestFastPathEqualsGeneral(t)
	TestFusedDownscaleEqualsGeneral(t)
}

// BenchmarkImagenet512PureGo is BenchmarkImagenet512 with the NEON kernels switched off, for A/B runs
// on arm64 hardware in one process (qemu measures no time: scripts/count_arm64_insns.sh counts).
func BenchmarkImagenet512PureGo(b *testing.B) {
	withKernels(b, kernelOverrides{NoSIMD: true})
	benchPlan(b, imagenetSpec(0, 512, 512), 1)
}
