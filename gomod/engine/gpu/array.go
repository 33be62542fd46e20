package gpu

// Device arrays: results kept in device memory (output="device") and uploads (goprep.to_device),
// with stream-ordered lifetime: an array is freed on the last stream known to use it, so neither a
// free nor a consumer's import ever waits for unrelated work on the device.

import (
	"sync"
	"unsafe"

	"github.com/goprep/goprep/gomod/engine"
)

// LegacyStream is CUDA's legacy default stream handle (CU_STREAM_LEGACY): what DLPack and the CUDA
// array interface mean by "no stream given", and what torch's default stream is.
const LegacyStream = 1

// DeviceArray is memory on a GPU that goprep allocated (stream-ordered, cuMemAllocAsync).
type DeviceArray struct {
	Ptr    uint64
	Bytes  int
	Device int
	dev    *gpuDev
	mu     sync.Mutex // Free waits for a CopyToHost in progress
	freed  bool
	// ready is the stream the contents were produced on and are not yet synchronised with the host
	// (nil when the producing call synchronised): consumers wait on it (StreamWait, CAI "stream").
	ready Stream
	// last is where the memory is freed: the last stream known to use it (a DLPack consumer's
	// stream, else the producing stream, else the legacy default stream).
	last Stream
	// ReadyHandle is ready's handle for the CUDA array interface (0: synchronised, none needed).
	ReadyHandle uint64
}

// Free returns the memory in stream order on the last stream that used it; later calls do nothing.
func (a *DeviceArray) Free() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.freed {
		return
	}
	a.freed = true
	_ = a.dev.bound(func() error { a.dev.dev.MemFreeAsync(a.Ptr, a.last); return nil })
}

// ExportTo prepares the array for a consumer that will use it on stream h (DLPack __dlpack__(stream=)):
// the consumer's stream waits for the producing work, and the memory is freed on that stream from
// then on. h == 0 means the consumer gave no stream (-1 in DLPack: the consumer synchronises itself);
// the free stream then stays as it is.
func (a *DeviceArray) ExportTo(h uint64) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.freed {
		return engine.Errorf(engine.CodeInvalidArgument, "array", "device array already freed")
	}
	if h == 0 {
		return nil
	}
	s := a.dev.dev.ForeignStream(h)
	if a.ready != nil && a.ready != s {
		if err := a.dev.bound(func() error { return a.dev.dev.StreamWait(s, a.ready) }); err != nil {
			return err
		}
	}
	a.last = s
	return nil
}

// newArray allocates a device array in stream order on s (nil: the legacy default stream, then
// waited for, so that any stream may use it at once).
func (d *gpuDev) newArray(n int, s Stream, index int) (*DeviceArray, error) {
	if takeFault("oom") {
		return nil, engine.Errorf(engine.CodeDeviceUnavailable, "device", "injected fault: out of device memory (CUDA_ERROR_OUT_OF_MEMORY)")
	}
	a := &DeviceArray{Bytes: n, Device: index, dev: d, last: s}
	err := d.bound(func() error {
		own := s == nil
		if own {
			a.last = d.dev.ForeignStream(LegacyStream)
		}
		p, err := d.dev.MemAllocAsync(max(n, 1), a.last)
		if err != nil {
			return err
		}
		a.Ptr = p
		if own {
			return d.dev.Sync(a.last) // only the allocation is queued there: no one else's work
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return a, nil
}

// Upload copies host data into a new device array on GPU index (goprep.to_device). With a stream
// handle the copy is queued there and the array is ready on that stream; otherwise it is complete
// when Upload returns.
func Upload(data []byte, index int, stream uint64, hasStream bool) (*DeviceArray, error) {
	d, err := device(index)
	if err != nil {
		return nil, err
	}
	var s Stream
	if hasStream {
		s = d.dev.ForeignStream(stream)
	}
	a, err := d.newArray(len(data), s, index)
	if err != nil {
		return nil, err
	}
	if len(data) == 0 {
		return a, nil
	}
	if err := d.upload(a.Ptr, data, s); err != nil {
		a.Free()
		return nil, err
	}
	if s != nil {
		a.ready, a.ReadyHandle = s, stream
	}
	return a, nil
}

// CopyToHost copies the array into host memory, in order after the last stream known to use it (a
// framework may have written into the array there), and waits for that copy only.
func (a *DeviceArray) CopyToHost(dst []byte) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.freed {
		return engine.Errorf(engine.CodeInvalidArgument, "array", "device array already freed")
	}
	return a.dev.bound(func() error {
		if err := a.dev.dev.CopyDtoH(unsafe.Pointer(unsafe.SliceData(dst)), a.Ptr, len(dst), a.last); err != nil {
			return err
		}
		return a.dev.dev.Sync(a.last)
	})
}
