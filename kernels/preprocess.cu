// preprocess.cu: the fused preprocessing kernels. One launch covers a whole batch: blockIdx.y walks the
// per-image descriptor table (images may differ in size and plan), threads walk output pixels, and each
// thread produces every output channel of its pixel: source view, resize, canvas padding, channel map,
// normalisation, dtype and layout in one pass. Symbol names are stable: goprep_preprocess_<source type>.
#include "goprep.h"
#include "resize.cuh"
#include "normalize.cuh"

// The sample at content position (r, j), source channel offset ch, of one image: overloaded on the
// source type so that one kernel body serves both (integers for uint8, floats for float32 sources).
__device__ __forceinline__ int gp_sample(const unsigned char* src, const gp_image& im, int r, int j, long long ch) {
    if (im.mode == GP_MODE_BILINEAR) {
        return gp_bilinear_u8(src, im, r, j, ch);
    }
    if (im.mode == GP_MODE_ANTIALIAS) {
        return gp_antialias_u8(src, im, r, j, ch);
    }
    return src[gp_off(im.rows)[r] + gp_off(im.cols)[j] + ch];
}

__device__ __forceinline__ float gp_sample(const float* src, const gp_image& im, int r, int j, long long ch) {
    if (im.mode == GP_MODE_BILINEAR) {
        return gp_bilinear_f32(src, im, r, j, ch);
    }
    if (im.mode == GP_MODE_ANTIALIAS) {
        return gp_taps_f32(src, im, r, j, ch);
    }
    return src[gp_off(im.rows)[r] + gp_off(im.cols)[j] + ch];
}

__device__ __forceinline__ int gp_pad(const gp_image& im, const unsigned char*) { return im.pad_u8; }
__device__ __forceinline__ float gp_pad(const gp_image& im, const float*) { return im.pad_f32; }
__device__ __forceinline__ void gp_store(const gp_image& im, long long i, int c, int v) { gp_store_u8(im, i, c, v); }
__device__ __forceinline__ void gp_store(const gp_image& im, long long i, int c, float v) { gp_store_f32(im, i, c, v); }

template <typename S>
__device__ __forceinline__ void gp_preprocess(const gp_image* images, int n) {
    for (int img = blockIdx.y; img < n; img += gridDim.y) {
        const gp_image im = images[img];
        const S* src = (const S*)im.src;
        long long pixels = (long long)im.out_h * im.out_w;
        for (long long p = (long long)blockIdx.x * blockDim.x + threadIdx.x; p < pixels; p += (long long)gridDim.x * blockDim.x) {
            int y = (int)(p / im.out_w), x = (int)(p % im.out_w);
            bool content = y >= im.rows.lo && y < im.rows.hi && x >= im.cols.lo && x < im.cols.hi;
            int r = y - im.rows.lo, j = x - im.cols.lo;
            for (int c = 0; c < im.out_c; c++) {
                auto v = gp_pad(im, src);
                if (content) {
                    v = gp_sample(src, im, r, j, (long long)im.cmap[c] * im.stride_c);
                }
                gp_store(im, gp_out_index(im, y, x, c), c, v);
            }
        }
    }
}

extern "C" __global__ void goprep_preprocess_u8(const gp_image* images, int n) { gp_preprocess<unsigned char>(images, n); }

extern "C" __global__ void goprep_preprocess_f32(const gp_image* images, int n) { gp_preprocess<float>(images, n); }
