package main

// The C text genshim writes around the generated forwarders: shim.h (shimHBody), and the runtime
// each shim starts with (commonRuntime: includes; cudaPrologue: the cuInit bookkeeping and
// goprep_cuda_init_status; nvmlPrologue: the lazy nvml handle). main.go's genShimH and genNvml
// write theirs verbatim; cudaPrologue is genCuda's format string (%s twice: cuda.h's CUDA_VERSION,
// %% for a literal percent sign).

const shimHBody = `#ifndef GOPREP_CUDA_SHIM_H
#define GOPREP_CUDA_SHIM_H

// Returned by goprep_cuda_init_status when libcuda.so.1 (or its cuInit) could
// not be loaded at all; any other value is the CUresult of the real cuInit(0)
// (0 == CUDA_SUCCESS).
#define GOPREP_CUDA_LIB_NOT_FOUND (-1)

// goprep_cuda_init_status reports the real outcome of the first cuInit. The shim's cuInit
// always returns CUDA_SUCCESS to its caller (gorgonia.org/cu exits the process
// otherwise); this is where the truth is kept. If cuInit was never called it
// is called here with flags 0. *reason is set to a static, NUL-terminated
// description ("" on success).
int goprep_cuda_init_status(const char **reason);

// goprep_nvml_available reports whether libnvidia-ml.so.1 could be dlopen'ed
// (1) or not (0); on failure *reason holds the dlerror text.
int goprep_nvml_available(const char **reason);

#endif
`

const commonRuntime = `#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

`

const cudaPrologue = commonRuntime + `#include <cuda.h>
#include "shim.h"

#if !defined(CUDA_VERSION) || CUDA_VERSION != %s
#error "shim_cuda.c was generated from cuda.h with CUDA_VERSION %s but is compiled against another cuda.h: put the pinned headers first, CGO_CFLAGS=\"-O2 -g $(scripts/gen_shim.sh --print-cflags)\", or regenerate with scripts/gen_shim.sh"
#endif

static pthread_once_t goprep_cuda_once = PTHREAD_ONCE_INIT;
static void *goprep_cuda_handle;
static char goprep_cuda_dlerror[512];
static char goprep_cuda_missing; // address used as "symbol absent" marker

static void goprep_cuda_open(void) {
	goprep_cuda_handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!goprep_cuda_handle) {
		const char *e = dlerror();
		snprintf(goprep_cuda_dlerror, sizeof goprep_cuda_dlerror, "%%s", e ? e : "libcuda.so.1: dlopen failed");
	}
}

// goprep_cuda_sym returns the real function for name, or NULL when the
// library or the symbol is absent. The lookup result is cached in *slot.
static void *goprep_cuda_sym(void **slot, const char *name) {
	void *p = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
	if (!p) {
		pthread_once(&goprep_cuda_once, goprep_cuda_open);
		p = goprep_cuda_handle ? dlsym(goprep_cuda_handle, name) : NULL;
		if (!p) p = &goprep_cuda_missing;
		__atomic_store_n(slot, p, __ATOMIC_RELEASE);
	}
	return p == (void *)&goprep_cuda_missing ? NULL : p;
}

static CUresult goprep_cuda_unavailable(void) {
	pthread_once(&goprep_cuda_once, goprep_cuda_open);
	// No driver library: behave like a driver whose cuInit failed.
	// Library present but symbol missing (older driver): "named symbol not found".
	return goprep_cuda_handle ? CUDA_ERROR_NOT_FOUND : CUDA_ERROR_NOT_INITIALIZED;
}

static pthread_mutex_t goprep_cuda_mu = PTHREAD_MUTEX_INITIALIZER;
static int goprep_cuda_init_called;
static int goprep_cuda_init_result = GOPREP_CUDA_LIB_NOT_FOUND;
static char goprep_cuda_init_reason[768];

// goprep_cuda_do_init implements cuInit: it records the real outcome and
// always reports success (see shim.h).
static CUresult goprep_cuda_do_init(unsigned int flags) {
	static void *slot;
	CUresult (*real)(unsigned int) = (CUresult (*)(unsigned int))goprep_cuda_sym(&slot, "cuInit");
	int result;
	char reason[sizeof goprep_cuda_init_reason];
	reason[0] = 0;
	if (!real) {
		result = GOPREP_CUDA_LIB_NOT_FOUND;
		if (goprep_cuda_handle) {
			snprintf(reason, sizeof reason, "libcuda.so.1 loaded but has no cuInit symbol");
		} else {
			snprintf(reason, sizeof reason, "CUDA driver library not available: %%s", goprep_cuda_dlerror);
		}
	} else {
		result = (int)real(flags);
		if (result != CUDA_SUCCESS) {
			static void *nslot, *sslot;
			CUresult (*getName)(CUresult, const char **) = (CUresult (*)(CUresult, const char **))goprep_cuda_sym(&nslot, "cuGetErrorName");
			CUresult (*getString)(CUresult, const char **) = (CUresult (*)(CUresult, const char **))goprep_cuda_sym(&sslot, "cuGetErrorString");
			const char *n = NULL, *s = NULL;
			if (getName) getName((CUresult)result, &n);
			if (getString) getString((CUresult)result, &s);
			snprintf(reason, sizeof reason, "cuInit(%%u) from libcuda.so.1 failed: %%s (%%d): %%s",
				flags, n ? n : "CUDA error", result, s ? s : "no description");
		}
	}
	// The first outcome is kept (the driver's cuInit failure is sticky for the
	// process anyway), so the reason buffer never changes once published.
	pthread_mutex_lock(&goprep_cuda_mu);
	if (!goprep_cuda_init_called) {
		goprep_cuda_init_result = result;
		memcpy(goprep_cuda_init_reason, reason, sizeof reason);
		goprep_cuda_init_called = 1;
	}
	pthread_mutex_unlock(&goprep_cuda_mu);
	return CUDA_SUCCESS;
}

int goprep_cuda_init_status(const char **reason) {
	int called;
	pthread_mutex_lock(&goprep_cuda_mu);
	called = goprep_cuda_init_called;
	pthread_mutex_unlock(&goprep_cuda_mu);
	if (!called) goprep_cuda_do_init(0);
	pthread_mutex_lock(&goprep_cuda_mu);
	int r = goprep_cuda_init_result;
	if (reason) *reason = goprep_cuda_init_reason; // immutable once recorded
	pthread_mutex_unlock(&goprep_cuda_mu);
	return r;
}

`

const nvmlPrologue = commonRuntime + `#define NVML_NO_UNVERSIONED_FUNC_DEFS 1 // as go-nvml compiles nvml.h
#include <nvml.h> // go-nvml's own header: CGO_CFLAGS adds -I<go-nvml module>/pkg/nvml (scripts/gen_shim.sh --print-cflags)
#include "shim.h"

static pthread_once_t goprep_nvml_once = PTHREAD_ONCE_INIT;
static void *goprep_nvml_handle;
static char goprep_nvml_dlerror[512];
static char goprep_nvml_missing; // address used as "symbol absent" marker

static void goprep_nvml_open(void) {
	goprep_nvml_handle = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!goprep_nvml_handle) {
		const char *e = dlerror();
		snprintf(goprep_nvml_dlerror, sizeof goprep_nvml_dlerror, "%s", e ? e : "libnvidia-ml.so.1: dlopen failed");
	}
}

static void *goprep_nvml_sym(void **slot, const char *name) {
	void *p = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
	if (!p) {
		pthread_once(&goprep_nvml_once, goprep_nvml_open);
		p = goprep_nvml_handle ? dlsym(goprep_nvml_handle, name) : NULL;
		if (!p) p = &goprep_nvml_missing;
		__atomic_store_n(slot, p, __ATOMIC_RELEASE);
	}
	return p == (void *)&goprep_nvml_missing ? NULL : p;
}

static nvmlReturn_t goprep_nvml_unavailable(void) {
	pthread_once(&goprep_nvml_once, goprep_nvml_open);
	return goprep_nvml_handle ? NVML_ERROR_FUNCTION_NOT_FOUND : NVML_ERROR_LIBRARY_NOT_FOUND;
}

int goprep_nvml_available(const char **reason) {
	pthread_once(&goprep_nvml_once, goprep_nvml_open);
	if (reason) *reason = goprep_nvml_handle ? "" : goprep_nvml_dlerror;
	return goprep_nvml_handle != NULL;
}

`
