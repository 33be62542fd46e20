// preprocess.cu: the fused preprocessing kernels. One launch covers a whole batch: blockIdx.z picks
// the image from the per-image descriptor table (images may differ in size and plan), and a 2-D grid
// of 32x8-thread blocks covers its output, one thread per output pixel; each thread produces every
// output channel of its pixel: source view, resize, canvas padding, channel map, normalisation, dtype
// and layout in one pass. The launch shape is the engine's (gomod/engine: DeviceBatch.Launch).
//
// Speed (the review's ptxas reading of the previous version: a 232-byte descriptor copied to local
// memory per thread, a 64-bit division per pixel, table loads repeated per channel): the descriptor is
// read in place through a const reference, pixel coordinates come from the 2-D grid without any
// division, the channel count is a template parameter (1-4: the entry points below), and all taps are
// loaded once per pixel (resize.cuh). Entry point names are stable: goprep_preprocess_<src>_c<C>.
#include "goprep.h"
#include "resize.cuh"
#include "normalize.cuh"

// The samples of all C channels at content position (r, j): overloaded on the source type so that one
// kernel body serves both (integers for uint8, floats for float32 sources).
template <int C>
__device__ __forceinline__ void gp_sample(const unsigned char* __restrict__ src, const gp_image& im, int r, int j, const long long* ch, int* v) {
    if (im.mode == GP_MODE_BILINEAR) {
        gp_bilinear_u8<C>(src, im, r, j, ch, v);
    } else if (im.mode == GP_MODE_ANTIALIAS) {
        gp_antialias_u8<C>(src, im, r, j, ch, v);
    } else if (im.mode == GP_MODE_TAPS) {
        gp_taps_u8<C>(src, im, r, j, ch, v);
    } else {
        gp_gather<unsigned char, C>(src, im, r, j, ch, v);
    }
}

// A YUV image (the yuv kernels): the uint8 arithmetic over pixels converted as the taps read them.
struct gp_yuv_src {
    unsigned char b;
};

template <int C>
__device__ __forceinline__ void gp_sample(const gp_yuv_src* __restrict__ ysrc, const gp_image& im, int r, int j, const long long* ch, int* v) {
    const unsigned char* src = (const unsigned char*)ysrc;
    if (im.mode == GP_MODE_BILINEAR) {
        gp_bilinear_u8<C, true>(src, im, r, j, ch, v);
    } else if (im.mode == GP_MODE_ANTIALIAS) {
        gp_antialias_u8<C, true>(src, im, r, j, ch, v);
    } else if (im.mode == GP_MODE_TAPS) {
        gp_taps_u8<C, true>(src, im, r, j, ch, v);
    } else {
        gp_gather_yuv<C>(src, im, r, j, ch, v);
    }
}

template <int C>
__device__ __forceinline__ void gp_sample(const float* __restrict__ src, const gp_image& im, int r, int j, const long long* ch, float* v) {
    if (im.mode == GP_MODE_BILINEAR) {
        gp_bilinear_f32<C>(src, im, r, j, ch, v);
    } else if (im.mode == GP_MODE_ANTIALIAS || im.mode == GP_MODE_TAPS) {
        gp_taps_f32<C>(src, im, r, j, ch, v);
    } else {
        gp_gather<float, C>(src, im, r, j, ch, v);
    }
}

__device__ __forceinline__ int gp_pad(const gp_image& im, const unsigned char*, int c) { return im.pad_u8[c]; }
__device__ __forceinline__ float gp_pad(const gp_image& im, const float*, int c) { return im.pad_f32[c]; }
__device__ __forceinline__ int gp_pad(const gp_image& im, const gp_yuv_src*, int c) { return im.pad_u8[c]; }

// The value type a source type computes in.
template <typename S>
struct gp_acc;
template <>
struct gp_acc<unsigned char> {
    typedef int type;
};
template <>
struct gp_acc<float> {
    typedef float type;
};
template <>
struct gp_acc<gp_yuv_src> {
    typedef int type;
};

template <typename S, int C>
__device__ __forceinline__ void gp_preprocess(const gp_image* __restrict__ images, int n) {
    // Grid-stride in all three dimensions, so any batch fits CUDA's grid limits (65535 in y and z).
    for (int img = blockIdx.z; img < n; img += gridDim.z) {
        const gp_image& im = images[img];
        const S* __restrict__ src = (const S*)im.src;
        long long ch[C]; // each output channel's source channel offset
#pragma unroll
        for (int c = 0; c < C; c++) {
            ch[c] = (long long)im.cmap[c] * im.stride_c;
        }
        for (int y = blockIdx.y * blockDim.y + threadIdx.y; y < im.out_h; y += gridDim.y * blockDim.y) {
            const bool row_in = y >= im.rows.lo && y < im.rows.hi;
            for (int x = blockIdx.x * blockDim.x + threadIdx.x; x < im.out_w; x += gridDim.x * blockDim.x) {
                typename gp_acc<S>::type v[C];
                if (row_in && x >= im.cols.lo && x < im.cols.hi) {
                    gp_sample<C>(src, im, y - im.rows.lo, x - im.cols.lo, ch, v);
                } else {
#pragma unroll
                    for (int c = 0; c < C; c++) {
                        v[c] = gp_pad(im, src, c);
                    }
                }
                gp_store<C>(im, y, x, v);
            }
        }
    }
}

// The entry points, one list for the PTX and for the CPU build (kernels/cpu/kernels.cc):
// X(name, source type, channels).
#define GP_KERNELS(X)                                                                                     \
    X(goprep_preprocess_u8_c1, unsigned char, 1)                                                          \
    X(goprep_preprocess_u8_c2, unsigned char, 2)                                                          \
    X(goprep_preprocess_u8_c3, unsigned char, 3)                                                          \
    X(goprep_preprocess_u8_c4, unsigned char, 4)                                                          \
    X(goprep_preprocess_f32_c1, float, 1)                                                                 \
    X(goprep_preprocess_f32_c2, float, 2)                                                                 \
    X(goprep_preprocess_f32_c3, float, 3)                                                                 \
    X(goprep_preprocess_f32_c4, float, 4)                                                                 \
    X(goprep_preprocess_yuv_c1, gp_yuv_src, 1)                                                            \
    X(goprep_preprocess_yuv_c2, gp_yuv_src, 2)                                                            \
    X(goprep_preprocess_yuv_c3, gp_yuv_src, 3)                                                            \
    X(goprep_preprocess_yuv_c4, gp_yuv_src, 4)

#define GP_DEFINE_KERNEL(name, S, C) \
    extern "C" __global__ void name(const gp_image* __restrict__ images, int n) { gp_preprocess<S, C>(images, n); }
GP_KERNELS(GP_DEFINE_KERNEL)
