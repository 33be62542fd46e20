// normalize.cuh: output conversion of the fused kernel (gomod/engine/normalize.go, normalize_cpu.go).
// uint8 sources read the planner's per-channel tables, so GPU and CPU return the same bits; float32
// sources compute (x*scale - mean)/std with each step rounded as NumPy's float32 arithmetic does.
#ifndef GOPREP_NORMALIZE_CUH
#define GOPREP_NORMALIZE_CUH
#include "goprep.h"

// Round to nearest even, overflow to infinity, subnormals kept: NumPy's float32 -> float16 cast
// (Float32ToFloat16 in normalize.go). NaNs are made quiet the same way as there.
__device__ __forceinline__ unsigned short gp_f16(float x) {
    unsigned int b = __float_as_uint(x);
    if ((b & 0x7f800000u) == 0x7f800000u && (b & 0x7fffffu) != 0) {
        return (unsigned short)(((b >> 16) & 0x8000u) | 0x7e00u | ((b & 0x7fffffu) >> 13));
    }
    unsigned short h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(x));
    return h;
}

__device__ __forceinline__ float gp_norm(const gp_image& im, int c, float x) {
    return __fdiv_rn(__fsub_rn(__fmul_rn(x, im.scale), im.mean[c]), im.std[c]);
}

// Output element index of (y, x, c) in the image's layout.
__device__ __forceinline__ long long gp_out_index(const gp_image& im, int y, int x, int c) {
    if (im.chw) {
        return ((long long)c * im.out_h + y) * im.out_w + x;
    }
    return ((long long)y * im.out_w + x) * im.out_c + c;
}

__device__ __forceinline__ void gp_store_u8(const gp_image& im, long long i, int c, int v) {
    if (!im.norm) {
        ((unsigned char*)im.out)[i] = (unsigned char)v;
    } else if (im.out_dtype == GP_OUT_F16) {
        ((unsigned short*)im.out)[i] = ((const unsigned short*)im.lut16)[c * 256 + v];
    } else {
        ((float*)im.out)[i] = ((const float*)im.lut)[c * 256 + v];
    }
}

__device__ __forceinline__ void gp_store_f32(const gp_image& im, long long i, int c, float v) {
    if (!im.norm) {
        ((float*)im.out)[i] = v;
        return;
    }
    float y = gp_norm(im, c, v);
    if (im.out_dtype == GP_OUT_F16) {
        ((unsigned short*)im.out)[i] = gp_f16(y);
    } else {
        ((float*)im.out)[i] = y;
    }
}

#endif
