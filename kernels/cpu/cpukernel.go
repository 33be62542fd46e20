// Package cpukernel runs the real CUDA C kernels of kernels/*.cu on the CPU: kernels.cc includes
// preprocess.cu unchanged under cuda_cpu.h, a small header that maps __global__, the thread index
// built-ins, __f*_rn and the float16 conversion onto C++. The simulated GPU (gomod/engine/gpu/sim.go)
// launches them through Launch, so on machines without a GPU the equivalence tests compare the
// kernel source itself, bit for bit, with the Go CPU engine.
//
// The engine's tests always use it; the extension links it only when built with -tags cpukernel
// (setup.py does so when a C++ compiler is found), because only goprep.testing.simulate_gpu needs it.
package cpukernel

/*
#cgo CXXFLAGS: -O2 -std=c++17 -fno-exceptions -fno-rtti -Wall -Wno-unknown-pragmas
#include <stdlib.h>
#include "launch.h"
*/
import "C"

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	// The kernel sources are embedded there, so editing one rebuilds this package (see Source).
	_ "github.com/goprep/goprep/kernels"
)

// Kernels lists the kernel entry points compiled in (preprocess.cu's GP_KERNELS).
func Kernels() []string {
	var out []string
	for i := 0; ; i++ {
		p := C.goprep_cpu_kernel_name(C.int(i))
		if p == nil {
			return out
		}
		out = append(out, C.GoString(p))
	}
}

// blocksPerCall amortises the cgo call (~100 ns) over enough work; blocks are 256 threads.
const blocksPerCall = 8

// Launch runs kernel over grid x block threads, as cuLaunchKernel would, with the parameters
// (desc, n): the device address of a gp_image table and its length. Blocks run in parallel on all
// cores; it returns when every thread has finished.
func Launch(kernel string, grid, block [3]int, desc uint64, n int) error {
	name := C.CString(kernel)
	k := C.goprep_cpu_kernel(name)
	C.free(unsafe.Pointer(name))
	if k < 0 {
		return fmt.Errorf("kernel %s is not in kernels/*.cu", kernel)
	}
	for _, v := range append(grid[:], block[:]...) {
		if v < 1 {
			return fmt.Errorf("launch of %s: empty grid or block %v %v", kernel, grid, block)
		}
	}
	total := uint64(grid[0]) * uint64(grid[1]) * uint64(grid[2])
	var next atomic.Uint64
	var wg sync.WaitGroup
	workers := min(runtime.NumCPU(), int((total+blocksPerCall-1)/blocksPerCall))
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				first := next.Add(blocksPerCall) - blocksPerCall
				if first >= total {
					return
				}
				C.goprep_cpu_blocks(k, C.uint(grid[0]), C.uint(grid[1]), C.uint(grid[2]),
					C.uint(block[0]), C.uint(block[1]), C.uint(block[2]),
					C.ulonglong(first), C.ulonglong(min(blocksPerCall, total-first)), C.ulonglong(desc), C.int(n))
			}
		}()
	}
	wg.Wait()
	return nil
}
