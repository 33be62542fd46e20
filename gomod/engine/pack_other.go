//go:build !(goexperiment.simd && amd64)

package engine

// The pure-Go twin of pack_amd64.go: every row packed by packRGBXScalar (arm64 included: no NEON
// loop was written; the scalar step there is measured nowhere, as no arm64 hardware is available).

// packRGBX is packRGBXScalar.
func (k *kernelSet) packRGBX(dst, src []byte) { packRGBXScalar(dst, src) }
