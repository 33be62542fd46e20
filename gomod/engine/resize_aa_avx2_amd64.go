//go:build goexperiment.simd && amd64

package engine

import "unsafe"

// aaHRowsY is aaHRows4W's column loop in assembly on AVX2 (resize_aa_avx2_amd64.s) for the columns
// [0, n), n a multiple of 16: aaHRowsZ's contract (rows[i] from 4 bytes before row i's origin, as
// aaHRows4W's ps; the columns aaPlan.ycols, the chunks w = aaPlan.wide with the low halves lodelta
// bytes past the high ones; prefetch as aaHRowsZ), on aaHRows4W's own loads and shuffles.
// BenchmarkAAHPass on the AVX-512 Xeon (AVX2 code on it; kernels in rotating order in one process,
// minimum of 60 images, two runs) against aaHRows4W's archsimd loop: bicubic 997 / 977 against 1273 /
// 1226 us, "torch" 889 / 861 against 1117 / 1127, bilinear 605 / 583 against 751 / 738 (aaHRowsZ:
// 807 / 797 bicubic). The same instructions per chunk; what the archsimd loop pays besides is its
// closure call per column, its sums through memory (res), a branch per column on the doubt test, and
// no prefetch. Not measured on an AVX2-only CPU.
// Tried and not kept: a "quad" kernel that shuffles each group of four source pixels of the four
// rows once per call into a buffer ([tap pair 0, 1 | 2, 3] words, as this loop's shuffles leave them;
// a ring of quads in L1, each block of 16 columns shuffling only the quads no earlier block did), so
// that a column's taps take one VPMADDWD (from memory) and one VPADDD per four taps and row, with no
// shuffle; 4-tap-aligned quads cost ~6% more multiply-adds than this loop's column-aligned chunks.
// It passed TestAAHRowsEqualScalarRandom. BenchmarkAAHPass (in the same rotation as this kernel, two
// runs): bicubic 949 / 998 against 983 / 1003 us, "torch" bicubic 882 / 889 against 862 / 868,
// bilinear 691 / 674 against 621 / 591. Stubbing parts out (an earlier variant, rows in cache):
// bicubic ~350 us without its tap loops, ~750 without most of its shuffling, ~900-1000 whole. So its
// tap loop took ~560 us against ~770 for this loop's, but the shuffling pass (one shuffle, load and
// store per quad and row, and the blocks' bookkeeping) took 160-250 us of that back, and the rest
// (~190 us: fold, split test, packing, stores) is the same in both. Shuffling each column's new
// quads just before its taps instead (no separate pass; the shuffles among the multiply-adds) was
// slower still: bicubic 995 / 1128 against 952 / 966 us, bilinear 717 / 709 against 577 / 588.
// Columns in doubt: on the 1080p photos -> 224 bicubic 7.9% of the column groups have a lane in
// doubt, 1.1 rows each, and 70% of the blocks of 16 have such a column. Completing them inside their
// block (all four rows' low halves, then the block's pack) cost ~100 us of the pass, mostly not the
// multiply-adds: looping over the marked columns alone, doing nothing, took 44 us (the loop's exit
// and the block's branch mispredict, a block at a time), the set-up per column ~40, the sums ~30.
// Now the column loop records j<<16 | lanes without a branch, and after the last block each row in
// doubt is summed whole (high and low halves from one pass over its bytes; the tail's second pair
// even when its weights are zero, as a branch on 1 or 2 pairs mispredicted on the recorded columns'
// random order): ~72 us. With the first chunk written instead of added, against the kernel before
// (in-process A/B on the bench photos, AVX2 code on the AVX-512 Xeon, minimum of 60 images, three
// runs): bicubic 891 against 935 us, "torch" bicubic 808 / 826, bilinear 556 / 583. A test per row
// inside the block, instead of the record, was slower than completing all four rows (943 / 925 us).
//
//go:noescape
func aaHRowsY(rows, dst *[4]unsafe.Pointer, cols *aaAsmCol, n int, w *aaWide, plane int, k *aaYConst, pf uintptr, pfn int)

// aaYFixCap is how many columns one aaHRowsY call may take: each may be recorded in doubt, in a list
// of this length in its frame (YFIX_CAP).
const aaYFixCap = 256

// aaYConst is aaHRowsY's constants: aaWideA, aaWideB, aaTailA, aaTailB, aaZConst's packing shuffle
// (both lanes), 2^21 and 2^22 - 1.
type aaYConst struct {
	shA, shB, tA, tB [32]int8
	regroup          [32]uint8
	half, frac       int32
	_                [6]int32
}

var aaYK = func() (k aaYConst) {
	k.shA, k.shB, k.tA, k.tB = aaWideA, aaWideB, aaTailA, aaTailB
	copy(k.regroup[:], aaZK.regroup[:32])
	k.half, k.frac = 1<<(pilPrecisionBits-1), 1<<pilPrecisionBits-1
	return k
}()

// aaVRow3Y is aaVRow3's loop over the columns [x, n) (n-x a multiple of 16, np >= 1) in assembly on
// AVX2 (resize_aa_avx2_amd64.s): out the three planes' output rows, hs the first of the 2*np rows'
// slice headers (pair i: hs[2i] and hs[2i+1]; each row's plane c at byte offset po[c] + column), w
// the pairs' weights (aaVPairs), k the row's split and the normalisation. The same floats as
// aaVScalar (TestAAVRowEqualScalarRandom).
//
//go:noescape
func aaVRow3Y(out *[3]unsafe.Pointer, hs unsafe.Pointer, np, x, n int, po *[3]int, w unsafe.Pointer, k *aaVConst)

// aaVConst is aaVRow3Y's constants for one output row: the split (aaVHead: its shift, base and
// threshold less one; 2^22-1; 2^21-base, what a block in doubt adds with its low halves), the clamp's
// top (255) and the three planes' normalisation (normTables).
type aaVConst struct {
	sh, base, frac, thrm1, top, fix int32
	scale, mean, std                [3]float32
}
