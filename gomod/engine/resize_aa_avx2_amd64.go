//go:build goexperiment.simd && amd64

package engine

import "unsafe"

// aaHRowsY is aaHRows4W's column loop in assembly on AVX2 (resize_aa_avx2_amd64.s) for the columns
// [0, n), n a multiple of 16: aaHRowsZ's contract (rows[i] from 4 bytes before row i's origin, as
// aaHRows4W's ps; the columns aaPlan.ycols, the chunks w = aaPlan.wide with the low halves lodelta
// bytes past the high ones; prefetch as aaHRowsZ), on aaHRows4W's own loads and shuffles. A column in
// doubt is recorded (j<<16 | lanes) without a branch; after the last block each row in doubt is
// summed whole, high and low halves.
// Invariants: n <= aaYFixCap (the doubt list in its frame); the rows' loads lie inside their arrays
// or edge copies (aaHRows4W).
// Twin: aaHScalar; proved by TestAAHRowsEqualScalarRandom (kernelOverrides.NoZ), whose broken twin
// it must catch; TestAAAsmLayout proves the header's offsets.
// Why: the archsimd loop pays a closure call per column, sums through memory and a branch per
// column on the doubt test; this loop has the same instructions per chunk and none of those.
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
// the pairs' weights (aaVPairs), k the row's split and the normalisation.
// Twin: aaVScalar; proved by TestAAVRowEqualScalarRandom.
// Why: the archsimd version recomputed each load's address and spilled its accumulators.
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
