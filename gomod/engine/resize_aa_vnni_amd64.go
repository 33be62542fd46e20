//go:build goexperiment.simd && amd64

package engine

import "unsafe"

// aaHRowsZ is aaHRows4W's column loop in assembly on AVX-512 VBMI + VNNI (resize_aa_vnni_amd64.s)
// for the columns [0, n), n a multiple of 16: the four rows at rows[i] (each at its origin, rb +
// minOff) into the planar rows at dst[i] (plane stride plane), the same integers as aaHScalar. It sums
// the high halves (aaPlan.zw), adds the low halves' sum (lodelta bytes further in zw) where aaCol's
// bound leaves a result in doubt (marked in the loop, completed after it), and packs 16 columns at a
// time, through scratch. Each column prefetches two lines from pf on, and pf moves pfn bytes on
// (PREFETCHT1; an address, never dereferenced otherwise), so that the call brings in the next call's
// rows (aaPrefetch).
// Invariants: every second step of a column reads 64 bytes from its first tap (aaPlan.wideEnd
// covers them); the plan has its tables (newAAZ, built where kernelSet.AAHZ).
// Twin: aaHScalar; proved by TestAAHRowsEqualScalarRandom on AVX-512 VNNI CPUs.
// Why: 8 taps of one row per byte permute and VPDPWSSD, with no shuffle per row pair.
//
//go:noescape
func aaHRowsZ(rows, dst *[4]unsafe.Pointer, cols *aaAsmCol, n int, w *aaZW, plane, lodelta int, k *aaZConst, scratch *[16][16]int32, pf uintptr, pfn int)

// aaZConst is aaHRowsZ's constants: the two VPERMB indices (the 8 taps at bytes 0-23 and at 24-47
// of a 64-byte load: in lane l, words 0-5 take the (tap 2l, tap 2l+1) bytes of channels 0, 1, 2 into
// their low bytes; the kernel's byte mask zeroes the rest), the byte shuffle of the packing
// ([c0 ch0-3 | c1 | c2 | c3] to [ch0 c0-3 | ch1 | ch2 | ch3] in every lane), the tail's VPERMB index
// (taps 0-3 of the row at bytes 0-11 in lanes 0, 1 and of the row at bytes 32-43 in lanes 2, 3),
// 2^21 and 2^22 - 1.
type aaZConst struct {
	idx        [2][64]uint8
	regroup    [64]uint8
	tail       [64]uint8
	half, frac int32
	_          [14]int32
}

var aaZK = func() (k aaZConst) {
	for s := range k.idx {
		for lane := 0; lane < 4; lane++ {
			for ch := 0; ch < 3; ch++ {
				for e := 0; e < 2; e++ {
					k.idx[s][16*lane+2*(2*ch+e)] = uint8(24*s + 3*(2*lane+e) + ch)
				}
			}
		}
	}
	for i := range k.regroup {
		k.regroup[i] = uint8(4*(i%4) + i%16/4) // VPSHUFB: within the lane
	}
	for i := range k.tail {
		k.tail[i] = k.idx[0][i%32] + uint8(32*(i/32))
	}
	k.half, k.frac = 1<<(pilPrecisionBits-1), 1<<pilPrecisionBits-1
	return k
}()
