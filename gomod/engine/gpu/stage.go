package gpu

import (
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/goprep/goprep/gomod/engine"
)

// stagedImage is one host image of a chunk as the pipeline stages it: its copies into the lane's
// pinned input buffer, and the bytes [lo, hi) of that buffer they fill.
type stagedImage struct {
	pairs  []copyPair
	lo, hi int
}

// minSend is the smallest host-to-device copy queued before the chunk's last image is staged:
// consecutive staged images are sent together up to this size, so batches of many tiny images do
// not pay a cuMemcpyHtoDAsync call (a few us each) per image, while a 1080p image (2.6 MB of staged
// rows) is sent on its own the moment its last piece is staged.
const minSend = copyPiece

// stageAndSend stages a chunk's host images into the lane's pinned buffer in ~1 MiB pieces on
// NumThreads goroutines and queues each image's copy to the device on the lane's stream as soon as
// that image (and every image before it: copies go in buffer order) is staged. So the PCIe transfer
// of a chunk runs alongside its staging instead of after it. Only this goroutine, whose OS thread
// has the device bound, calls the device; the workers only copy host memory. It returns after every
// worker finished, also on error, since the workers write into the lane's buffer.
func (d *gpuDev) stageAndSend(l *lane, imgs []stagedImage) error {
	if len(imgs) == 0 {
		return nil
	}
	if stageTrace != nil {
		stageTrace("chunk", len(imgs), 0)
	}
	sent := 0 // images [0, sent) have their copy queued
	send := func(upto int) error {
		if upto == sent {
			return nil
		}
		lo, hi := imgs[sent].lo, imgs[upto-1].hi
		if hi-lo < minSend && upto < len(imgs) {
			return nil // wait for more images, or the chunk's last
		}
		sent = upto
		if stageTrace != nil {
			stageTrace("h2d", lo, hi)
		}
		if hi == lo {
			return nil
		}
		return l.timed(d, false, func() error {
			return d.dev.CopyHtoD(l.devIn.ptr+uint64(lo), unsafe.Pointer(&l.hostIn[lo]), hi-lo, l.s)
		})
	}
	staged := func(i int) {
		if stageTrace != nil {
			stageTrace("staged", i, i)
		}
	}
	type piece struct {
		copyPair
		img int
	}
	var pieces []piece
	left := make([]atomic.Int32, len(imgs))
	for i, im := range imgs {
		for _, p := range im.pairs {
			for at := 0; at < len(p.dst); at += copyPiece {
				end := min(at+copyPiece, len(p.dst))
				pieces = append(pieces, piece{copyPair{p.dst[at:end], p.src[at:end]}, i})
				left[i].Add(1)
			}
		}
	}
	threads := min(engine.NumThreads(), len(pieces))
	if threads <= 1 {
		var err error
		at := 0
		for i := range imgs {
			for ; at < len(pieces) && pieces[at].img == i; at++ {
				copy(pieces[at].dst, pieces[at].src)
			}
			staged(i)
			if err == nil {
				err = send(i + 1)
			}
		}
		return err
	}
	done := make(chan int, len(imgs))
	for i := range imgs {
		if left[i].Load() == 0 {
			done <- i
		}
	}
	var next atomic.Int64
	work := func() bool { // copies one piece; false when none is left
		k := int(next.Add(1) - 1)
		if k >= len(pieces) {
			return false
		}
		pc := &pieces[k]
		copy(pc.dst, pc.src)
		if left[pc.img].Add(-1) == 0 {
			staged(pc.img)
			done <- pc.img
		}
		return true
	}
	// This goroutine is one of the copiers and queues copies between its pieces: with a goroutine
	// per core copying, a separate sender waited for a free core (the scheduler's 10 ms time
	// slice) and queued a chunk's first copy only near the end of its staging.
	var wg sync.WaitGroup
	for range threads - 1 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for work() {
			}
		}()
	}
	var err error
	ready := make([]bool, len(imgs))
	upto := 0
	got := func(i int) {
		ready[i] = true
		for upto < len(imgs) && ready[upto] {
			upto++
		}
		if err == nil {
			err = send(upto)
		}
	}
	for received := 0; received < len(imgs); {
		if !work() {
			got(<-done)
			received++
			continue
		}
	drain:
		for {
			select {
			case i := <-done:
				got(i)
				received++
			default:
				break drain
			}
		}
	}
	wg.Wait()
	return err
}
