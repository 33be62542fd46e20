//go:build cuda

package cuda

// Build environment for `-tags cuda` (scripts/check_shim.sh does exactly this):
//
//	CGO_ENABLED=1
//	CGO_CFLAGS="-O2 -g $(scripts/gen_shim.sh --print-cflags)"
//	CGO_LDFLAGS="-O2 -g -Wl,--as-needed"   # recommended, see below
//	go build -tags cuda ...
//
// CGO_CFLAGS must put the pinned CUDA 12 cuda.h (PyPI nvidia-cuda-runtime-cu12,
// version pinned in scripts/gen_shim.sh) first: gorgonia.org/cu and the shim
// must see the same cuda.h (shim_cuda.c #errors on a CUDA_VERSION mismatch).
// Setting CGO_CFLAGS replaces cgo's default "-g -O2", hence the explicit flags.
//
// How gorgonia.org/cu's `#cgo LDFLAGS: -lcuda` is satisfied without a
// DT_NEEDED on libcuda.so:
//   - lib/libcuda.a is an empty archive and -L${SRCDIR}/lib below puts it on
//     the search path. GNU ld applies every -L to every -l whatever their order,
//     so -lcuda always resolves, even where no CUDA is installed.
//   - Where a real libcuda.so sits in a directory searched before ours
//     (gorgonia adds -L/usr/local/cuda/lib64, -L/usr/lib/x86_64-linux-gnu/, ...),
//     ld opens it, but every cu* symbol is already defined by shim_cuda.c, whose
//     object precedes all cgo LDFLAGS on the final link line; under
//     --as-needed a library that satisfies no undefined reference is not
//     recorded as NEEDED. --as-needed comes from (1) the flag below, which the Go
//     linker emits before gorgonia's -lcuda because cgo flags follow package load
//     order and this package imports gorgonia.org/cu, (2) Debian/Ubuntu gcc's
//     default spec, and (3) CGO_LDFLAGS="-Wl,--as-needed", which the go command
//     prepends to every cgo package's flags, so it is first whatever the package
//     order: the build scripts should set it.
//   - go-nvml links with -Wl,--unresolved-symbols=ignore-in-object-files, so a
//     missing shim symbol would not fail the link: scripts/check_shim.sh asserts
//     that no cu*/nvml* symbol is left undefined and that readelf -d lists
//     neither library.

/*
#cgo LDFLAGS: -L${SRCDIR}/lib -Wl,--as-needed -ldl -lpthread
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"sync"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	_ "gorgonia.org/cu" // its init calls cuInit(0); the shim keeps it from exiting.
)

// DriverStatus reports whether the CUDA driver is usable: libcuda.so.1 was
// found and the real cuInit(0) succeeded. When it is not, reason says why
// (the dlopen error, or the cuInit error name and description). The shim's
// cuInit always reports success to its callers (gorgonia.org/cu's init exits
// the process otherwise), so backend code must check DriverStatus before
// using the driver.
func DriverStatus() (ok bool, reason string) {
	var cReason *C.char
	r := int(C.goprep_cuda_init_status(&cReason))
	if r == 0 {
		return true, ""
	}
	reason = C.GoString(cReason)
	if reason == "" {
		reason = fmt.Sprintf("cuInit failed with CUresult %d", r)
	}
	return false, reason
}

var (
	nvmlOnce   sync.Once
	nvmlOK     bool
	nvmlReason string
)

// NVMLStatus attempts nvml.Init() once per process and reports the outcome.
// On success NVML stays initialized for the rest of the process.
func NVMLStatus() (ok bool, reason string) {
	nvmlOnce.Do(func() {
		ret := nvml.Init()
		if ret == nvml.SUCCESS {
			nvmlOK = true
			return
		}
		nvmlReason = fmt.Sprintf("nvml.Init: %v", ret)
		var cReason *C.char
		if C.goprep_nvml_available(&cReason) == 0 {
			nvmlReason += ": " + C.GoString(cReason)
		}
	})
	return nvmlOK, nvmlReason
}
