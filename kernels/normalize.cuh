// normalize.cuh: output conversion of the fused kernel (gomod/engine/normalize.go, normalize_cpu.go).
// uint8 sources read the planner's per-channel tables, so GPU and CPU return the same bits; float32
// sources compute (x*scale - mean)/std with each step rounded as NumPy's float32 arithmetic does.
#ifndef GOPREP_NORMALIZE_CUH
#define GOPREP_NORMALIZE_CUH
#include "goprep.h"

#ifdef GOPREP_CPU_KERNELS
#define gp_cvt_rn_f16 gp_cpu_cvt_rn_f16 // kernels/cpu/cuda_cpu.h: the same IEEE conversion on the CPU
#else
__device__ __forceinline__ unsigned short gp_cvt_rn_f16(float x) {
    unsigned short h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(x));
    return h;
}
#endif

// Round to nearest even, overflow to infinity, subnormals kept: NumPy's float32 -> float16 cast
// (Float32ToFloat16 in normalize.go). NaNs are made quiet the same way as there.
__device__ __forceinline__ unsigned short gp_f16(float x) {
    unsigned int b = __float_as_uint(x);
    if ((b & 0x7f800000u) == 0x7f800000u && (b & 0x7fffffu) != 0) {
        return (unsigned short)(((b >> 16) & 0x8000u) | 0x7e00u | ((b & 0x7fffffu) >> 13));
    }
    return gp_cvt_rn_f16(x);
}

__device__ __forceinline__ float gp_norm(const gp_image& im, int c, float x) {
    return __fdiv_rn(__fsub_rn(__fmul_rn(x, im.scale), im.mean[c]), im.std[c]);
}

// Output element i of channel c from its value: a uint8 value as is, or through the planner's
// per-channel normalisation tables (so GPU and CPU return the same bits), ...
__device__ __forceinline__ void gp_put(const gp_image& im, long long i, int c, int v) {
    if (!im.norm) {
        ((unsigned char*)im.out)[i] = (unsigned char)v;
    } else if (im.out_dtype == GP_OUT_F16) {
        ((unsigned short*)im.out)[i] = ((const unsigned short*)im.lut16)[c * 256 + v];
    } else {
        ((float*)im.out)[i] = ((const float*)im.lut)[c * 256 + v];
    }
}

// ... and a float32 value as is, or normalised in float32 (then cast to float16 where asked).
__device__ __forceinline__ void gp_put(const gp_image& im, long long i, int c, float v) {
    if (!im.norm) {
        ((float*)im.out)[i] = v;
    } else if (im.out_dtype == GP_OUT_F16) {
        ((unsigned short*)im.out)[i] = gp_f16(gp_norm(im, c, v));
    } else {
        ((float*)im.out)[i] = gp_norm(im, c, v);
    }
}

// Stores the C channels of output pixel (y, x), one loop for both value types (int for uint8
// sources, float for float32). Planar (CHW) output puts neighbouring threads (x) on neighbouring
// addresses of each plane; interleaved (HWC) output on one contiguous run per warp.
template <int C, typename V>
__device__ __forceinline__ void gp_store(const gp_image& im, int y, int x, const V* v) {
    const long long hw = (long long)im.out_h * im.out_w;
    const long long px = (long long)y * im.out_w + x;
#pragma unroll
    for (int c = 0; c < C; c++) {
        gp_put(im, im.chw ? c * hw + px : px * C + c, c, v[c]);
    }
}

#endif
