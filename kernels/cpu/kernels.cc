// kernels.cc: the real kernels/*.cu, compiled as C++ for the CPU with cuda_cpu.h. This file adds only
// the launcher; the kernel source is included unchanged, so the simulated GPU runs the same code that
// scripts/build_ptx.py compiles to PTX.
#include "cuda_cpu.h"
#include "../preprocess.cu"
#include "launch.h"

typedef void (*gp_kernel_fn)(const gp_image*, int);

#define GP_CPU_ENTRY(name, S, C) {#name, name},
static const struct {
    const char* name;
    gp_kernel_fn fn;
} gp_cpu_kernels[] = {GP_KERNELS(GP_CPU_ENTRY)};

static const int gp_cpu_nkernels = sizeof(gp_cpu_kernels) / sizeof(gp_cpu_kernels[0]);

extern "C" int goprep_cpu_kernel(const char* name) {
    for (int i = 0; i < gp_cpu_nkernels; i++) {
        if (__builtin_strcmp(gp_cpu_kernels[i].name, name) == 0) {
            return i;
        }
    }
    return -1;
}

extern "C" const char* goprep_cpu_kernel_name(int i) {
    return i >= 0 && i < gp_cpu_nkernels ? gp_cpu_kernels[i].name : 0;
}

extern "C" void goprep_cpu_blocks(int k, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                  unsigned bz, unsigned long long first, unsigned long long count,
                                  unsigned long long desc, int n) {
    gp_kernel_fn fn = gp_cpu_kernels[k].fn;
    gridDim = gp_dim3{gx, gy, gz};
    blockDim = gp_dim3{bx, by, bz};
    for (unsigned long long b = first; b < first + count; b++) {
        blockIdx = gp_dim3{(unsigned)(b % gx), (unsigned)(b / gx % gy), (unsigned)(b / gx / gy)};
        for (unsigned z = 0; z < bz; z++) {
            for (unsigned y = 0; y < by; y++) {
                for (unsigned x = 0; x < bx; x++) {
                    threadIdx = gp_dim3{x, y, z};
                    fn((const gp_image*)desc, n);
                }
            }
        }
    }
}
