package engine

import "math"

// gatherKind reports whether a resize kind copies one source pixel per output pixel (kGather): no
// resize, and the nearest-neighbour rules.
func gatherKind(kind string) bool {
	return kind == "none" || kind == "nearest" || kind == "nearest-exact" || kind == "nearest-pil" || kind == "nearest-torch"
}

// nearestTorchTaps is PyTorch's legacy nearest (nearest_idx in UpSampleKernel.cpp, torchvision's
// NEAREST on tensors): a copy for equal sizes, dst >> 1 for exactly twice the size, else
// min(floorf(dst * scale), in - 1) with scale = (float)in / out and the product in float32. Where
// dst * in / out is an integer the float32 product can land just below it, so about 6% of size
// pairs pick another pixel than cv2's nearest (float64) somewhere; PyTorch's float and uint8
// kernels share the rule.
func nearestTorchTaps(in, out int) taps {
	t := taps{K: 1, Idx: make([]int32, out), WI: make([]int32, out), WF: make([]float32, out)}
	scale := float32(in) / float32(out)
	for o := 0; o < out; o++ {
		s := o
		switch {
		case out == 2*in:
			s = o >> 1
		case out != in:
			s = min(int(math.Floor(float64(float32(float32(o)*scale)))), in-1)
		}
		t.Idx[o], t.WI[o], t.WF[o] = int32(s), 1, 1
	}
	return t
}

// The two "pixel-centre" nearest-neighbour rules. Both pick src = floor((dst + 0.5) * in/out), clamped
// to the last pixel, but they round differently where that product is (nearly) an integer, so they are
// separate kinds: on 512 -> 224, 25 of the 224 columns differ between PIL and PyTorch.

// nearestExactTaps is PyTorch's nearest-exact (nearest_neighbor_exact_compute_source_index):
// floorf((dst + 0.5) * scale) with scale = (float)in / out in float32 and the product in float64,
// rounded to float32 before the floor (floorf takes a float). Checked against torch 2.x for every
// size pair up to 300 x 300: identical except 32 pairs, all tiny inputs (<= 14 px) upscaled more than
// 10x, where an exact tie rounds the other way (see tests/test_resize_modes.py).
func nearestExactTaps(in, out int) taps {
	t := taps{K: 1, Idx: make([]int32, out), WI: make([]int32, out), WF: make([]float32, out)}
	scale := float32(in) / float32(out)
	for o := 0; o < out; o++ {
		v := float32((float64(o) + 0.5) * float64(scale))
		s := min(int(math.Floor(float64(v))), in-1)
		t.Idx[o], t.WI[o], t.WF[o] = int32(s), 1, 1
	}
	return t
}

// nearestPILTaps is Pillow's NEAREST resize (ImagingScaleAffine): the source coordinate starts at
// scale/2 and is advanced by repeated float64 addition of scale = in/out, then truncated. The
// accumulated rounding is part of the contract: it is what makes PIL differ from PyTorch on ties.
func nearestPILTaps(in, out int) taps {
	t := taps{K: 1, Idx: make([]int32, out), WI: make([]int32, out), WF: make([]float32, out)}
	a := float64(in) / float64(out)
	xo := a * 0.5
	for o := 0; o < out; o++ {
		s := 0
		if xo >= 0 {
			s = int(xo)
		}
		t.Idx[o], t.WI[o], t.WF[o] = int32(min(s, in-1)), 1, 1
		xo += a
	}
	return t
}
