package codec

// orientCopy writes src (sh x sw x ch, tightly packed), turned by EXIF orientation o (2..8), into dst
// (row stride `stride`): the transposition Pillow's ImageOps.exif_transpose makes (2 FLIP_LEFT_RIGHT,
// 3 ROTATE_180, 4 FLIP_TOP_BOTTOM, 5 TRANSPOSE, 6 ROTATE_270, 7 TRANSVERSE, 8 ROTATE_90).
func orientCopy(dst []byte, stride int, src []byte, sh, sw, ch, o int) {
	oh, ow := sh, sw
	if o >= 5 {
		oh, ow = sw, sh
	}
	for y := 0; y < oh; y++ {
		row := dst[y*stride : y*stride+ow*ch]
		for x := 0; x < ow; x++ {
			var sy, sx int
			switch o {
			case 2:
				sy, sx = y, sw-1-x
			case 3:
				sy, sx = sh-1-y, sw-1-x
			case 4:
				sy, sx = sh-1-y, x
			case 5:
				sy, sx = x, y
			case 6:
				sy, sx = sh-1-x, y
			case 7:
				sy, sx = sh-1-x, sw-1-y
			case 8:
				sy, sx = x, sw-1-y
			default:
				sy, sx = y, x
			}
			copy(row[x*ch:x*ch+ch], src[(sy*sw+sx)*ch:])
		}
	}
}
