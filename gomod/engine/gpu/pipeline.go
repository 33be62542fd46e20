package gpu

// The copy/kernel pipeline: one GPU call as chunks (stage -> copy in -> fused kernel -> copy out) on
// gpuLanes lanes, so that staging, transfers and kernels of consecutive chunks overlap, and each
// image's copy in starts as soon as it is staged (stage.go).

import (
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/goprep/goprep/gomod/engine"
)

// gpuCall is one call as the pipeline runs it.
type gpuCall struct {
	jobs   []engine.Job
	devSrc bool     // every Job.Src is a device address (Call.DeviceSources)
	outDev uint64   // consecutive device outputs at outDev, or 0 for host outputs (Job.Out)
	stream Stream   // the caller's stream (stream=), or nil for goprep's own pooled streams
	waitOn []Stream // streams the sources were produced on: the lanes wait for them (events)
	times  *Times   // device times of the copies and kernels (profiler), or nil: not timed
}

// noSync: device sources into device outputs on the caller's stream need no host synchronisation at
// all; everything is queued on that stream and the call returns at once (CUDA-graph friendly).
func (c *gpuCall) noSync() bool {
	return c.stream != nil && c.outDev != 0 && c.devSrc
}

// run executes a call on the device. Errors are counted for the breaker; a panic becomes an error.
func (d *gpuDev) run(c *gpuCall) (err error) {
	state.calls.Add(1)
	defer func() {
		if r := recover(); r != nil {
			err = engine.Errorf(engine.CodeInternal, "", "GPU backend panic: %v", r)
		}
		if err != nil {
			recordFailure(err)
		} else {
			state.consecutive.Store(0)
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
	return d.pipeline(c)
}

// unit is one image of a call.
type unit struct {
	job      int
	src      unsafe.Pointer   // host source: the image's lowest source element
	srcDev   uint64           // device source: the same element's device address (src is nil)
	srcBytes int              // bytes staged and copied in (0 for a device source)
	stage    *engine.RowStage // stage only these rows (src is then the image origin), or nil: the span
	out      unsafe.Pointer   // host output (nil for device output)
	outDev   uint64           // device output when the call keeps results on the GPU
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
	times           *Times // the call's device times when it is timed, else nil
	spans           []span // timed operations queued since the lane's last synchronisation
}

// pipeline runs units in chunks on gpuLanes lanes: while the GPU copies and computes chunk k on one
// lane, the CPU stages chunk k+1 into the next lane's pinned buffer (queuing each image's copy as it
// goes), and copies chunk k+1-gpuLanes's output out. Device sources are read in place: nothing
// staged, nothing copied in.
func (d *gpuDev) pipeline(c *gpuCall) (err error) {
	jobs, outDev := c.jobs, c.outDev
	var units []unit
	at := outDev
	maxIn, maxOut := 0, 0
	for ji, j := range jobs {
		p := j.Plan
		lo, n := p.ImageSpan()
		es := p.InDType().Size()
		for img := 0; img < p.N; img++ {
			u := unit{job: ji, outBytes: p.OutImageBytes()}
			off := (p.ImageOrigin(img) + lo) * es
			switch {
			case c.devSrc:
				u.srcDev = uint64(int64(uintptr(j.Src)) + int64(off))
			case p.GPUStage() != nil: // only the rows the plan reads
				st := p.GPUStage()
				u.src, u.srcBytes, u.stage = unsafe.Add(j.Src, p.ImageOrigin(img)*es), st.Elems()*es, st
			default:
				u.src, u.srcBytes = unsafe.Add(j.Src, off), n*es
			}
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
	noSync := c.noSync()
	lanes := make([]lane, gpuLanes)
	defer func() {
		for i := range lanes {
			l := &lanes[i]
			if l.s != nil && !noSync {
				e := d.dev.Sync(l.s)
				if e != nil && err == nil {
					err = e
				}
				l.settle(d, e == nil)
			}
			if l.s != nil && c.stream == nil {
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
		if !noSync {
			l.times = c.times // a timed call waits for its lanes anyway (host outputs)
		}
		if c.stream != nil {
			l.s = c.stream // every lane on the caller's stream: its order is the call's order
		} else if l.s, err = d.stream(); err != nil {
			return err
		}
		for _, w := range c.waitOn {
			if w != l.s {
				if err := d.dev.StreamWait(l.s, w); err != nil {
					return err
				}
			}
		}
		if maxIn > 0 {
			if l.hostIn, err = d.host.get(chunkIn); err != nil {
				return err
			}
			if l.devIn, err = d.mem.get(chunkIn); err != nil {
				return err
			}
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
		kernel := jobs[units[start].job].Plan.GPUKernel()
		for end < len(units) {
			u := units[end]
			if end > start && (in+u.srcBytes > chunkIn || out+u.outBytes > chunkOut || jobs[u.job].Plan.GPUKernel() != kernel ||
				end-start >= maxChunkImages) {
				break
			}
			in, out = in+u.srcBytes, out+u.outBytes
			end++
		}
		l := &lanes[k%len(lanes)]
		if err := d.finish(l, noSync); err != nil {
			return err
		}
		l.units = units[start:end]
		if err := d.launch(jobs, l, outDev != 0, noSync); err != nil {
			return err
		}
		start = end
	}
	for i := range lanes {
		if err := d.finish(&lanes[(k+i)%len(lanes)], noSync); err != nil {
			return err
		}
	}
	return nil
}

// finish waits for a lane's chunk and copies its outputs from pinned memory to the caller's arrays.
// Without host sources or outputs (noSync) there is nothing to wait for: the lane's next chunk is
// queued behind this one on the same stream.
func (d *gpuDev) finish(l *lane, noSync bool) error {
	if !l.busy {
		return nil
	}
	l.busy = false
	if noSync {
		return nil
	}
	if err := d.dev.Sync(l.s); err != nil {
		return err
	}
	l.settle(d, true)
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

// copyPiece is the unit of parallel staging: big images are split so that all cores share even one
// large copy (a 1080p RGB image is 6 MiB; whole-image units left most cores idle on small batches).
const copyPiece = 1 << 20

// parallelCopy does the staging copies between NumPy memory and pinned buffers in ~1 MiB pieces on
// NumThreads goroutines: one core copies ~5-10 GB/s, less than a PCIe 4/5 link moves, so a
// single-threaded copy would cap GPU throughput on large batches.
func parallelCopy(pairs []copyPair) {
	total := 0
	for _, p := range pairs {
		total += len(p.dst)
	}
	threads := min(engine.NumThreads(), total/copyPiece+1)
	if threads <= 1 {
		for _, p := range pairs {
			copy(p.dst, p.src)
		}
		return
	}
	var pieces []copyPair
	for _, p := range pairs {
		for at := 0; at < len(p.dst); at += copyPiece {
			end := min(at+copyPiece, len(p.dst))
			pieces = append(pieces, copyPair{p.dst[at:end], p.src[at:end]})
		}
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < len(pieces); i = int(next.Add(1) - 1) {
				copy(pieces[i].dst, pieces[i].src)
			}
		}()
	}
	wg.Wait()
}

// launch stages one chunk and queues its copies in, kernel and copy out on the lane's stream: the
// tables first (they do not depend on the pixels), then each image's copy as soon as it is staged
// (stageAndSend), then the kernel behind them.
func (d *gpuDev) launch(jobs []engine.Job, l *lane, toDevice, noSync bool) error {
	images := make([]engine.BatchImage, len(l.units))
	var staged []stagedImage
	in, out := 0, 0
	for i, u := range l.units {
		images[i] = engine.BatchImage{Plan: jobs[u.job].Plan, SrcDev: u.srcDev, OutDev: u.outDev}
		if u.src != nil {
			dst := l.hostIn[in : in+u.srcBytes]
			im := stagedImage{lo: in, hi: in + u.srcBytes}
			if u.stage != nil {
				es := jobs[u.job].Plan.InDType().Size()
				for _, pc := range u.stage.Pieces() {
					im.pairs = append(im.pairs, copyPair{dst[pc[0]*es : (pc[0]+pc[2])*es], unsafe.Slice((*byte)(unsafe.Add(u.src, pc[1]*es)), pc[2]*es)})
				}
			} else {
				im.pairs = append(im.pairs, copyPair{dst, unsafe.Slice((*byte)(u.src), u.srcBytes)})
			}
			staged = append(staged, im)
			images[i].SrcDev, images[i].Staged = l.devIn.ptr+uint64(in), u.stage != nil
		}
		if !toDevice {
			images[i].OutDev = l.devOut.ptr + uint64(out)
		}
		in += u.srcBytes
		out += u.outBytes
	}
	b, err := engine.NewDeviceBatch(images)
	if err != nil {
		return err
	}
	if takeFault("launch") {
		return engine.Errorf(engine.CodeDeviceUnavailable, "device", "injected fault: kernel launch failed (CUDA_ERROR_LAUNCH_FAILED)")
	}
	l.busy = true
	if noSync {
		// Stream-ordered tables: allocated, filled, read and freed in the caller's stream order, so
		// no host wait is ever needed. The copy reads pageable memory, which CUDA stages before
		// cuMemcpyHtoDAsync returns, so the Go buffer may go at once. (No host sources here: device
		// sources are read in place.)
		p, err := d.dev.MemAllocAsync(b.ArenaBytes(), l.s)
		if err != nil {
			return err
		}
		arena := b.Encode(p)
		if err := d.dev.CopyHtoD(p, unsafe.Pointer(unsafe.SliceData(arena)), len(arena), l.s); err != nil {
			d.dev.MemFreeAsync(p, l.s)
			return err
		}
		err = d.dev.Launch(b.Launch(p), l.s)
		d.dev.MemFreeAsync(p, l.s)
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
	// Asynchronous copies read page-locked memory: the tables go through a pinned buffer as well.
	if len(l.hostArena) < len(arena) {
		d.host.release(l.hostArena)
		l.hostArena = nil
		if l.hostArena, err = d.host.get(len(arena)); err != nil {
			return err
		}
	}
	copy(l.hostArena, arena)
	if err := l.timed(d, false, func() error {
		return d.dev.CopyHtoD(l.devArena.ptr, unsafe.Pointer(unsafe.SliceData(l.hostArena)), len(arena), l.s)
	}); err != nil {
		return err
	}
	if err := d.stageAndSend(l, staged); err != nil {
		return err
	}
	if err := l.timed(d, true, func() error { return d.dev.Launch(b.Launch(l.devArena.ptr), l.s) }); err != nil {
		return err
	}
	if !toDevice {
		return l.timed(d, false, func() error {
			return d.dev.CopyDtoH(unsafe.Pointer(unsafe.SliceData(l.hostOut)), l.devOut.ptr, out, l.s)
		})
	}
	return nil
}

// Times is the device time of a call's work as the profiler reports it (gpu_copy_s,
// gpu_kernel_s): the summed durations of its copies (both directions, tables included) and of its
// kernels, each timed in stream order (CUDA events; on the simulated GPU, whose streams are
// synchronous, the wall time of each operation). Copies and kernels of different lanes overlap, so
// the two may add up to more than the call's wall time.
type Times struct {
	CopyNs, KernelNs int64
}

// span is one timed operation of a lane, resolved once its stream was synchronised.
type span struct {
	kernel bool
	a, b   any
}

// timed runs op, and when the call is timed (the profiler is on), marks the lane's stream around it.
func (l *lane) timed(d *gpuDev, kernel bool, op func() error) error {
	if l.times == nil {
		return op()
	}
	a, err := d.dev.Mark(l.s)
	if err != nil {
		return err
	}
	if err := op(); err != nil {
		d.dev.DropMark(a)
		return err
	}
	b, err := d.dev.Mark(l.s)
	if err != nil {
		d.dev.DropMark(a)
		return err
	}
	l.spans = append(l.spans, span{kernel, a, b})
	return nil
}

// settle adds the lane's timed operations to the call's times (done: its stream was synchronised,
// so every mark completed) and drops the marks.
func (l *lane) settle(d *gpuDev, done bool) {
	for _, sp := range l.spans {
		if done {
			if ns, err := d.dev.Elapsed(sp.a, sp.b); err == nil {
				if sp.kernel {
					l.times.KernelNs += ns
				} else {
					l.times.CopyNs += ns
				}
			}
		}
		d.dev.DropMark(sp.a)
		d.dev.DropMark(sp.b)
	}
	l.spans = l.spans[:0]
}
