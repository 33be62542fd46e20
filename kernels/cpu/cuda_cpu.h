// cuda_cpu.h: just enough of CUDA C for the kernels in kernels/*.cu to compile as plain C++ for the
// CPU (package cpukernel). A block's threads run one after another on one OS thread; the kernels use
// no shared memory and no __syncthreads, so that is a valid schedule. Every name here mirrors a CUDA
// built-in with the same semantics; nothing about the kernels' arithmetic is redefined.
#ifndef GOPREP_CUDA_CPU_H
#define GOPREP_CUDA_CPU_H

#define GOPREP_CPU_KERNELS 1
#define __global__
#define __device__
#define __forceinline__ inline __attribute__((always_inline))
#define __restrict__ __restrict
#define __launch_bounds__(...)

struct gp_dim3 {
    unsigned int x, y, z;
};
// The launcher (kernels.cc) sets these before running each thread of a block.
static thread_local gp_dim3 threadIdx, blockIdx, blockDim, gridDim;

// CUDA's vector types used by the kernels (same size and alignment as in CUDA).
struct __attribute__((aligned(16))) longlong2 {
    long long x, y;
};
struct __attribute__((aligned(8))) int2 {
    int x, y;
};
struct __attribute__((aligned(8))) float2 {
    float x, y;
};
struct __attribute__((aligned(4))) uchar4 {
    unsigned char x, y, z, w;
};
struct __attribute__((aligned(16))) float4 {
    float x, y, z, w;
};

// __ldg: a load through the read-only data cache; on the CPU, a plain load.
template <typename T>
static inline T __ldg(const T* p) {
    return *p;
}

// __f*_rn: one IEEE single-precision operation, rounded to nearest even, never contracted into an
// FMA. The volatile store forces the rounding at exactly this step whatever the compiler's
// contraction default (cgo rejects -ffp-contract=off); x86-64 SSE and AArch64 compute float in single.
static inline float __fadd_rn(float a, float b) {
    volatile float r = a + b;
    return r;
}
static inline float __fsub_rn(float a, float b) {
    volatile float r = a - b;
    return r;
}
static inline float __fmul_rn(float a, float b) {
    volatile float r = a * b;
    return r;
}
static inline float __fdiv_rn(float a, float b) {
    volatile float r = a / b;
    return r;
}
// cvt.rni.s32.f32: round to nearest even (the default rounding mode, which nothing here changes).
static inline int __float2int_rn(float x) { return (int)__builtin_rintf(x); }
static inline unsigned int __float_as_uint(float x) {
    unsigned int u;
    __builtin_memcpy(&u, &x, sizeof u);
    return u;
}

// cvt.rn.f16.f32: float32 -> float16 bits, round to nearest even, overflow to infinity, subnormals
// kept. On x86-64 that is the F16C instruction VCVTPS2PH with rounding control 0 (the same IEEE
// conversion the GPU performs); elsewhere the compiler's _Float16 conversion, also IEEE RNE.
#if defined(__x86_64__)
#include <immintrin.h>
__attribute__((target("f16c"))) static inline unsigned short gp_cpu_cvt_rn_f16(float x) {
    return (unsigned short)_cvtss_sh(x, 0);
}
#else
static inline unsigned short gp_cpu_cvt_rn_f16(float x) {
    _Float16 h = (_Float16)x;
    unsigned short u;
    __builtin_memcpy(&u, &h, sizeof u);
    return u;
}
#endif

#endif
