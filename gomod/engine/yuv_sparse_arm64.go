package engine

import "unsafe"

// The sparse YUV converter on arm64: yuvConvPairs' pixel pairs gathered and stored by lane in NEON
// registers (yuvNEON's sparse steps, yuv_arm64.s), where the kernel set says so (kernelSet.NEON).
// It needs no per-plan tables. yuvConvPairsVector is yuvConvPairs' hook for a converter that gathers
// in registers (named for amd64's AVX-512 VBMI one, yuv_sparse_amd64.go); without NEON it declines
// and yuvConvPairs converts each pair with yuvConvScalar.

// buildBlocks: no tables here (yuvNEON reads yp.sparse itself).
func (yp *yuvPlan) buildBlocks(w int) {}

// yuvConvPairsVector converts the pixel pairs ps (ascending, at least one; pair q is pixels 2q and
// 2q+1) as yuvConvPairs does, in yuvNEON's sparse steps of 8 pairs (a list shorter than 8 padded
// with its last pair, whose bytes are then written more than once, each time the same): the bytes
// yuvConvScalar writes for each pair at d[6q:6q+6], and no other byte (tighter than yuvConvPairs'
// contract). false when it cannot run (no NEON; packed rows paired, which no plan asks for).
// Twin: yuvConvScalar per pair; proved by TestYUVPairsNEONEqualsScalar and TestYUVConvPairsEqualsScalar.
// Why: gathering through memory (yuvConvPairs' chunks) stores and reloads every sample.
func (k *kernelSet) yuvConvPairsVector(d0, d1, ys0, ys1, us, vs []uint8, ps []int32, yp *yuvPlan) bool {
	if !k.NEON || len(ps) == 0 || d1 != nil && yp.kind == yuvPacked {
		return false
	}
	yStep, cStep := yp.yStep, yp.cStep
	last := int(ps[len(ps)-1])
	if ps[0] < 0 {
		panic("yuvConvPairs: negative pair index")
	}
	// bounds of every load and store (ps ascends: its last pair is the furthest; the loads are the
	// pairs' samples, the stores their 6 bytes)
	_, _, _, _ = d0[6*last+5], ys0[(2*last+1)*yStep], us[last*cStep], vs[last*cStep]
	var dp1, yq1 unsafe.Pointer
	if d1 != nil {
		_, _ = d1[6*last+5], ys1[(2*last+1)*yStep]
		dp1, yq1 = unsafe.Pointer(unsafe.SliceData(d1)), unsafe.Pointer(unsafe.SliceData(ys1))
	}
	var pad [8]int32
	if len(ps) < 8 {
		n := copy(pad[:], ps)
		for i := n; i < 8; i++ {
			pad[i] = int32(last)
		}
		ps = pad[:]
	}
	mode, up, vp, yAdj, kc, ymin := yuvNEONArgs(yp, us, vs)
	yq0 := unsafe.Add(unsafe.Pointer(unsafe.SliceData(ys0)), yAdj)
	yuvNEON(unsafe.Pointer(unsafe.SliceData(d0)), dp1, yq0, yq1, up, vp, &ps[0], 0, len(ps), mode, &kc, int(ymin))
	return true
}
