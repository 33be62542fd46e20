// resize.cuh: the resize arithmetic of the fused kernel, one function per mode, each a step-for-step
// copy of the Go CPU engine (gomod/engine/resize_cpu.go), which is the golden reference. The tables
// (offsets, fixed-point and float weights) come from the Go planner, so only the arithmetic lives here.
//
// Speed: every function computes all C output channels of one pixel at once. The taps of a pixel (row
// and column offsets and weights) are loaded once, outside the channel loop, as one vector load per
// axis for the two-tap modes (a pair of int64 offsets is one 16-byte load; neighbouring threads read
// neighbouring pairs, so a warp's table loads coalesce). C is a template parameter, so the channel
// loops unroll and the per-channel values stay in registers (no local memory: ptxas reports a 0-byte
// stack frame, checked by scripts/check_ptx.py).
#ifndef GOPREP_RESIZE_CUH
#define GOPREP_RESIZE_CUH
#include "goprep.h"

#define GP_PIL_BITS 22 // Pillow's PRECISION_BITS (resize.go: pilPrecisionBits)

__device__ __forceinline__ const long long* gp_off(const gp_axis& a) { return (const long long*)a.off; }
__device__ __forceinline__ const int* gp_wi(const gp_axis& a) { return (const int*)a.wi; }
__device__ __forceinline__ const float* gp_wf(const gp_axis& a) { return (const float*)a.wf; }
__device__ __forceinline__ const int* gp_cnt(const gp_axis& a) { return (const int*)a.cnt; }

__device__ __forceinline__ int gp_clamp_u8(int v) { return v < 0 ? 0 : (v > 255 ? 255 : v); }

// The two taps of coordinate i of a two-tap axis: offsets and weights, one vector load each.
__device__ __forceinline__ longlong2 gp_off2(const gp_axis& a, int i) { return ((const longlong2*)a.off)[i]; }
__device__ __forceinline__ int2 gp_wi2(const gp_axis& a, int i) { return ((const int2*)a.wi)[i]; }
__device__ __forceinline__ float2 gp_wf2(const gp_axis& a, int i) { return ((const float2*)a.wf)[i]; }

// No resize or nearest: one tap per axis.
template <typename S, int C, typename V>
__device__ __forceinline__ void gp_gather(const S* __restrict__ src, const gp_image& im, int r, int j, const long long* ch, V* v) {
    const S* p = src + gp_off(im.rows)[r] + gp_off(im.cols)[j];
#pragma unroll
    for (int c = 0; c < C; c++) {
        v[c] = p[ch[c]];
    }
}

// uint8 bilinear: OpenCV's HResizeLinear (11-bit coefficients, unrounded sums) and its vectorised
// VResizeLinear (each row pre-shifted by 4, high 16 bits of each product, rounded by 2 bits): vlinear
// and hresizeLinearU8 in resize_cpu.go.
template <int C>
__device__ __forceinline__ void gp_bilinear_u8(const unsigned char* __restrict__ src, const gp_image& im, int r, int j, const long long* ch, int* v) {
    const longlong2 co = gp_off2(im.cols, j), ro = gp_off2(im.rows, r);
    const int2 a = gp_wi2(im.cols, j), b = gp_wi2(im.rows, r);
    const unsigned char* p0 = src + ro.x;
    const unsigned char* p1 = src + ro.y;
#pragma unroll
    for (int c = 0; c < C; c++) {
        long long c0 = co.x + ch[c], c1 = co.y + ch[c];
        int h0 = (int)p0[c0] * a.x + (int)p0[c1] * a.y;
        int h1 = (int)p1[c0] * a.x + (int)p1[c1] * a.y;
        v[c] = (((b.x * (h0 >> 4)) >> 16) + ((b.y * (h1 >> 4)) >> 16) + 2) >> 2;
    }
}

// uint8 antialias: Pillow's two passes (ImagingResampleHorizontal_8bpc, then Vertical) with 22-bit
// weights and the uint8 rounding between the passes (hresizeAAU8, vresizeAAU8). Only live taps count.
template <int C>
__device__ __forceinline__ void gp_antialias_u8(const unsigned char* __restrict__ src, const gp_image& im, int r, int j, const long long* ch, int* v) {
    const long long* ro = gp_off(im.rows) + (long long)r * im.rows.k;
    const long long* co = gp_off(im.cols) + (long long)j * im.cols.k;
    const int* rw = gp_wi(im.rows) + (long long)r * im.rows.k;
    const int* cw = gp_wi(im.cols) + (long long)j * im.cols.k;
    const int nr = gp_cnt(im.rows)[r], nc = gp_cnt(im.cols)[j];
    int acc[C];
#pragma unroll
    for (int c = 0; c < C; c++) {
        acc[c] = 1 << (GP_PIL_BITS - 1);
    }
    for (int t = 0; t < nr; t++) {
        const unsigned char* row = src + ro[t];
        int s[C];
#pragma unroll
        for (int c = 0; c < C; c++) {
            s[c] = 1 << (GP_PIL_BITS - 1);
        }
        for (int u = 0; u < nc; u++) {
            const unsigned char* px = row + co[u];
            const int w = cw[u];
#pragma unroll
            for (int c = 0; c < C; c++) {
                s[c] += (int)px[ch[c]] * w;
            }
        }
        const int w = rw[t];
#pragma unroll
        for (int c = 0; c < C; c++) {
            acc[c] += gp_clamp_u8(s[c] >> GP_PIL_BITS) * w;
        }
    }
#pragma unroll
    for (int c = 0; c < C; c++) {
        v[c] = gp_clamp_u8(acc[c] >> GP_PIL_BITS);
    }
}

// float32 bilinear in lerp form, a + w1*(b - a), horizontal then vertical, every step rounded on its
// own (__f*_rn never contract into an FMA), as hlerpF32 and resizeRowF32 do.
__device__ __forceinline__ float gp_lerp(float a, float b, float w) { return __fadd_rn(a, __fmul_rn(w, __fsub_rn(b, a))); }

template <int C>
__device__ __forceinline__ void gp_bilinear_f32(const float* __restrict__ src, const gp_image& im, int r, int j, const long long* ch, float* v) {
    const longlong2 co = gp_off2(im.cols, j), ro = gp_off2(im.rows, r);
    const float wc = gp_wf2(im.cols, j).y, wr = gp_wf2(im.rows, r).y;
    const float* p0 = src + ro.x;
    const float* p1 = src + ro.y;
#pragma unroll
    for (int c = 0; c < C; c++) {
        long long c0 = co.x + ch[c], c1 = co.y + ch[c];
        float h0 = gp_lerp(p0[c0], p0[c1], wc);
        float h1 = gp_lerp(p1[c0], p1[c1], wc);
        v[c] = gp_lerp(h0, h1, wr);
    }
}

// float32 with K taps (antialias, bicubic, area): weighted sums in tap order, horizontal first, each
// product and sum rounded separately (hresizeF32 and the generic loop of resizeRowF32; all K taps, as
// the CPU does), then GP_END_SCALE's factor for an integer-factor area plan.
template <int C>
__device__ __forceinline__ void gp_taps_f32(const float* __restrict__ src, const gp_image& im, int r, int j, const long long* ch, float* v) {
    const int kr = im.rows.k, kc = im.cols.k;
    const long long* ro = gp_off(im.rows) + (long long)r * kr;
    const long long* co = gp_off(im.cols) + (long long)j * kc;
    const float* rw = gp_wf(im.rows) + (long long)r * kr;
    const float* cw = gp_wf(im.cols) + (long long)j * kc;
    float acc[C];
#pragma unroll
    for (int c = 0; c < C; c++) {
        acc[c] = 0.0f;
    }
    for (int t = 0; t < kr; t++) {
        const float* row = src + ro[t];
        float s[C];
#pragma unroll
        for (int c = 0; c < C; c++) {
            s[c] = 0.0f;
        }
        for (int u = 0; u < kc; u++) {
            const float* px = row + co[u];
            const float w = cw[u];
#pragma unroll
            for (int c = 0; c < C; c++) {
                s[c] = __fadd_rn(s[c], __fmul_rn(w, px[ch[c]]));
            }
        }
        const float w = rw[t];
#pragma unroll
        for (int c = 0; c < C; c++) {
            acc[c] = __fadd_rn(acc[c], __fmul_rn(w, s[c]));
        }
    }
    const bool scaled = im.end == GP_END_SCALE;
#pragma unroll
    for (int c = 0; c < C; c++) {
        v[c] = scaled ? __fmul_rn(acc[c], im.inv) : acc[c];
    }
}

// OpenCV's saturate_cast<uchar>(float): round half to even, then clamp (roundU8 in resize_cpu.go).
__device__ __forceinline__ int gp_round_u8(float x) {
    if (!(x > -0.5f)) {
        return 0;
    }
    if (x >= 255.0f) {
        return 255;
    }
    return __float2int_rn(x);
}

// The live column taps of one uint8 source row summed in float32 in tap order, the first product
// standing alone (hresizeFloatU8).
template <int C>
__device__ __forceinline__ void gp_hsum_u8(const unsigned char* __restrict__ row, const long long* co, const float* cw, int nc,
                                           const long long* ch, float* s) {
    {
        const unsigned char* px = row + co[0];
        const float w = cw[0];
#pragma unroll
        for (int c = 0; c < C; c++) {
            s[c] = __fmul_rn(w, (float)px[ch[c]]);
        }
    }
    for (int u = 1; u < nc; u++) {
        const unsigned char* px = row + co[u];
        const float w = cw[u];
#pragma unroll
        for (int c = 0; c < C; c++) {
            s[c] = __fadd_rn(s[c], __fmul_rn(w, (float)px[ch[c]]));
        }
    }
}

// uint8 with float weights (cv2 INTER_CUBIC and INTER_AREA; resizeRowFloatU8): per live row tap the
// horizontal float32 sum, accumulated vertically in tap order with the first product standing alone,
// then one rounding to uint8 by the plan's rule (finalU8).
template <int C>
__device__ __forceinline__ void gp_taps_u8(const unsigned char* __restrict__ src, const gp_image& im, int r, int j, const long long* ch, int* v) {
    const int kr = im.rows.k, kc = im.cols.k;
    const long long* ro = gp_off(im.rows) + (long long)r * kr;
    const long long* co = gp_off(im.cols) + (long long)j * kc;
    const float* rw = gp_wf(im.rows) + (long long)r * kr;
    const float* cw = gp_wf(im.cols) + (long long)j * kc;
    const int nr = im.rows.cnt ? gp_cnt(im.rows)[r] : kr;
    const int nc = im.cols.cnt ? gp_cnt(im.cols)[j] : kc;
    float acc[C], s[C];
    gp_hsum_u8<C>(src + ro[0], co, cw, nc, ch, s);
    {
        const float w = rw[0];
#pragma unroll
        for (int c = 0; c < C; c++) {
            acc[c] = __fmul_rn(w, s[c]);
        }
    }
    for (int t = 1; t < nr; t++) {
        gp_hsum_u8<C>(src + ro[t], co, cw, nc, ch, s);
        const float w = rw[t];
#pragma unroll
        for (int c = 0; c < C; c++) {
            acc[c] = __fadd_rn(acc[c], __fmul_rn(w, s[c]));
        }
    }
    const int end = im.end;
#pragma unroll
    for (int c = 0; c < C; c++) {
        if (end == GP_END_QUAD) {
            v[c] = ((int)acc[c] + 2) >> 2;
        } else {
            v[c] = gp_round_u8(end == GP_END_SCALE ? __fmul_rn(acc[c], im.inv) : acc[c]);
        }
    }
}

#endif
