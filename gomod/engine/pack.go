package engine

import "encoding/binary"

// Packing 4-byte pixels into 3-byte ones: Pillow keeps an "RGB" image as RGBX (4 bytes a pixel, the
// fourth unused), and the fused uint8 kernels read packed 3-byte pixels. Pillow's own packing
// (np.asarray, through tobytes) took 2.4-2.9 ms of a 1080p pipeline call (docs/perf/2026-12-07-pil-pack.md);
// this one reads the image's memory in place (Python: _inputs.pil_as_hwc) and packs it at memory speed.

// PackRGBXRow writes the len(src)/4 pixels of src (R, G, B, X: X ignored) to dst as R, G, B bytes,
// with the process's kernels (pack_amd64.go's AVX2 loop, else packRGBXScalar).
// Invariant: len(dst) >= 3*(len(src)/4); it writes exactly dst[:3*(len(src)/4)].
func PackRGBXRow(dst, src []byte) {
	k := currentKernels()
	k.packRGBX(dst, src)
}

// packRGBXScalar is PackRGBXRow in pure Go, the twin every SIMD loop equals.
// Why eight pixels a step: four 8-byte loads and three 8-byte stores, no byte loop.
func packRGBXScalar(dst, src []byte) {
	w := len(src) / 4
	_ = dst[:3*w] // one bounds check for the row
	const m = 0xFFFFFF
	le := binary.LittleEndian
	i := 0
	for ; i+8 <= w; i += 8 {
		s := src[4*i : 4*i+32 : 4*i+32]
		a, b, c, d := le.Uint64(s[0:]), le.Uint64(s[8:]), le.Uint64(s[16:]), le.Uint64(s[24:])
		p0, p1, p2, p3 := a&m, a>>32&m, b&m, b>>32&m
		p4, p5, p6, p7 := c&m, c>>32&m, d&m, d>>32&m
		o := dst[3*i : 3*i+24 : 3*i+24]
		le.PutUint64(o[0:], p0|p1<<24|p2<<48)
		le.PutUint64(o[8:], p2>>16|p3<<8|p4<<32|p5<<56)
		le.PutUint64(o[16:], p5>>8|p6<<16|p7<<40)
	}
	for ; i < w; i++ {
		dst[3*i], dst[3*i+1], dst[3*i+2] = src[4*i], src[4*i+1], src[4*i+2]
	}
}
