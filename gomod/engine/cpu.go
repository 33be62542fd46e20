package engine

import (
	"runtime/debug"
	"sync"
	"sync/atomic"
	"unsafe"
)

// task is a band of output rows of one image.
type task struct {
	job    int
	img    int
	y0, y1 int
}

// Below this many output elements a call runs on the calling goroutine. Why: waking a second thread
// costs tens of microseconds on a VM; one 224x224x3 image (~130 us of work) ran no faster on 2 threads.
var inlineElems = 1 << 19 // a variable so tests can force the threaded path on small images

// Rows per task aim at several tasks per thread for load balance, but no fewer than this, so each
// task reuses its row cache.
const minBandRows = 8

// cancelBandElems caps a band's output elements when a call can be cancelled, so a stop is seen
// within one band's work (about a millisecond) even for one huge image.
const cancelBandElems = 1 << 20

func stopped(stop *int32) bool { return stop != nil && atomic.LoadInt32(stop) != 0 }

func runCPU(jobs []Job, threads int, stop *int32) (err error) {
	total, elems := 0, 0
	var scratch, images int64
	encoded := false
	for i := range jobs {
		j := &jobs[i]
		if j.Plan == nil || j.Out == nil || j.Src == nil && j.Enc == nil {
			return errf(CodeInvalidArgument, "src", "null plan or buffer")
		}
		encoded = encoded || j.Enc != nil || j.Stages != nil // staged jobs run as encoded ones do
		total += j.Plan.N * j.Plan.OutH
		elems += j.Plan.N * j.Plan.OutImageElems()
		scratch = max(scratch, j.Plan.est.Scratch, stagesScratch(j.Stages))
		images = max(images, stagedImages(j))
	}
	if total == 0 {
		return nil
	}
	ws, threads := scratchWorkers(scratch, images, threads)
	if !ws.pooled {
		defer debug.FreeOSMemory()
	}
	if encoded {
		return runEncoded(jobs, threads, stop, ws) // decode_job.go: one image per worker at a time
	}
	if elems < inlineElems {
		threads = 1
	}
	if threads <= 1 {
		// Whole images on the calling goroutine, nothing allocated: this is the path of every small
		// call, where the per-call cost (not the pixels) is what a serving loop pays. A cancellable
		// call runs the images in bands (the worker's row cache carries across consecutive bands).
		w := ws.get()
		defer ws.put(w)
		for ji := range jobs {
			b := newJobBufs(&jobs[ji])
			if !w.runJob(&jobs[ji], ji, &b, stop) {
				return errCancelled()
			}
		}
		return nil
	}
	band := max(total/(threads*4), minBandRows)
	var tasks []task
	for ji := range jobs {
		p := jobs[ji].Plan
		pb := band
		if stop != nil {
			pb = max(1, min(band, cancelBand(p)))
		}
		for img := 0; img < p.N; img++ {
			for y := 0; y < p.OutH; y += pb {
				tasks = append(tasks, task{ji, img, y, min(y+pb, p.OutH)})
			}
		}
	}
	threads = min(threads, len(tasks))
	bufs := make([]jobBufs, len(jobs))
	for i := range jobs {
		bufs[i] = newJobBufs(&jobs[i])
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	var firstPanic panicBox
	var halted atomic.Bool
	for g := 0; g < threads; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer firstPanic.recover()
			w := ws.get()
			defer ws.put(w)
			for {
				i := int(next.Add(1) - 1)
				if i >= len(tasks) {
					return
				}
				if stopped(stop) {
					halted.Store(true)
					return
				}
				t := tasks[i]
				w.run(&jobs[t.job], &bufs[t.job], t)
			}
		}()
	}
	wg.Wait()
	firstPanic.repanic() // on the calling goroutine, where CPU.Run recovers it
	if halted.Load() {
		return errCancelled()
	}
	return nil
}

// errCancelled is the error of a call its cancel flag stopped before all of its work was done.
func errCancelled() error { return errf(CodeCancelled, "", "the call was cancelled") }

// cancelBand is the most output rows of p a band holds in a cancellable call (cancelBandElems).
func cancelBand(p *Plan) int { return max(1, min(p.OutH, cancelBandElems/max(1, p.OutW*p.OutC))) }

// runJob runs all images of job j (jobs index ji) on w, whole, or in bands of cancelBand rows when
// stop can cancel, checking stop before each band; false when stop cut the job short.
func (w *worker) runJob(j *Job, ji int, b *jobBufs, stop *int32) bool {
	p := j.Plan
	band := p.OutH
	if stop != nil {
		band = cancelBand(p)
	}
	for img := 0; img < p.N; img++ {
		for y := 0; y < p.OutH; y += band {
			if stopped(stop) {
				return false
			}
			w.run(j, b, task{ji, img, y, min(y+band, p.OutH)})
		}
	}
	return true
}

// workerSource hands out a call's workers: pooled ones, or for plans whose scratch rows are big
// fresh ones that are never kept (a pooled worker would keep them for the life of the process).
type workerSource struct{ pooled bool }

func (s workerSource) get() *worker {
	if !s.pooled {
		return &worker{}
	}
	w := workers.Get().(*worker)
	w.reset()
	return w
}

// put returns a pooled worker without its last source: the pool must not keep the caller's
// array (or a decode buffer) reachable after the call.
func (s workerSource) put(w *worker) {
	if s.pooled {
		w.src, w.fresh = nil, false
		workers.Put(w)
	}
}

// scratchWorkers is the worker policy of a call whose biggest plan needs scratch bytes of rows per
// worker and whose staged jobs hold images bytes of scratch images per worker (stagedImages): big
// scratch rows are not pooled (the caller then hands the memory back to the OS when the call ends),
// and once a worker's rows and images pass BigPlanBytes at most MaxPlanBytes of them is live at
// once: fewer goroutines for huge rows or stage images.
func scratchWorkers(scratch, images int64, threads int) (workerSource, int) {
	ws := workerSource{pooled: scratch <= BigPlanBytes}
	if live := scratch + images; live > BigPlanBytes {
		threads = max(1, min(threads, int(MaxPlanBytes/live)))
	}
	return ws, threads
}

// panicBox keeps the first panic of a call's goroutines, to re-raise it on the calling goroutine
// once every goroutine has stopped writing.
type panicBox struct {
	mu sync.Mutex
	v  any
	ok bool
}

// recover is deferred by each goroutine of a call.
func (b *panicBox) recover() {
	if r := recover(); r != nil {
		b.keep(r)
	}
}

// keep records panic value r unless an earlier one was recorded.
func (b *panicBox) keep(r any) {
	b.mu.Lock()
	if !b.ok {
		b.v, b.ok = r, true
	}
	b.mu.Unlock()
}

func (b *panicBox) repanic() {
	if b.ok {
		panic(b.v)
	}
}

// workers recycles scratch rows across calls: a serving loop calls the same plan again and again,
// and reallocating a worker's buffers was a measurable part of a tiny image's ~1us of Go time.
var workers = sync.Pool{New: func() any { return &worker{} }}

// jobBufs are bounds-checked slices over a job's source and output memory.
type jobBufs struct {
	srcU8  []uint8
	srcF32 []float32
	outU8  []uint8
	outF32 []float32
	outF16 []uint16
}

func newJobBufs(j *Job) jobBufs {
	p := j.Plan
	var b jobBufs
	switch p.Spec.In.DType {
	case U8:
		b.srcU8 = unsafe.Slice((*uint8)(unsafe.Add(j.Src, p.minOff)), p.spanElems)
	case F32:
		b.srcF32 = unsafe.Slice((*float32)(unsafe.Add(j.Src, p.minOff*4)), p.spanElems)
	}
	n := p.N * p.OutImageElems()
	switch p.OutDType {
	case U8:
		b.outU8 = unsafe.Slice((*uint8)(j.Out), n)
	case F32:
		b.outF32 = unsafe.Slice((*float32)(j.Out), n)
	case F16:
		b.outF16 = unsafe.Slice((*uint16)(j.Out), n)
	}
	return b
}

// worker owns the scratch rows of one goroutine: a small direct-mapped cache of horizontally resampled
// source rows (consecutive output rows share source rows when upscaling), the vertically combined
// content row, and the full output row before conversion. Nothing is allocated per pixel or per row.
type worker struct {
	plan   *Plan
	img    int
	src    unsafe.Pointer // the cached rows belong to this source array (jobs may share one plan)
	ring   int
	keys   []int32
	hI32   [][]int32
	hI16   [][]int16 // the fast path's rows (resize_fast.go)
	hU8    [][]uint8
	hF32   [][]float32
	rowU8  []uint8
	rowU8b []uint8 // the second row of a vertical-first pair (vfirstRowsU8)
	rowF32 []float32
	valU8  []uint8
	valF32 []float32
	taps   [][]uint8 // the cached rows one antialiased output row reads
	aaRows [][]uint8 // the same for the fast antialias path (resize_aa.go)
	aaEdge []byte    // copies of the image's edge rows for aaHRows4W
	aaTail [][]uint8 // the rows' columns past vresizeAAU8Paired's (aaVU8)
	acc    []int32   // vertical sums of one antialiased row
	vfU8   []uint8   // a vertical-first Pillow row before its horizontal pass (vfirstRowU8)
	vfAcc  []int32   // its sums
	vfPl   []uint8   // its horizontal pass's planar result (aaHRows)
	fresh  bool      // the row cache belongs to the current call (sources change between calls)
	// a YUV plan's converted source rows (yuv.go), or a premultiplied plan's (premul.go), slot after
	// slot, and the logical row each slot holds
	yuvBuf  []uint8
	yuvKeys []int32
	// the patch layout's band buffer (normalize_patch.go: Size planar rows, grown on first use), and
	// the rows it holds: patchN rows from patchY0
	patchRow        []float32
	patchY0, patchN int
}

// prepare resets the caches when the worker moves to another plan or image.
func (w *worker) prepare(p *Plan, img int, src unsafe.Pointer) {
	if w.plan == p && w.img == img && w.src == src && w.fresh {
		return
	}
	if w.plan != p {
		contentW := (p.cols.Hi - p.cols.Lo) * p.inC
		w.ring = p.rows.Taps.K + 1
		if p.aa != nil || p.aaU8 != nil {
			w.ring += 3 // the fast antialias path computes up to 3 rows ahead (aaLookahead)
		}
		w.keys = make([]int32, w.ring)
		w.hI32, w.hU8, w.hF32 = make([][]int32, w.ring), make([][]uint8, w.ring), make([][]float32, w.ring)
		w.hI16 = make([][]int16, w.ring)
		for i := range w.ring {
			w.hI16[i] = make([]int16, contentW)
			w.hI32[i] = make([]int32, contentW)
			w.hU8[i] = make([]uint8, contentW+16)[:contentW] // 16 spare bytes: SIMD loads past a plane's end
			w.hF32[i] = make([]float32, contentW)
		}
		w.rowU8 = make([]uint8, contentW)
		w.rowU8b = nil
		if p.vfH != nil {
			w.rowU8b = make([]uint8, contentW)
		}
		w.acc = make([]int32, contentW)
		w.rowF32 = make([]float32, contentW)
		w.valU8 = make([]uint8, p.OutW*p.OutC)
		w.valF32 = make([]float32, p.OutW*p.OutC)
		w.yuvBuf, w.yuvKeys = nil, nil
		if y := p.yuv; y != nil {
			w.yuvKeys = make([]int32, y.ring)
			w.yuvBuf = make([]uint8, y.bufLen())
		}
		if pm := p.pm; pm != nil {
			w.yuvKeys = make([]int32, pm.ring)
			w.yuvBuf = make([]uint8, pm.bufLen())
		}
	}
	w.plan, w.img, w.src, w.fresh = p, img, src, true
	for i := range w.keys {
		w.keys[i] = -1
	}
	for i := range w.yuvKeys {
		w.yuvKeys[i] = -1
	}
}

// reset forgets cached rows: the next call may read different memory through the same plan.
func (w *worker) reset() { w.fresh = false }

// run computes the output rows of task t.
func (w *worker) run(j *Job, b *jobBufs, t task) {
	p := j.Plan
	w.prepare(p, t.img, j.Src)
	w.patchN = 0 // no rows buffered from an earlier task (one a panic cut short)
	base := -p.minOff + t.img*p.strideN
	u8 := p.Spec.In.DType == U8
	for y := t.y0; y < t.y1; y++ {
		content := y >= p.rows.Lo && y < p.rows.Hi && p.cols.Hi > p.cols.Lo
		if u8 {
			if content && p.fast != nil {
				if k := w.duoRows(p, b, base, t.img, y, t.y1); k > 0 {
					y += k - 1 // the rows [y, y+k) in one go (resize_fast_amd64.go)
					continue
				}
				w.fastRow(p, b, base, t.img, y)
				continue
			}
			if content && p.aa != nil {
				w.aaRow(p, b, base, t.img, y)
				continue
			}
			if content && p.vfH != nil && p.pm == nil && y+1 < t.y1 && y+1 < p.rows.Hi {
				// two vertical-first rows, one horizontal pass (vfirstRowsU8), emitted in turn
				w.vfirstRowsU8(p, b.srcU8, base, y-p.rows.Lo)
				w.emitU8(p, b, t.img, y, true)
				w.rowU8, w.rowU8b = w.rowU8b, w.rowU8
				w.emitU8(p, b, t.img, y+1, true)
				w.rowU8, w.rowU8b = w.rowU8b, w.rowU8
				y++
				continue
			}
			if content {
				w.resizeRowU8(p, b.srcU8, base, y-p.rows.Lo)
				if p.pm != nil {
					unpremulRow(w.rowU8)
				}
			}
			w.emitU8(p, b, t.img, y, content)
		} else {
			if content {
				w.resizeRowF32(p, b.srcF32, base, y-p.rows.Lo)
			}
			w.emitF32(p, b, t.img, y, content)
		}
	}
	if p.patch != nil { // the rows of a band the task ended in (normalize_patch.go)
		w.patchFlush(p, b, t.img)
	}
}

// slot returns the cache slot for source row r and whether it already holds it.
func (w *worker) slot(r int32) (int, bool) {
	s := int(r) % w.ring
	if w.keys[s] == r {
		return s, true
	}
	w.keys[s] = r
	return s, false
}
