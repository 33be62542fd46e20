package engine

import (
	"math"
	"math/rand"
	"testing"
)

// The NEON kernels of resize_aa_arm64.s and resize_aa_vertical_arm64.s against their pure-Go twins, in one arm64 binary. Run under
// qemu-aarch64: scripts/test_arm64.sh -test.run 'NEON|Antialias|AA'.

// aaHRow with NEON writes exactly aaHScalar's bytes: random antialias specs (both filters, Pillow's
// and PyTorch's tables, up- and downscales, crops), sources whose last row ends at the end of the
// array (the columns past aaPlan.nend fall back), runs of 0 and 255, and in every other spec random
// weights over Pillow's whole range, negative ones included, so that sums leave [0, 255] both ways.
func TestAAHNEONEqualsScalar(t *testing.T) {
	neon := kernelSet{NEON: true}
	rng := rand.New(rand.NewSource(31))
	tested, fellBack := 0, 0
	for it := 0; it < 250; it++ {
		s := randomAASpec(rng)
		if cx := rng.Intn(s.In.W); rng.Intn(3) == 0 {
			s.Pre = View{0, cx, 1, 1, s.In.H, 1 + rng.Intn(s.In.W-cx)}
		}
		withKernels(t, kernelOverrides{})
		p, err := NewPlan(s)
		if err != nil || p.aa == nil || p.aa.planar {
			continue
		}
		a := p.aa
		if a.ncols == nil {
			t.Fatalf("spec %d: a NEON plan without aaHNEON's tables", it)
		}
		if it%2 == 1 { // random weights, the tables rebuilt from them
			ct := &p.cols.Taps
			for i := range ct.WI {
				ct.WI[i] = int32(rng.Intn(1<<23)) - 1<<22
				if rng.Intn(3) == 0 {
					ct.WI[i] = int32(rng.Intn(1 << 20))
				}
			}
			b := *a
			b.nw = nil
			b.buildNEON(ct)
			a = &b
		}
		n := len(a.cols)
		src := make([]uint8, s.In.H*s.In.W*3)
		for i := range src {
			src[i] = uint8(rng.Intn(256))
			if rng.Intn(4) == 0 {
				src[i] = uint8(255 * rng.Intn(2))
			}
		}
		rs := s.In.W * 3
		got, want := make([]uint8, 3*n+5), make([]uint8, 3*n+5)
		for y := 0; y < s.In.H; y++ {
			rb := y*rs + s.Pre.X0*3
			for i := range got {
				got[i], want[i] = 0xAA, 0xAA
			}
			aaHScalar(want, src, rb, a, p, 0, n)
			neon.aaHRows(got, nil, src, rb, 0, a, p)
			if string(got) != string(want) {
				for i := range got {
					if got[i] != want[i] {
						t.Fatalf("spec %d %+v row %d: column %d channel %d: neon %d, scalar %d", it, s.Resize, y, i%n, i/n, got[i], want[i])
					}
				}
			}
			if lim := len(src) - (rb + a.minOff); int(a.nend[n-1]) > lim {
				fellBack++
			}
		}
		tested++
	}
	if tested < 100 || fellBack == 0 {
		t.Fatalf("%d specs tested, %d rows with scalar columns at the array's end", tested, fellBack)
	}
}

// aaVRow with NEON equals aaVScalar's table bit for bit: random lengths (tails 0-15), plane offsets,
// windows of 1 to 70 rows, Pillow-like and arbitrary weights (sums past both clamps), and
// normalisations of either sign, subnormal results, infinities and NaN (std 0).
func TestAAVNEONEqualsScalar(t *testing.T) {
	neon := kernelSet{NEON: true}
	rng := rand.New(rand.NewSource(37))
	for it := 0; it < 400; it++ {
		spec := randNormSpec1(rng, it)
		nt := newNormTables(spec, U8)
		n := rng.Intn(300)
		kk := 1 + rng.Intn(70)
		po := rng.Intn(3) * n
		hs := make([][]uint8, kk)
		for i := range hs {
			hs[i] = make([]uint8, 3*n)
			for j := range hs[i] {
				hs[i][j] = uint8(rng.Intn(256))
				if rng.Intn(4) == 0 {
					hs[i][j] = uint8(255 * rng.Intn(2))
				}
			}
		}
		wv := make([]int32, kk)
		sum := int32(0)
		for i := range wv {
			if it%2 == 0 {
				wv[i] = int32(rng.Intn(1<<23)) - 1<<22
			} else if i < kk-1 {
				wv[i] = int32(rng.Intn((1 << 22) / kk))
				sum += wv[i]
			} else {
				wv[i] = 1<<22 - sum // a normalised window, as Pillow's
			}
		}
		got, want := make([]float32, n), make([]float32, n)
		aaVScalar(want, hs, po, wv, &nt.lutF32[0], 0)
		neon.aaVRow(got, hs, po, wv, nil, aaVHead{}, nt.scale[0], nt.mean[0], nt.std[0], &nt.lutF32[0])
		for x := range got {
			if math.Float32bits(got[x]) != math.Float32bits(want[x]) {
				t.Fatalf("it %d n=%d kk=%d po=%d col %d: neon %v, scalar %v", it, n, kk, po, x, got[x], want[x])
			}
		}
	}
}

// With NoSIMD the arm64 build runs the pure-Go kernels: the whole-path tests again on them.
func TestAntialiasPureGoOnArm64(t *testing.T) {
	withKernels(t, kernelOverrides{NoSIMD: true})
	TestAntialiasFastPathEqualsGeneral(t)
	TestAntialiasFastPathAtArrayEnd(t)
}

// BenchmarkAntialias1080PureGo is BenchmarkAntialias1080 with the NEON kernels switched off, for A/B
// runs on arm64 hardware in one process.
func BenchmarkAntialias1080PureGo(b *testing.B) {
	withKernels(b, kernelOverrides{NoSIMD: true})
	benchAA(b, 1080, 1920, "bilinear")
}
