// goprep.h: the descriptor ABI between the Go planner (gomod/engine/gpu_desc.go, which writes these
// structs byte for byte; their Go mirror gpu_abi.go is derived from this header by cgo -godefs) and
// the CUDA kernels. Every table a kernel reads was built by the Go CPU
// engine's planner, so both engines use the same source coordinates and the same fixed-point and
// float weights; only the arithmetic is re-expressed here, step for step as the CPU engine does it.
//
// Layout rules: natural alignment, no implicit padding, little-endian, pointers as 64-bit device
// addresses (the host and device agree on all of it; scripts/generate.sh --check proves gpu_abi.go
// fresh).
#ifndef GOPREP_H
#define GOPREP_H

#define GP_MODE_GATHER 0    // no resize or a nearest rule: one tap per axis
#define GP_MODE_BILINEAR 1  // two taps per axis: OpenCV fixed point (uint8; also cv2 INTER_AREA upscale)
                            // or PyTorch lerp (float32 bilinear)
#define GP_MODE_ANTIALIAS 2 // K taps per axis, Cnt live: Pillow fixed point (uint8), float sums (float32);
                            // bilinear and bicubic alike (the filter lives in the planner's weights)
#define GP_MODE_TAPS 3      // K float-weight taps per axis summed in tap order: cv2 INTER_CUBIC and
                            // INTER_AREA (uint8: live taps, then rounded), PyTorch bicubic and area (float32)

// How GP_MODE_TAPS ends (gomod/engine/resize_area.go: areaEnd): an integer-factor area plan's block
// sums are scaled by inv, or (uint8 2x2 blocks) rounded as OpenCV's SIMD code does.
#define GP_END_NONE 0  // the sum is the result (uint8: saturate_cast, round half to even, clamp)
#define GP_END_SCALE 1 // sum * inv in float32 (uint8: then saturate_cast)
#define GP_END_QUAD 2  // uint8 only: ((int)sum + 2) >> 2

#define GP_OUT_U8 0
#define GP_OUT_F32 1
#define GP_OUT_F16 2

// One axis of a plan (gomod/engine/plan.go: axis). Output coordinate o in [lo, hi) is content and
// reads taps (o-lo)*k .. (o-lo)*k+k-1; outside it is padding.
typedef struct {
    unsigned long long off; // const long long*: element offsets from the image origin, [n*k]
    unsigned long long wi;  // const int*: fixed-point weights [n*k] (uint8 sources), else 0
    unsigned long long wf;  // const float*: float weights [n*k] (float32 sources), else 0
    unsigned long long cnt; // const int*: live taps per coordinate [n] (antialias), else 0
    int lo, hi, k, reserved;
} gp_axis; // 48 bytes

// A YUV source (the goprep_preprocess_yuv_c* kernels; gomod/engine/yuv.go): the row axis's offsets
// locate each row tap's Y sample of pixel 0, u and v its chroma row's U and V samples of pixel 0, the
// column axis's offsets are pixel columns x. A tap's pixel is Y at y_row[x*ystep], U and V at
// u_row[(x>>1)*cstep] and v_row[...], converted to RGB by yuvConvScalar's fixed point (20 bits):
// c = sat((max(Y-yoff, ylo)*cy + 2^19 + coefficients*(U-128, V-128)) >> 20).
typedef struct {
    unsigned long long u, v; // const long long*: per row tap [n*k] (parallel to rows.off)
    int cy, cr, cgu, cgv, cb, yoff, ylo;
    int ystep, cstep;
    int reserved;
} gp_yuv; // 56 bytes

// One image of a launch. A batch of differently sized images is an array of these.
typedef struct {
    unsigned long long src;   // device address of the image's logical element (0, 0, 0)
    unsigned long long out;   // device address of the image's first output element
    unsigned long long lut;   // const float*: [out_c][256] normalisation table (uint8 source), else 0
    unsigned long long lut16; // const unsigned short*: the same as float16 bits, else 0
    gp_axis rows, cols;       // 2 x 48
    long long stride_c;       // source channel stride in elements
    float mean[4], std[4];    // normalisation per output channel (float32 sources)
    float pad_f32[4];         // padding value per output channel (float32 sources)
    float scale, inv;         // normalisation scale; GP_END_SCALE's factor
    int cmap[4];              // output channel c reads source channel cmap[c]
    int pad_u8[4];            // padding value per output channel (uint8 sources)
    int out_h, out_w, out_c, in_c;
    int mode, out_dtype, chw, norm; // GP_MODE_*, GP_OUT_*, planar output, normalise
    int end;                        // GP_END_*
    int vec; // pixels are 4 channels in order, 4-element aligned: one vector load each (gpu_desc.go)
    gp_yuv yuv; // the yuv kernels' planes and coefficients, else zero
} gp_image; // 320 bytes

#endif
