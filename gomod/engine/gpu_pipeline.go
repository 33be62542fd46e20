package engine

// The copy/kernel pipeline: one GPU call as chunks (stage -> copy in -> fused kernel -> copy out) on
// two lanes, so that staging, transfers and kernels of consecutive chunks overlap.

import (
	"sync"
	"sync/atomic"
	"unsafe"
)

// run executes jobs on the device: host outputs when outDev == 0, else consecutive outputs in device
// memory at outDev. Errors are counted for the breaker; a panic becomes an error.
func (d *gpuDev) run(jobs []Job, outDev uint64) (err error) {
	gpu.calls.Add(1)
	defer func() {
		if r := recover(); r != nil {
			err = errf(CodeInternal, "", "GPU backend panic: %v", r)
		}
		if err != nil {
			recordFailure(err)
		} else {
			gpu.consecutive.Store(0)
		}
	}()
	// All buffers of a call are taken under one session slot, so concurrent calls cannot deadlock
	// holding part of what they need.
	d.sessions <- struct{}{}
	defer func() { <-d.sessions }()
	unbind, err := d.dev.Bind()
	if err != nil {
		return err
	}
	defer unbind()
	return d.pipeline(jobs, outDev)
}

// unit is one image of a call.
type unit struct {
	job      int
	src      unsafe.Pointer // the image's lowest source element
	srcBytes int
	out      unsafe.Pointer // host output (nil for device output)
	outDev   uint64         // device output when the call keeps results on the GPU
	outBytes int
}

// lane is one of the two pipeline slots: its stream, pinned staging and device buffers, and the units
// of the chunk in flight on it.
type lane struct {
	s               Stream
	hostIn, hostOut hostBuf
	hostArena       hostBuf
	devIn, devOut   devBuf
	devArena        devBuf
	units           []unit
	busy            bool
}

// pipeline runs units in chunks on two lanes: while the GPU copies and computes chunk k on one lane,
// the CPU stages chunk k+1 into the other lane's pinned buffer, and copies chunk k-1's output out.
func (d *gpuDev) pipeline(jobs []Job, outDev uint64) (err error) {
	var units []unit
	at := outDev
	maxIn, maxOut := 0, 0
	for ji, j := range jobs {
		p := j.Plan
		lo, n := p.ImageSpan()
		es := p.InDType().Size()
		for img := 0; img < p.N; img++ {
			u := unit{job: ji, srcBytes: n * es, outBytes: p.OutImageBytes()}
			u.src = unsafe.Add(j.Src, (p.ImageOrigin(img)+lo)*es)
			if outDev == 0 {
				u.out = unsafe.Add(j.Out, img*u.outBytes)
			} else {
				u.outDev = at
				at += uint64(u.outBytes)
			}
			maxIn, maxOut = max(maxIn, u.srcBytes), max(maxOut, u.outBytes)
			units = append(units, u)
		}
	}
	chunkIn, chunkOut := max(gpuChunkBytes, maxIn), max(gpuChunkBytes, maxOut)
	var lanes [2]lane
	defer func() {
		for i := range lanes {
			l := &lanes[i]
			if l.s != nil {
				if e := d.dev.Sync(l.s); e != nil && err == nil {
					err = e
				}
				d.putStream(l.s)
			}
			d.host.release(l.hostIn)
			d.host.release(l.hostOut)
			d.host.release(l.hostArena)
			d.mem.release(l.devIn)
			d.mem.release(l.devOut)
			d.mem.release(l.devArena)
		}
	}()
	for i := range lanes {
		l := &lanes[i]
		if l.s, err = d.stream(); err != nil {
			return err
		}
		if l.hostIn, err = d.host.get(chunkIn); err != nil {
			return err
		}
		if l.devIn, err = d.mem.get(chunkIn); err != nil {
			return err
		}
		if outDev == 0 {
			if l.hostOut, err = d.host.get(chunkOut); err != nil {
				return err
			}
			if l.devOut, err = d.mem.get(chunkOut); err != nil {
				return err
			}
		}
	}
	k := 0
	for start := 0; start < len(units); k++ {
		// Greedy chunk: as many images as fit both budgets, one kernel (source dtype and channel
		// count) per launch, and at most maxChunkImages descriptors (many tiny images must not make a
		// huge descriptor table).
		end, in, out := start, 0, 0
		kernel := jobs[units[start].job].Plan.kernel()
		for end < len(units) {
			u := units[end]
			if end > start && (in+u.srcBytes > chunkIn || out+u.outBytes > chunkOut || jobs[u.job].Plan.kernel() != kernel ||
				end-start >= maxChunkImages) {
				break
			}
			in, out = in+u.srcBytes, out+u.outBytes
			end++
		}
		l := &lanes[k%2]
		if err := d.finish(l); err != nil {
			return err
		}
		l.units = units[start:end]
		if err := d.launch(jobs, l, outDev != 0); err != nil {
			return err
		}
		start = end
	}
	for i := range lanes {
		if err := d.finish(&lanes[(k+i)%2]); err != nil {
			return err
		}
	}
	return nil
}

// finish waits for a lane's chunk and copies its outputs from pinned memory to the caller's arrays.
func (d *gpuDev) finish(l *lane) error {
	if !l.busy {
		return nil
	}
	l.busy = false
	if err := d.dev.Sync(l.s); err != nil {
		return err
	}
	var cp []copyPair
	at := 0
	for _, u := range l.units {
		if u.out != nil {
			cp = append(cp, copyPair{unsafe.Slice((*byte)(u.out), u.outBytes), l.hostOut[at : at+u.outBytes]})
			at += u.outBytes
		}
	}
	parallelCopy(cp)
	return nil
}

type copyPair struct{ dst, src []byte }

// parallelCopy does the staging copies between NumPy memory and pinned buffers on NumThreads
// goroutines: one core copies ~5-10 GB/s, less than a PCIe 4/5 link moves, so a single-threaded
// copy would cap GPU throughput on large batches.
func parallelCopy(pairs []copyPair) {
	total := 0
	for _, p := range pairs {
		total += len(p.dst)
	}
	threads := min(NumThreads(), total/(1<<20)+1, len(pairs))
	if threads <= 1 {
		for _, p := range pairs {
			copy(p.dst, p.src)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < len(pairs); i = int(next.Add(1) - 1) {
				copy(pairs[i].dst, pairs[i].src)
			}
		}()
	}
	wg.Wait()
}

// launch stages one chunk and queues its copy in, kernel and copy out on the lane's stream.
func (d *gpuDev) launch(jobs []Job, l *lane, toDevice bool) error {
	images := make([]BatchImage, len(l.units))
	cp := make([]copyPair, len(l.units))
	in, out := 0, 0
	for i, u := range l.units {
		cp[i] = copyPair{l.hostIn[in : in+u.srcBytes], unsafe.Slice((*byte)(u.src), u.srcBytes)}
		images[i] = BatchImage{Plan: jobs[u.job].Plan, SrcDev: l.devIn.ptr + uint64(in), OutDev: u.outDev}
		if !toDevice {
			images[i].OutDev = l.devOut.ptr + uint64(out)
		}
		in += u.srcBytes
		out += u.outBytes
	}
	parallelCopy(cp)
	b, err := NewDeviceBatch(images)
	if err != nil {
		return err
	}
	if l.devArena.size < b.ArenaBytes() {
		d.mem.release(l.devArena)
		l.devArena = devBuf{}
		if l.devArena, err = d.mem.get(b.ArenaBytes()); err != nil {
			return err
		}
	}
	arena := b.Encode(l.devArena.ptr)
	if takeFault("launch") {
		return errf(CodeDeviceUnavailable, "device", "injected fault: kernel launch failed (CUDA_ERROR_LAUNCH_FAILED)")
	}
	// Asynchronous copies read page-locked memory: the tables go through a pinned buffer as well.
	if len(l.hostArena) < len(arena) {
		d.host.release(l.hostArena)
		l.hostArena = nil
		if l.hostArena, err = d.host.get(len(arena)); err != nil {
			return err
		}
	}
	copy(l.hostArena, arena)
	l.busy = true
	if err := d.dev.CopyHtoD(l.devIn.ptr, unsafe.Pointer(unsafe.SliceData(l.hostIn)), in, l.s); err != nil {
		return err
	}
	if err := d.dev.CopyHtoD(l.devArena.ptr, unsafe.Pointer(unsafe.SliceData(l.hostArena)), len(arena), l.s); err != nil {
		return err
	}
	if err := d.dev.Launch(b.Launch(l.devArena.ptr), l.s); err != nil {
		return err
	}
	if !toDevice {
		return d.dev.CopyDtoH(unsafe.Pointer(unsafe.SliceData(l.hostOut)), l.devOut.ptr, out, l.s)
	}
	return nil
}
