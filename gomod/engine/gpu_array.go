package engine

// Device arrays: results kept in device memory (output="device"), with CPU fallback.

import (
	"sync"
	"unsafe"
)

// DeviceArray is an output kept in device memory.
type DeviceArray struct {
	Ptr    uint64
	Bytes  int
	Device int
	buf    devBuf
	dev    *gpuDev
	mu     sync.Mutex // Free waits for a CopyToHost in progress
	freed  bool
}

// Free returns the memory to the device pool; later calls do nothing. It first waits for all work in
// the context: a framework that imported the array through DLPack may have kernels still reading it
// on its own streams, and the pool hands the buffer to the next call at once.
func (a *DeviceArray) Free() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.freed {
		return
	}
	a.freed = true
	_ = a.dev.dev.SyncAll() // on error the context is broken anyway; the buffer goes back regardless
	a.dev.mem.release(a.buf)
}

// ExecuteToDevice runs jobs (whose Out fields are ignored) into one new device array, outputs in job
// order. If the GPU fails, the CPU computes the result and it is uploaded, so the call still succeeds
// unless the device cannot even take a copy.
func ExecuteToDevice(jobs []Job, index int) (*DeviceArray, string, error) {
	d, err := device(index)
	if err != nil {
		return nil, "", err
	}
	total := 0
	for _, j := range jobs {
		total += j.Plan.OutBytes()
	}
	buf, err := d.mem.get(max(total, 1))
	if err != nil {
		return nil, "", err
	}
	arr := &DeviceArray{Ptr: buf.ptr, Bytes: total, Device: index, buf: buf, dev: d}
	if !breakerOpen() && d.dev.Lost() == "" {
		if err := d.run(jobs, buf.ptr); err == nil {
			return arr, "cuda", nil
		}
	}
	gpu.fallbacks.Add(1)
	host := make([]byte, max(total, 1))
	cj := append([]Job(nil), jobs...)
	at := 0
	for i := range cj {
		cj[i].Out = unsafe.Pointer(&host[at])
		at += cj[i].Plan.OutBytes()
	}
	if err := (CPU{}).Run(cj); err != nil {
		arr.Free()
		return nil, "", err
	}
	if err := d.upload(buf.ptr, host[:total]); err != nil {
		arr.Free()
		return nil, "", errf(CodeDeviceUnavailable, "device", "GPU failed and the CPU result could not be copied to it: %v", err)
	}
	return arr, "cpu", nil
}

// CopyToHost copies the array into host memory (synchronously), after all work in the context (a
// framework may have written into the array on its own streams).
func (a *DeviceArray) CopyToHost(dst []byte) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.freed {
		return errf(CodeInvalidArgument, "array", "device array already freed")
	}
	if err := a.dev.dev.SyncAll(); err != nil {
		return err
	}
	return a.dev.onStream(func(s Stream) error {
		return a.dev.dev.CopyDtoH(unsafe.Pointer(unsafe.SliceData(dst)), a.Ptr, len(dst), s)
	})
}
