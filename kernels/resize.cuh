// resize.cuh: the resize arithmetic of the fused kernel, one function per mode, each a step-for-step
// copy of the Go CPU engine (gomod/engine/resize_cpu.go), which is the golden reference. The tables
// (offsets, fixed-point and float weights) come from the Go planner, so only the arithmetic lives here.
#ifndef GOPREP_RESIZE_CUH
#define GOPREP_RESIZE_CUH
#include "goprep.h"

#define GP_PIL_BITS 22 // Pillow's PRECISION_BITS (resize.go: pilPrecisionBits)

__device__ __forceinline__ const long long* gp_off(const gp_axis& a) { return (const long long*)a.off; }
__device__ __forceinline__ const int* gp_wi(const gp_axis& a) { return (const int*)a.wi; }
__device__ __forceinline__ const float* gp_wf(const gp_axis& a) { return (const float*)a.wf; }
__device__ __forceinline__ const int* gp_cnt(const gp_axis& a) { return (const int*)a.cnt; }

__device__ __forceinline__ int gp_clamp_u8(int v) { return v < 0 ? 0 : (v > 255 ? 255 : v); }

// uint8 bilinear: OpenCV's HResizeLinear (11-bit coefficients, unrounded sums) and its vectorised
// VResizeLinear (each row pre-shifted by 4, high 16 bits of each product, rounded by 2 bits): vlinear
// and hresizeLinearU8 in resize_cpu.go.
__device__ __forceinline__ int gp_bilinear_u8(const unsigned char* src, const gp_image& im, int r, int j, long long ch) {
    const long long* ro = gp_off(im.rows);
    const long long* co = gp_off(im.cols);
    const int* rw = gp_wi(im.rows);
    const int* cw = gp_wi(im.cols);
    long long c0 = co[2 * j] + ch, c1 = co[2 * j + 1] + ch;
    int a0 = cw[2 * j], a1 = cw[2 * j + 1];
    const unsigned char* p0 = src + ro[2 * r];
    const unsigned char* p1 = src + ro[2 * r + 1];
    int h0 = (int)p0[c0] * a0 + (int)p0[c1] * a1;
    int h1 = (int)p1[c0] * a0 + (int)p1[c1] * a1;
    int b0 = rw[2 * r], b1 = rw[2 * r + 1];
    return (((b0 * (h0 >> 4)) >> 16) + ((b1 * (h1 >> 4)) >> 16) + 2) >> 2;
}

// uint8 antialias: Pillow's two passes (ImagingResampleHorizontal_8bpc, then Vertical) with 22-bit
// weights and the uint8 rounding between the passes (hresizeAAU8, vresizeAAU8). Only live taps count.
__device__ __forceinline__ int gp_antialias_u8(const unsigned char* src, const gp_image& im, int r, int j, long long ch) {
    const long long* ro = gp_off(im.rows);
    const long long* co = gp_off(im.cols);
    const int* rw = gp_wi(im.rows);
    const int* cw = gp_wi(im.cols);
    int kr = im.rows.k, kc = im.cols.k;
    int nr = gp_cnt(im.rows)[r], nc = gp_cnt(im.cols)[j];
    int acc = 1 << (GP_PIL_BITS - 1);
    for (int t = 0; t < nr; t++) {
        const unsigned char* row = src + ro[r * kr + t] + ch;
        int s = 1 << (GP_PIL_BITS - 1);
        for (int u = 0; u < nc; u++) {
            s += (int)row[co[j * kc + u]] * cw[j * kc + u];
        }
        acc += gp_clamp_u8(s >> GP_PIL_BITS) * rw[r * kr + t];
    }
    return gp_clamp_u8(acc >> GP_PIL_BITS);
}

// float32 bilinear in lerp form, a + w1*(b - a), horizontal then vertical, every step rounded on its
// own (__f*_rn never contract into an FMA), as hlerpF32 and resizeRowF32 do.
__device__ __forceinline__ float gp_lerp(float a, float b, float w) { return __fadd_rn(a, __fmul_rn(w, __fsub_rn(b, a))); }

__device__ __forceinline__ float gp_bilinear_f32(const float* src, const gp_image& im, int r, int j, long long ch) {
    const long long* ro = gp_off(im.rows);
    const long long* co = gp_off(im.cols);
    float wc = gp_wf(im.cols)[2 * j + 1], wr = gp_wf(im.rows)[2 * r + 1];
    long long c0 = co[2 * j] + ch, c1 = co[2 * j + 1] + ch;
    const float* p0 = src + ro[2 * r];
    const float* p1 = src + ro[2 * r + 1];
    float h0 = gp_lerp(p0[c0], p0[c1], wc);
    float h1 = gp_lerp(p1[c0], p1[c1], wc);
    return gp_lerp(h0, h1, wr);
}

// float32 with K taps (antialias): weighted sums in tap order, horizontal first, each product and sum
// rounded separately (hresizeF32 and the generic loop of resizeRowF32; all K taps, as the CPU does).
__device__ __forceinline__ float gp_taps_f32(const float* src, const gp_image& im, int r, int j, long long ch) {
    const long long* ro = gp_off(im.rows);
    const long long* co = gp_off(im.cols);
    const float* rw = gp_wf(im.rows);
    const float* cw = gp_wf(im.cols);
    int kr = im.rows.k, kc = im.cols.k;
    float acc = 0.0f;
    for (int t = 0; t < kr; t++) {
        const float* row = src + ro[r * kr + t] + ch;
        float s = 0.0f;
        for (int u = 0; u < kc; u++) {
            s = __fadd_rn(s, __fmul_rn(cw[j * kc + u], row[co[j * kc + u]]));
        }
        acc = __fadd_rn(acc, __fmul_rn(rw[r * kr + t], s));
    }
    return acc;
}

#endif
