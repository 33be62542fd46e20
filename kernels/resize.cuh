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

// The C channels of the source pixel at px, as the values V the mode computes in. Where the plan's
// layout allows (im.vec: 4 interleaved channels read in order, every pixel 4-element aligned; set
// by gpu_desc.go), the pixel is one 32-bit (uint8) or 128-bit (float32) load instead of four, through
// the read-only path (__ldg: the kernel never writes its source).
__device__ __forceinline__ void gp_ld4(const unsigned char* __restrict__ px, int* v) {
    const uchar4 q = __ldg((const uchar4*)px);
    v[0] = q.x, v[1] = q.y, v[2] = q.z, v[3] = q.w;
}
__device__ __forceinline__ void gp_ld4(const unsigned char* __restrict__ px, float* v) {
    const uchar4 q = __ldg((const uchar4*)px);
    v[0] = (float)q.x, v[1] = (float)q.y, v[2] = (float)q.z, v[3] = (float)q.w;
}
__device__ __forceinline__ void gp_ld4(const float* __restrict__ px, float* v) {
    const float4 q = __ldg((const float4*)px);
    v[0] = q.x, v[1] = q.y, v[2] = q.z, v[3] = q.w;
}

template <int C, typename S, typename V>
__device__ __forceinline__ void gp_ld(const gp_image& im, const S* __restrict__ px, const long long* ch, V* v) {
    if (C == 4 && im.vec) {
        gp_ld4(px, v);
        return;
    }
#pragma unroll
    for (int c = 0; c < C; c++) {
        v[c] = (V)px[ch[c]];
    }
}

// Source rows of the uint8 modes. Y false: an array image, a row is its pointer (gp_ldr reads the
// pixel at row + column offset). Y true: a YUV image (goprep.h: gp_yuv), a row is its Y, U and V
// rows, a column offset a pixel column, and gp_ldr converts the pixel to RGB exactly as the CPU
// engine's yuvConvScalar does, so every tap reads the value the CPU's converted row holds.
template <bool Y>
struct gp_row;
template <>
struct gp_row<false> {
    const unsigned char* p;
};
template <>
struct gp_row<true> {
    const unsigned char *y, *u, *v;
};

// Row tap i of the row axis.
template <bool Y>
__device__ __forceinline__ gp_row<Y> gp_row_at(const unsigned char* __restrict__ src, const gp_image& im, long long i);
template <>
__device__ __forceinline__ gp_row<false> gp_row_at<false>(const unsigned char* __restrict__ src, const gp_image& im, long long i) {
    return gp_row<false>{src + gp_off(im.rows)[i]};
}
template <>
__device__ __forceinline__ gp_row<true> gp_row_at<true>(const unsigned char* __restrict__ src, const gp_image& im, long long i) {
    return gp_row<true>{src + gp_off(im.rows)[i], src + ((const long long*)im.yuv.u)[i], src + ((const long long*)im.yuv.v)[i]};
}

// The two row taps of coordinate r of a two-tap axis (an array image's offsets: one vector load).
__device__ __forceinline__ void gp_row2(const unsigned char* __restrict__ src, const gp_image& im, int r, gp_row<false>& a, gp_row<false>& b) {
    const longlong2 ro = gp_off2(im.rows, r);
    a.p = src + ro.x, b.p = src + ro.y;
}
__device__ __forceinline__ void gp_row2(const unsigned char* __restrict__ src, const gp_image& im, int r, gp_row<true>& a, gp_row<true>& b) {
    a = gp_row_at<true>(src, im, 2 * (long long)r), b = gp_row_at<true>(src, im, 2 * (long long)r + 1);
}

template <int C, typename V>
__device__ __forceinline__ void gp_ldr(const gp_image& im, gp_row<false> row, long long co, const long long* ch, V* v) {
    gp_ld<C>(im, row.p + co, ch, v);
}

// yuvConvScalar (gomod/engine/yuv.go) for one pixel: saturate_cast of the 20-bit fixed-point sums.
__device__ __forceinline__ int gp_yuv_sat(int s) { return gp_clamp_u8(s >> 20); }

template <int C, typename V>
__device__ __forceinline__ void gp_ldr(const gp_image& im, gp_row<true> row, long long co, const long long* ch, V* v) {
    const gp_yuv& k = im.yuv;
    const int x = (int)co, c = (x >> 1) * k.cstep;
    const int u = (int)__ldg(row.u + c) - 128, w = (int)__ldg(row.v + c) - 128;
    const int yv = (int)__ldg(row.y + (long long)x * k.ystep) - k.yoff;
    const int yt = (yv > k.ylo ? yv : k.ylo) * k.cy;
    const int half = 1 << 19;
    const int r = gp_yuv_sat(yt + (half + k.cr * w));
    const int g = gp_yuv_sat(yt + (half + k.cgu * u + k.cgv * w));
    const int b = gp_yuv_sat(yt + (half + k.cb * u));
#pragma unroll
    for (int c = 0; c < C; c++) {
        v[c] = (V)(ch[c] == 0 ? r : (ch[c] == 1 ? g : b));
    }
}

// No resize or nearest: one tap per axis.
template <typename S, int C, typename V>
__device__ __forceinline__ void gp_gather(const S* __restrict__ src, const gp_image& im, int r, int j, const long long* ch, V* v) {
    gp_ld<C>(im, src + gp_off(im.rows)[r] + gp_off(im.cols)[j], ch, v);
}

// The same for a YUV image.
template <int C>
__device__ __forceinline__ void gp_gather_yuv(const unsigned char* __restrict__ src, const gp_image& im, int r, int j, const long long* ch, int* v) {
    gp_ldr<C>(im, gp_row_at<true>(src, im, r), gp_off(im.cols)[j], ch, v);
}

// uint8 bilinear: OpenCV's HResizeLinear (11-bit coefficients, unrounded sums) and its vectorised
// VResizeLinear (each row pre-shifted by 4, high 16 bits of each product, rounded by 2 bits): vlinear
// and hresizeLinearU8 in resize_cpu.go.
template <int C, bool Y = false>
__device__ __forceinline__ void gp_bilinear_u8(const unsigned char* __restrict__ src, const gp_image& im, int r, int j, const long long* ch, int* v) {
    const longlong2 co = gp_off2(im.cols, j);
    gp_row<Y> r0, r1;
    gp_row2(src, im, r, r0, r1);
    const int2 a = gp_wi2(im.cols, j), b = gp_wi2(im.rows, r);
    int q00[C], q01[C], q10[C], q11[C];
    gp_ldr<C>(im, r0, co.x, ch, q00);
    gp_ldr<C>(im, r0, co.y, ch, q01);
    gp_ldr<C>(im, r1, co.x, ch, q10);
    gp_ldr<C>(im, r1, co.y, ch, q11);
#pragma unroll
    for (int c = 0; c < C; c++) {
        int h0 = q00[c] * a.x + q01[c] * a.y;
        int h1 = q10[c] * a.x + q11[c] * a.y;
        v[c] = (((b.x * (h0 >> 4)) >> 16) + ((b.y * (h1 >> 4)) >> 16) + 2) >> 2;
    }
}

// uint8 antialias: Pillow's two passes (ImagingResampleHorizontal_8bpc, then Vertical) with 22-bit
// weights and the uint8 rounding between the passes (hresizeAAU8, vresizeAAU8). Only live taps count.
template <int C, bool Y = false>
__device__ __forceinline__ void gp_antialias_u8(const unsigned char* __restrict__ src, const gp_image& im, int r, int j, const long long* ch, int* v) {
    const long long r0 = (long long)r * im.rows.k;
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
        const gp_row<Y> row = gp_row_at<Y>(src, im, r0 + t);
        int s[C];
#pragma unroll
        for (int c = 0; c < C; c++) {
            s[c] = 1 << (GP_PIL_BITS - 1);
        }
        for (int u = 0; u < nc; u++) {
            int q[C];
            gp_ldr<C>(im, row, co[u], ch, q);
            const int w = cw[u];
#pragma unroll
            for (int c = 0; c < C; c++) {
                s[c] += q[c] * w;
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
    float q00[C], q01[C], q10[C], q11[C];
    gp_ld<C>(im, src + ro.x + co.x, ch, q00);
    gp_ld<C>(im, src + ro.x + co.y, ch, q01);
    gp_ld<C>(im, src + ro.y + co.x, ch, q10);
    gp_ld<C>(im, src + ro.y + co.y, ch, q11);
#pragma unroll
    for (int c = 0; c < C; c++) {
        float h0 = gp_lerp(q00[c], q01[c], wc);
        float h1 = gp_lerp(q10[c], q11[c], wc);
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
            float q[C];
            gp_ld<C>(im, row + co[u], ch, q);
            const float w = cw[u];
#pragma unroll
            for (int c = 0; c < C; c++) {
                s[c] = __fadd_rn(s[c], __fmul_rn(w, q[c]));
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
template <int C, bool Y>
__device__ __forceinline__ void gp_hsum_u8(const gp_image& im, gp_row<Y> row, const long long* co, const float* cw, int nc,
                                           const long long* ch, float* s) {
    float q[C];
    gp_ldr<C>(im, row, co[0], ch, q);
    {
        const float w = cw[0];
#pragma unroll
        for (int c = 0; c < C; c++) {
            s[c] = __fmul_rn(w, q[c]);
        }
    }
    for (int u = 1; u < nc; u++) {
        gp_ldr<C>(im, row, co[u], ch, q);
        const float w = cw[u];
#pragma unroll
        for (int c = 0; c < C; c++) {
            s[c] = __fadd_rn(s[c], __fmul_rn(w, q[c]));
        }
    }
}

// uint8 with float weights (cv2 INTER_CUBIC and INTER_AREA; resizeRowFloatU8): per live row tap the
// horizontal float32 sum, accumulated vertically in tap order with the first product standing alone,
// then one rounding to uint8 by the plan's rule (finalU8).
template <int C, bool Y = false>
__device__ __forceinline__ void gp_taps_u8(const unsigned char* __restrict__ src, const gp_image& im, int r, int j, const long long* ch, int* v) {
    const int kr = im.rows.k, kc = im.cols.k;
    const long long r0 = (long long)r * kr;
    const long long* co = gp_off(im.cols) + (long long)j * kc;
    const float* rw = gp_wf(im.rows) + (long long)r * kr;
    const float* cw = gp_wf(im.cols) + (long long)j * kc;
    const int nr = im.rows.cnt ? gp_cnt(im.rows)[r] : kr;
    const int nc = im.cols.cnt ? gp_cnt(im.cols)[j] : kc;
    float acc[C], s[C];
    gp_hsum_u8<C>(im, gp_row_at<Y>(src, im, r0), co, cw, nc, ch, s);
    {
        const float w = rw[0];
#pragma unroll
        for (int c = 0; c < C; c++) {
            acc[c] = __fmul_rn(w, s[c]);
        }
    }
    for (int t = 1; t < nr; t++) {
        gp_hsum_u8<C>(im, gp_row_at<Y>(src, im, r0 + t), co, cw, nc, ch, s);
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
