// launch.h: the C interface of kernels.cc to Go (cpukernel.go).
#ifndef GOPREP_CPU_LAUNCH_H
#define GOPREP_CPU_LAUNCH_H
#ifdef __cplusplus
extern "C" {
#endif

// goprep_cpu_kernel returns the index of the kernel called name, or -1 when there is none.
int goprep_cpu_kernel(const char* name);
// goprep_cpu_kernel_name returns the name of kernel i, or 0 past the end.
const char* goprep_cpu_kernel_name(int i);

// goprep_cpu_blocks runs blocks [first, first+count) (linear index, x fastest) of a launch of kernel
// k with grid g* and block b*: every thread of each block in turn. args are the kernel's parameters
// (a descriptor table address and an image count).
void goprep_cpu_blocks(int k, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                       unsigned long long first, unsigned long long count, unsigned long long desc, int n);

#ifdef __cplusplus
}
#endif
#endif
