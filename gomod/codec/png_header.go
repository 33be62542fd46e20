package codec

import "encoding/binary"

// probePNG reads IHDR and walks the chunk list (lengths only) for tRNS and eXIf, in Go: no libpng,
// no allocation.
func probePNG(data []byte) (Header, error) {
	if len(data) < 33 {
		return Header{}, decodeErr("truncated PNG: %d bytes, shorter than a PNG header", len(data))
	}
	if string(data[12:16]) != "IHDR" || binary.BigEndian.Uint32(data[8:]) != 13 {
		return Header{}, decodeErr("corrupt PNG: the first chunk is not a 13-byte IHDR")
	}
	w, ht := binary.BigEndian.Uint32(data[16:]), binary.BigEndian.Uint32(data[20:])
	depth, ct := int(data[24]), int(data[25])
	if w == 0 || ht == 0 || w > 1<<31-1 || ht > 1<<31-1 {
		return Header{}, decodeErr("corrupt PNG: size %dx%d", w, ht)
	}
	comps := map[int]int{0: 1, 2: 3, 3: 3, 4: 2, 6: 4}[ct]
	okDepth := map[int][]int{0: {1, 2, 4, 8, 16}, 2: {8, 16}, 3: {1, 2, 4, 8}, 4: {8, 16}, 6: {8, 16}}[ct]
	valid := false
	for _, d := range okDepth {
		valid = valid || d == depth
	}
	if comps == 0 || !valid {
		return Header{}, decodeErr("corrupt PNG: color type %d with bit depth %d", ct, depth)
	}
	h := Header{Format: PNG, Height: int(ht), Width: int(w), Components: comps, BitDepth: max(depth, 8), Orientation: 1}
	if depth == 16 {
		h.BitDepth = 16
	}
	for i := 8; i+8 <= len(data); {
		n := uint64(binary.BigEndian.Uint32(data[i:]))
		typ := string(data[i+4 : i+8])
		end := uint64(i) + 12 + n
		if typ == "tRNS" && ct == 3 {
			h.Components = 4
		}
		if typ == "eXIf" && end <= uint64(len(data)) && h.Orientation == 1 {
			h.Orientation = tiffOrientation(data[i+8 : i+8+int(n)])
		}
		if typ == "IEND" || end > uint64(len(data)) {
			break
		}
		i = int(end)
	}
	return h, nil
}
