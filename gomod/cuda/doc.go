// Package cuda is goprep's CUDA backend. It links gorgonia.org/cu (CUDA
// driver API) and github.com/NVIDIA/go-nvml through generated lazy-loading
// shims (shim_cuda.c, shim_nvml.c; see tools/genshim and scripts/gen_shim.sh),
// so that a binary or Python extension built with it has no load-time
// dependency on libcuda.so.1 or libnvidia-ml.so.1 and still loads, with
// RTLD_NOW, on machines without the NVIDIA driver.
//
// Everything but this file is compiled only with the `cuda` build tag; the
// default build does not need cuda.h. See driver.go for the environment a
// `-tags cuda` build needs.
package cuda
