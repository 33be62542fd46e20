package engine

import (
	"sync"
	"sync/atomic"
	"unsafe"
)

// Encoded jobs: a job whose source is an encoded image (Job.Enc: a JPEG or PNG item of the binding's
// decode batch) instead of an array. The CPU backend decodes it into its worker's decode buffer and
// runs the plan from there, serially: the images of a call are spread over the workers, one image
// each at a time, so a call's peak memory is its outputs plus one decoded image per worker. The
// engine knows nothing of the formats: the binding implements Encoded with package codec (which
// imports this package).

// Encoded is an encoded source, decoded on the CPU by the job's worker.
type Encoded interface {
	// Decode writes the decoded image (the plan's source: DecodedSource's h x w x c) into dst, its
	// rows stride bytes apart; an error names the item.
	Decode(dst []byte, stride int) error
}

// DecodedSource is the source an encoded job's plan reads: one contiguous uint8 h x w x c image, the
// decoder's layout; ok is false for any other source (a batch, strided, float32, YUV). The plan
// zeroes the strides of size-1 axes, which are never used to address.
func (p *Plan) DecodedSource() (h, w, c int, ok bool) {
	in := p.Spec.In
	if in.DType != U8 || in.N != 0 || in.YUV != nil || in.H < 1 || in.W < 1 || in.C < 1 ||
		in.H > 1 && in.Strides[1] != int64(in.W*in.C) || in.W > 1 && in.Strides[2] != int64(in.C) || in.C > 1 && in.Strides[3] != 1 {
		return 0, 0, 0, false
	}
	return in.H, in.W, in.C, true
}

// decodeBuf is one worker's decode buffer, reused across the images it decodes in a call, and the
// two scratch images of its staged jobs (staged_job.go).
type decodeBuf struct {
	b     []byte
	stage [2][]byte
}

// decodeBufs keeps up to NumThreads buffers between calls (a sync.Pool would drop them at every GC,
// and a serving loop would then allocate and zero a decoded image's worth of memory per call).
var decodeBufs struct {
	sync.Mutex
	free []*decodeBuf
}

// bigDecodeBuf: buffers above this are dropped after use rather than kept, so that one huge image
// does not keep its memory for the life of the process.
const bigDecodeBuf = 64 << 20

func getDecodeBuf() *decodeBuf {
	decodeBufs.Lock()
	defer decodeBufs.Unlock()
	if n := len(decodeBufs.free); n > 0 {
		b := decodeBufs.free[n-1]
		decodeBufs.free = decodeBufs.free[:n-1]
		return b
	}
	return &decodeBuf{}
}

// putDecodeBuf keeps b for the next call unless its decode buffer is big; a big stage image is
// dropped and the rest kept (a staged call whose first plan outputs a whole photo would pin it).
func putDecodeBuf(b *decodeBuf) {
	if cap(b.b) > bigDecodeBuf {
		return
	}
	for k := range b.stage {
		if cap(b.stage[k]) > bigDecodeBuf {
			b.stage[k] = nil
		}
	}
	decodeBufs.Lock()
	defer decodeBufs.Unlock()
	if len(decodeBufs.free) < NumThreads() {
		decodeBufs.free = append(decodeBufs.free, b)
	}
}

// ReleaseDecodeBuffers drops the decode buffers kept between calls (the binding's ReleaseMemory).
func ReleaseDecodeBuffers() {
	decodeBufs.Lock()
	decodeBufs.free = nil
	decodeBufs.Unlock()
}

// runEncoded runs a call holding encoded jobs (runCPU's validation done): each of min(threads,
// len(jobs)) goroutines, the caller's one of them, takes the next job, decodes it into its buffer
// (an array job runs from its source) and runs its plan serially. The first error in job order is
// returned; a failure stops the other goroutines before their next job. stop is checked before each
// job and between bands of rows: a call it cut short returns CodeCancelled.
func runEncoded(jobs []Job, threads int, stop *int32, ws workerSource) error {
	threads = max(1, min(threads, len(jobs)))
	errs := make([]error, len(jobs))
	var next atomic.Int64
	var failed atomic.Bool
	var firstPanic panicBox
	work := func() {
		defer func() {
			if r := recover(); r != nil {
				firstPanic.keep(r)
				failed.Store(true)
			}
		}()
		buf := getDecodeBuf()
		defer putDecodeBuf(buf)
		w := ws.get()
		defer ws.put(w)
		for !failed.Load() {
			i := int(next.Add(1) - 1)
			if i >= len(jobs) {
				return
			}
			if err := w.runEncodedJob(jobs, i, buf, stop); err != nil {
				errs[i] = err
				failed.Store(true)
				return
			}
		}
	}
	var wg sync.WaitGroup
	for range threads - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
	firstPanic.repanic() // every goroutine has stopped writing: CPU.Run recovers it
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// runEncodedJob decodes job i of jobs into buf (an array job reads its source) and runs its plan
// on w; CodeCancelled when stop is set before or while it runs.
func (w *worker) runEncodedJob(jobs []Job, i int, buf *decodeBuf, stop *int32) error {
	if stopped(stop) {
		return errCancelled()
	}
	j := jobs[i] // a copy: Src becomes the decoded image
	if j.Enc != nil {
		h, wd, c, ok := j.Plan.DecodedSource()
		if !ok {
			return errf(CodeInternal, "src", "an encoded source needs a plan of one contiguous uint8 image")
		}
		size := h * wd * c
		if cap(buf.b) < size {
			buf.b = nil // the old buffer goes before the new one comes
			buf.b = make([]byte, size)
		}
		img := buf.b[:size]
		if err := j.Enc.Decode(img, wd*c); err != nil {
			return err
		}
		j.Src = unsafe.Pointer(&img[0])
	}
	if j.Stages != nil {
		ok, err := w.runStages(j, i, buf, stop)
		if err == nil && !ok {
			err = errCancelled()
		}
		return err
	}
	w.reset() // the buffer's address repeats with other contents: no cached row carries over
	b := newJobBufs(&j)
	if !w.runJob(&j, i, &b, stop) {
		return errCancelled()
	}
	return nil
}
