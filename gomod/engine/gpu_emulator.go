package engine

import "unsafe"

// emulateLaunch executes kernels/preprocess.cu's kernels in Go, one output pixel at a time, reading the
// encoded descriptors and tables through raw addresses exactly as a GPU thread does. It is the "device"
// of the simulated GPU (gpu_sim.go): on machines without a GPU it tests the descriptor encoding, the
// table semantics and the kernel's arithmetic, line for line, against the CPU engine.
func emulateLaunch(kernel string, descs uint64, n int) {
	for img := 0; img < n; img++ {
		d := (*gpImage)(ptr(descs + uint64(img*GPUImageBytes)))
		for y := 0; y < int(d.OutH); y++ {
			for x := 0; x < int(d.OutW); x++ {
				emulatePixel(kernel, d, y, x)
			}
		}
	}
}

func ptr(a uint64) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&a)) }

func ldI64(a uint64, i int) int64   { return *(*int64)(ptr(a + uint64(8*i))) }
func ldI32(a uint64, i int) int32   { return *(*int32)(ptr(a + uint64(4*i))) }
func ldF32(a uint64, i int) float32 { return *(*float32)(ptr(a + uint64(4*i))) }

func emulatePixel(kernel string, d *gpImage, y, x int) {
	content := y >= int(d.Rows.Lo) && y < int(d.Rows.Hi) && x >= int(d.Cols.Lo) && x < int(d.Cols.Hi)
	r, j := y-int(d.Rows.Lo), x-int(d.Cols.Lo)
	for c := 0; c < int(d.OutC); c++ {
		ch := int64(d.CMap[c]) * d.StrideC
		i := emuOutIndex(d, y, x, c)
		if kernel == "goprep_preprocess_u8" {
			v := d.PadU8
			if content {
				switch d.Mode {
				case gpModeBilinear:
					v = emuBilinearU8(d, r, j, ch)
				case gpModeAntialias:
					v = emuAntialiasU8(d, r, j, ch)
				default:
					v = emuSrcU8(d, ldI64(d.Rows.Off, r)+ldI64(d.Cols.Off, j)+ch)
				}
			}
			switch {
			case d.Norm == 0:
				*(*uint8)(ptr(d.Out + uint64(i))) = uint8(v)
			case d.OutDType == gpOutF16:
				*(*uint16)(ptr(d.Out + uint64(2*i))) = *(*uint16)(ptr(d.LUT16 + uint64(2*(c*256+int(v)))))
			default:
				*(*float32)(ptr(d.Out + uint64(4*i))) = ldF32(d.LUT, c*256+int(v))
			}
			continue
		}
		v := d.PadF32
		if content {
			switch d.Mode {
			case gpModeBilinear:
				v = emuBilinearF32(d, r, j, ch)
			case gpModeAntialias:
				v = emuTapsF32(d, r, j, ch)
			default:
				v = emuSrcF32(d, ldI64(d.Rows.Off, r)+ldI64(d.Cols.Off, j)+ch)
			}
		}
		switch {
		case d.Norm == 0:
			*(*float32)(ptr(d.Out + uint64(4*i))) = v
		default:
			nv := float32(float32(v*d.Scale)-d.Mean[c]) / d.Std[c]
			if d.OutDType == gpOutF16 {
				*(*uint16)(ptr(d.Out + uint64(2*i))) = Float32ToFloat16(nv)
			} else {
				*(*float32)(ptr(d.Out + uint64(4*i))) = nv
			}
		}
	}
}

func emuOutIndex(d *gpImage, y, x, c int) int {
	if d.CHW != 0 {
		return (c*int(d.OutH)+y)*int(d.OutW) + x
	}
	return (y*int(d.OutW)+x)*int(d.OutC) + c
}

func emuSrcU8(d *gpImage, off int64) int32 { return int32(*(*uint8)(ptr(d.Src + uint64(off)))) }
func emuSrcF32(d *gpImage, off int64) float32 {
	return *(*float32)(ptr(d.Src + uint64(4*off)))
}

func emuBilinearU8(d *gpImage, r, j int, ch int64) int32 {
	c0, c1 := ldI64(d.Cols.Off, 2*j)+ch, ldI64(d.Cols.Off, 2*j+1)+ch
	a0, a1 := ldI32(d.Cols.WI, 2*j), ldI32(d.Cols.WI, 2*j+1)
	r0, r1 := ldI64(d.Rows.Off, 2*r), ldI64(d.Rows.Off, 2*r+1)
	h0 := emuSrcU8(d, r0+c0)*a0 + emuSrcU8(d, r0+c1)*a1
	h1 := emuSrcU8(d, r1+c0)*a0 + emuSrcU8(d, r1+c1)*a1
	b0, b1 := ldI32(d.Rows.WI, 2*r), ldI32(d.Rows.WI, 2*r+1)
	return ((b0*(h0>>4))>>16 + (b1*(h1>>4))>>16 + 2) >> 2
}

func emuAntialiasU8(d *gpImage, r, j int, ch int64) int32 {
	kr, kc := int(d.Rows.K), int(d.Cols.K)
	nr, nc := int(ldI32(d.Rows.Cnt, r)), int(ldI32(d.Cols.Cnt, j))
	acc := int32(1 << (pilPrecisionBits - 1))
	for t := 0; t < nr; t++ {
		row := ldI64(d.Rows.Off, r*kr+t) + ch
		s := int32(1 << (pilPrecisionBits - 1))
		for u := 0; u < nc; u++ {
			s += emuSrcU8(d, row+ldI64(d.Cols.Off, j*kc+u)) * ldI32(d.Cols.WI, j*kc+u)
		}
		acc += int32(clampU8(s>>pilPrecisionBits)) * ldI32(d.Rows.WI, r*kr+t)
	}
	return int32(clampU8(acc >> pilPrecisionBits))
}

func emuLerp(a, b, w float32) float32 { return a + float32(w*float32(b-a)) }

func emuBilinearF32(d *gpImage, r, j int, ch int64) float32 {
	c0, c1 := ldI64(d.Cols.Off, 2*j)+ch, ldI64(d.Cols.Off, 2*j+1)+ch
	wc, wr := ldF32(d.Cols.WF, 2*j+1), ldF32(d.Rows.WF, 2*r+1)
	r0, r1 := ldI64(d.Rows.Off, 2*r), ldI64(d.Rows.Off, 2*r+1)
	h0 := emuLerp(emuSrcF32(d, r0+c0), emuSrcF32(d, r0+c1), wc)
	h1 := emuLerp(emuSrcF32(d, r1+c0), emuSrcF32(d, r1+c1), wc)
	return emuLerp(h0, h1, wr)
}

func emuTapsF32(d *gpImage, r, j int, ch int64) float32 {
	kr, kc := int(d.Rows.K), int(d.Cols.K)
	var acc float32
	for t := 0; t < kr; t++ {
		row := ldI64(d.Rows.Off, r*kr+t) + ch
		var s float32
		for u := 0; u < kc; u++ {
			s = s + float32(ldF32(d.Cols.WF, j*kc+u)*emuSrcF32(d, row+ldI64(d.Cols.Off, j*kc+u)))
		}
		acc = acc + float32(ldF32(d.Rows.WF, r*kr+t)*s)
	}
	return acc
}
