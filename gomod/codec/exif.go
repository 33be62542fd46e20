package codec

import "encoding/binary"

// jpegOrientation is the EXIF orientation (1..8) of a JPEG: the Orientation tag (0x0112) of IFD0 in
// the first APP1 "Exif\0\0" segment before the first SOS, as Pillow's getexif() reads it; 1 when
// absent, malformed or out of range. Every read is bounds-checked (FuzzOrientation).
func jpegOrientation(data []byte) int {
	i := 2
	for i+4 <= len(data) {
		if data[i] != 0xFF {
			return 1
		}
		m := data[i+1]
		if m == 0xFF { // fill byte
			i++
			continue
		}
		if m == 0xD8 || m == 0x01 || (m >= 0xD0 && m <= 0xD7) { // no length
			i += 2
			continue
		}
		if m == 0xDA || m == 0xD9 {
			return 1
		}
		n := int(binary.BigEndian.Uint16(data[i+2:]))
		if n < 2 || i+2+n > len(data) {
			return 1
		}
		seg := data[i+4 : i+2+n]
		if m == 0xE1 && len(seg) >= 6 && string(seg[:6]) == "Exif\x00\x00" {
			return tiffOrientation(seg[6:])
		}
		i += 2 + n
	}
	return 1
}

// tiffOrientation reads tag 0x0112 of IFD0 of a TIFF structure (EXIF's payload).
func tiffOrientation(t []byte) int {
	if len(t) < 8 {
		return 1
	}
	var bo binary.ByteOrder
	switch string(t[:4]) {
	case "II*\x00":
		bo = binary.LittleEndian
	case "MM\x00*":
		bo = binary.BigEndian
	default:
		return 1
	}
	off := uint64(bo.Uint32(t[4:]))
	if off+2 > uint64(len(t)) {
		return 1
	}
	count := int(bo.Uint16(t[off:]))
	for k := 0; k < count; k++ {
		e := off + 2 + uint64(k)*12
		if e+12 > uint64(len(t)) {
			return 1
		}
		if bo.Uint16(t[e:]) != 0x0112 {
			continue
		}
		typ, n := bo.Uint16(t[e+2:]), bo.Uint32(t[e+4:])
		if n != 1 {
			return 1
		}
		var v int
		switch typ {
		case 1, 6: // BYTE, SBYTE
			v = int(t[e+8])
		case 3, 8: // SHORT, SSHORT
			v = int(bo.Uint16(t[e+8:]))
		case 4, 9: // LONG, SLONG
			v = int(bo.Uint32(t[e+8:]))
		default:
			return 1
		}
		if v < 1 || v > 8 {
			return 1
		}
		return v
	}
	return 1
}
