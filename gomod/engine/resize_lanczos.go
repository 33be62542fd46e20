package engine

import "math"

// Lanczos tables. "lanczos" is Pillow's LANCZOS: its antialiased convolution (pillowTaps, the support
// widened by the downscale factor) with the Lanczos-3 window, on Pillow's arithmetic (kPillow: 22-bit
// weights, uint8 between the passes, vertical-first where Pillow is). It has no other form: a spec
// with kind lanczos always has Antialias (spec.go). With TorchU8 the weights are rounded to PyTorch's
// int16 precision (torchU8Taps), what interpolate(mode="lanczos", antialias=True) computes on uint8
// tensors (torchvision >= 0.27's LANCZOS); float32 images take the float64 weights as float32, as
// every kPillow float resize does.

// lanczosSupport is Pillow's LANCZOS support: three lobes either side.
const lanczosSupport = 3

// lanczosFilter is Pillow's lanczos_filter: sinc(x) * sinc(x/3) on [-3, 3), 0 outside, with
// sinc(x) = sin(pi*x) / (pi*x) and sinc(0) = 1, in float64 as Pillow's C computes it (each product
// rounded on its own: no fused multiply-add).
func lanczosFilter(x float64) float64 {
	if -lanczosSupport <= x && x < lanczosSupport {
		return float64(sincFilter(x) * sincFilter(x/lanczosSupport))
	}
	return 0
}

// sincFilter is Pillow's sinc_filter: sin(pi*x) / (pi*x), 1 at 0.
func sincFilter(x float64) float64 {
	if x == 0 {
		return 1
	}
	x = float64(x * math.Pi)
	return math.Sin(x) / x
}
