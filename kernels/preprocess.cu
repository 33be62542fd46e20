// preprocess.cu: the fused preprocessing kernels. One launch covers a whole batch: blockIdx.y walks the
// per-image descriptor table (images may differ in size and plan), threads walk output pixels, and each
// thread produces every output channel of its pixel: source view, resize, canvas padding, channel map,
// normalisation, dtype and layout in one pass. Symbol names are stable: goprep_preprocess_<source type>.
#include "goprep.h"
#include "resize.cuh"
#include "normalize.cuh"

extern "C" __global__ void goprep_preprocess_u8(const gp_image* images, int n) {
    for (int img = blockIdx.y; img < n; img += gridDim.y) {
        const gp_image im = images[img];
        const unsigned char* src = (const unsigned char*)im.src;
        long long pixels = (long long)im.out_h * im.out_w;
        for (long long p = (long long)blockIdx.x * blockDim.x + threadIdx.x; p < pixels; p += (long long)gridDim.x * blockDim.x) {
            int y = (int)(p / im.out_w), x = (int)(p % im.out_w);
            bool content = y >= im.rows.lo && y < im.rows.hi && x >= im.cols.lo && x < im.cols.hi;
            int r = y - im.rows.lo, j = x - im.cols.lo;
            for (int c = 0; c < im.out_c; c++) {
                int v = im.pad_u8;
                if (content) {
                    long long ch = (long long)im.cmap[c] * im.stride_c;
                    if (im.mode == GP_MODE_BILINEAR) {
                        v = gp_bilinear_u8(src, im, r, j, ch);
                    } else if (im.mode == GP_MODE_ANTIALIAS) {
                        v = gp_antialias_u8(src, im, r, j, ch);
                    } else {
                        v = src[gp_off(im.rows)[r] + gp_off(im.cols)[j] + ch];
                    }
                }
                gp_store_u8(im, gp_out_index(im, y, x, c), c, v);
            }
        }
    }
}

extern "C" __global__ void goprep_preprocess_f32(const gp_image* images, int n) {
    for (int img = blockIdx.y; img < n; img += gridDim.y) {
        const gp_image im = images[img];
        const float* src = (const float*)im.src;
        long long pixels = (long long)im.out_h * im.out_w;
        for (long long p = (long long)blockIdx.x * blockDim.x + threadIdx.x; p < pixels; p += (long long)gridDim.x * blockDim.x) {
            int y = (int)(p / im.out_w), x = (int)(p % im.out_w);
            bool content = y >= im.rows.lo && y < im.rows.hi && x >= im.cols.lo && x < im.cols.hi;
            int r = y - im.rows.lo, j = x - im.cols.lo;
            for (int c = 0; c < im.out_c; c++) {
                float v = im.pad_f32;
                if (content) {
                    long long ch = (long long)im.cmap[c] * im.stride_c;
                    if (im.mode == GP_MODE_BILINEAR) {
                        v = gp_bilinear_f32(src, im, r, j, ch);
                    } else if (im.mode == GP_MODE_ANTIALIAS) {
                        v = gp_taps_f32(src, im, r, j, ch);
                    } else {
                        v = src[gp_off(im.rows)[r] + gp_off(im.cols)[j] + ch];
                    }
                }
                gp_store_f32(im, gp_out_index(im, y, x, c), c, v);
            }
        }
    }
}
