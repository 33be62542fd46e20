package gpu

import (
	"math/bits"
	"sync"
	"unsafe"

	"github.com/goprep/goprep/gomod/engine"
)

// Device and pinned host memory pools. Allocating device or page-locked memory costs far more than a
// preprocessing call (cuMemAlloc synchronises the device; page-locking is a syscall per page range), so
// buffers are reused by power-of-two size class. Both pools are bounded: the device pool keeps at most
// its byte limit of idle buffers (varying shapes cannot grow memory without limit); the host pool keeps
// a fixed number idle, and pinned memory in use is bounded by the session limit (gpuSessions) times
// the six buffers a session holds. Device implementations bind their context in the alloc and free
// calls themselves, since releases can happen on any thread (a Python finaliser).

const minClass = 1 << 20 // smallest buffer handed out: tables and small images share one class

func sizeClass(n int) int {
	if n <= minClass {
		return minClass
	}
	return 1 << bits.Len(uint(n-1))
}

type devBuf struct {
	ptr  uint64
	size int // the class size, 0 for none
}

type devPool struct {
	dev           Device
	limit         int
	mu            sync.Mutex
	idle          map[int][]uint64
	cached, inUse int64
}

func newDevPool(d Device, limit int) *devPool {
	return &devPool{dev: d, limit: limit, idle: map[int][]uint64{}}
}

func (p *devPool) get(n int) (devBuf, error) {
	if takeFault("oom") {
		return devBuf{}, engine.Errorf(engine.CodeDeviceUnavailable, "device", "injected fault: out of device memory (CUDA_ERROR_OUT_OF_MEMORY)")
	}
	c := sizeClass(n)
	p.mu.Lock()
	if l := p.idle[c]; len(l) > 0 {
		ptr := l[len(l)-1]
		p.idle[c] = l[:len(l)-1]
		p.cached -= int64(c)
		p.inUse += int64(c)
		p.mu.Unlock()
		return devBuf{ptr, c}, nil
	}
	p.mu.Unlock()
	ptr, err := p.dev.MemAlloc(c)
	if err != nil {
		// Out of memory: drop every idle buffer and try once more before giving up.
		p.trim(0)
		if ptr, err = p.dev.MemAlloc(c); err != nil {
			return devBuf{}, err
		}
	}
	p.mu.Lock()
	p.inUse += int64(c)
	p.mu.Unlock()
	return devBuf{ptr, c}, nil
}

func (p *devPool) release(b devBuf) {
	if b.size == 0 {
		return
	}
	p.mu.Lock()
	p.inUse -= int64(b.size)
	if p.cached+int64(b.size) <= int64(p.limit) {
		p.idle[b.size] = append(p.idle[b.size], b.ptr)
		p.cached += int64(b.size)
		p.mu.Unlock()
		return
	}
	p.mu.Unlock()
	p.dev.MemFree(b.ptr)
}

// trim frees idle buffers until at most keep bytes stay cached.
func (p *devPool) trim(keep int64) {
	p.mu.Lock()
	var drop []uint64
	for c, l := range p.idle {
		for len(l) > 0 && p.cached > keep {
			drop = append(drop, l[len(l)-1])
			l = l[:len(l)-1]
			p.cached -= int64(c)
		}
		p.idle[c] = l
	}
	p.mu.Unlock()
	for _, ptr := range drop {
		p.dev.MemFree(ptr)
	}
}

func (p *devPool) usage() (cached, inUse int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cached, p.inUse
}

// hostBuf is a pinned buffer from hostPool: its length is its size class; nil for none.
type hostBuf []byte

// hostPool recycles pinned buffers, keeping at most keep idle. What bounds pinned memory in use is
// the device's session semaphore (gpuDev.sessions): each pipelined call holds a fixed set of buffers.
type hostPool struct {
	dev   Device
	keep  int
	mu    sync.Mutex
	idle  map[int][]unsafe.Pointer
	nIdle int
}

func newHostPool(d Device, keep int) *hostPool {
	return &hostPool{dev: d, keep: keep, idle: map[int][]unsafe.Pointer{}}
}

func (p *hostPool) get(n int) (hostBuf, error) {
	c := sizeClass(n)
	p.mu.Lock()
	if l := p.idle[c]; len(l) > 0 {
		ptr := l[len(l)-1]
		p.idle[c] = l[:len(l)-1]
		p.nIdle--
		p.mu.Unlock()
		return unsafe.Slice((*byte)(ptr), c), nil
	}
	p.mu.Unlock()
	ptr, err := p.dev.HostAlloc(c)
	if err != nil {
		return nil, err
	}
	return unsafe.Slice((*byte)(ptr), c), nil
}

func (p *hostPool) release(b hostBuf) {
	if b == nil {
		return
	}
	ptr := unsafe.Pointer(unsafe.SliceData(b))
	p.mu.Lock()
	keep := p.nIdle < p.keep
	if keep {
		p.idle[len(b)] = append(p.idle[len(b)], ptr)
		p.nIdle++
	}
	p.mu.Unlock()
	if !keep {
		p.dev.HostFree(ptr)
	}
}
