package engine

import "unsafe"

// The arm64 row kernels of the OpenCV bilinear fast path: NEON (resize_fast_arm64.s) where the kernel
// set says so (kernelSet.NEON), else the pure-Go kernels of resize_fast.go, which they equal bit for
// bit (TestHresizeNEONEqualsScalar, TestVnormNEONEqualsScalar, TestFastPathEqualsGeneral under
// qemu-aarch64: scripts/test_arm64.sh). The fused rows (fusedRow, duoRows) have no NEON kernel: fused
// plans run fastRow's two passes, which are these.

// hresizeRow computes OpenCV's horizontal bilinear pass of one interleaved RGB row into three int16
// planes (channel c at d[c*n:], n = len(f.taps)): (s0*a0 + s1*a1) >> 4 per column and channel. With
// k.NEON, 8 columns per step in hresizeNEON over the runs of blocks whose 8-byte loads stay inside
// the array (fastPlan.octEnd); hresizeScalar for the other blocks and the last n%8 columns.
// Invariants: len(d) >= 3n; a clamped border column (wHi 0) multiplies the bytes after its pixel by 0.
// Twin: hresizeScalar; proved by TestHresizeNEONEqualsScalar and TestFastPathEqualsGeneral.
// Why: one 8-byte load and a table lookup per column replace six byte loads.
func (k *kernelSet) hresizeRow(d []int16, src []uint8, rb int, f *fastPlan) {
	n := len(f.taps)
	if !k.NEON {
		hresizeScalar(d, src, rb, f, 0, n)
		return
	}
	d = d[:3*n]
	row := src[rb+f.minOff:]
	base := unsafe.Pointer(unsafe.SliceData(row))
	out := unsafe.Pointer(unsafe.SliceData(d))
	ends := f.octEnd
	for b := 0; b < len(ends); {
		if int(ends[b]) > len(row) {
			hresizeScalar(d, src, rb, f, 8*b, 8*b+8)
			b++
			continue
		}
		e := b + 1
		for e < len(ends) && int(ends[e]) <= len(row) {
			e++
		}
		hresizeNEON(base, unsafe.Pointer(&f.taps[8*b]), unsafe.Add(out, 16*b), e-b, uintptr(2*n))
		b = e
	}
	if done := 8 * len(ends); done < n {
		hresizeScalar(d, src, rb, f, done, n)
	}
}

// hresizeNEON runs hresizeRow's NEON loop over nb >= 1 blocks of 8 columns: tp points at the first
// block's taps (pairTap), out at its channel-0 output, a channel's row is n2 bytes. Per column one
// 8-byte load at base+off (both pixels: 6 bytes); TBL over the four registers holding a block's loads
// gathers each channel's lower and higher pixels, which widen to int16 and multiply-add the int16
// weights into int32 (SMULL, SMLAL: exact, as the scalar int32 sums), narrowed by SHRN #4 (the low 16
// bits of sum>>4: int16(sum>>4), as hresizeScalar truncates).
// Invariants: every block's loads lie inside the array (hresizeRow checks fastPlan.octEnd); weights
// fit int16 (OpenCV's 11-bit fixed point; hresizeAVX2 relies on the same).
// Twin: hresizeScalar; proved by TestHresizeNEONEqualsScalar.
// Why: the loop in assembly (Go 1.26's archsimd has no arm64 types).
//
//go:noescape
func hresizeNEON(base, tp, out unsafe.Pointer, nb int, n2 uintptr)

// vnormRow computes OpenCV's vertical bilinear step of two int16 plane rows and the normalisation,
// into one float32 output row: ((s0*b0)>>16 + (s1*b1)>>16 + 2) >> 2 per column, then
// (v*scale - mean) / std with one IEEE operation per step (no FMA). With k.NEON, 8 columns per step
// in vnormNEON, the last len(out)%8 columns in vnormScalar.
// Invariants: len(s0), len(s1) >= len(out); the sum is in [0, 255] (the table's index), so widening
// to int32 and float32 is exact.
// Twin: vnormScalar, which reads the same values from the normalisation table (normTables.apply);
// proved by TestVnormNEONEqualsScalar and TestFastPathEqualsGeneral.
// Why: computing the formula as NumPy rounds it equals the table bit for bit, without a gather.
func (k *kernelSet) vnormRow(out []float32, s0, s1 []int16, b0, b1 int32, scale, mean, std float32, lut *[256]float32) {
	n := len(out)
	if !k.NEON || n < 8 {
		vnormScalar(out, s0, s1, b0, b1, lut)
		return
	}
	s0, s1 = s0[:n], s1[:n]
	nb := n / 8
	vnormNEON(unsafe.Pointer(&out[0]), unsafe.Pointer(&s0[0]), unsafe.Pointer(&s1[0]), nb, b0, b1, scale, mean, std)
	if i := 8 * nb; i < n {
		vnormScalar(out[i:], s0[i:], s1[i:], b0, b1, lut)
	}
}

// vnormNEON is vnormRow's NEON loop over nb >= 1 blocks of 8 columns: SMULL/SMULL2 and UZP2 take the
// high halves of the int16 products (VPMULHW's (s*b)>>16), ADD, +2, SSHR #2 in int16 lanes, SXTL and
// SCVTF to float32, then FMUL, FSUB, FDIV (never a fused step).
// Invariants: as vnormRow's (the int16 sums cannot overflow: each high half is <= 1020).
// Twin: vnormScalar; proved by TestVnormNEONEqualsScalar.
// Why: the loop in assembly (Go 1.26's archsimd has no arm64 types).
//
//go:noescape
func vnormNEON(out, s0, s1 unsafe.Pointer, nb int, b0, b1 int32, scale, mean, std float32)

// fusedRow declines (it needs AVX-512 VBMI): fastRow's two passes run.
func (k *kernelSet) fusedRow(out *[3][]float32, src []uint8, rb0, rb1 int, f *fastPlan, b0, b1 int32, nt *normTables) bool {
	return false
}

// duoH is duoScalar over the whole row (fused plans reach it only with YUV sources and duo tables).
func (k *kernelSet) duoH(out *[3][]float32, src []uint8, rb0, rb1 int, f *fastPlan, b0, b1 int32) {
	duoScalar(out, src, rb0, rb1, f, b0, b1, 0, len(f.taps))
}

// duoRows declines (kernelSet.Duo is false on arm64): fastRow computes every row.
func (w *worker) duoRows(p *Plan, b *jobBufs, base, img, y, y1 int) int { return 0 }
