package binding

// The decode entries: encoded images (JPEG, PNG) in, through a plan, into the caller's memory.
// python/goprep/_decode.py is their only caller. A call is two steps, because the plan of each image
// depends on its size, which only its header tells:
//
//  1. DecodeOpen reads the files (GIL released), probes every header and refuses bombs and bad
//     data before any pixel is decoded; it returns a batch handle and fills the header table.
//  2. DecodeRun decodes each image into a pooled buffer and runs its plan (traced by Python from the
//     header) into the output, the images spread over NumThreads goroutines, one image each.
//
// DecodeClose frees the batch (the file contents read in step 1).

import (
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/goprep/goprep/gomod/codec"
	"github.com/goprep/goprep/gomod/engine"
)

// Header table columns (DecodeOpen's hdr argument, int64 (count, HeaderCols)).
const (
	hdrFormat = iota // 0 JPEG, 1 PNG
	hdrHeight
	hdrWidth
	hdrComponents
	hdrOrientation
	hdrProgressive
	HeaderCols
)

// Run table columns (DecodeRun's desc argument, int64 (count, RunCols)).
const (
	runPlan   = iota // plan handle
	runOut           // output address (raw) of the item's result
	runScale         // JPEG DCT scale: 1, 2, 4 or 8
	runMode          // codec.Mode
	runOrient        // 1: apply the EXIF orientation
	RunCols
)

// maxFileBytes bounds a file DecodeOpen reads: far beyond any real image, far below what would
// exhaust memory by accident.
const maxFileBytes = 1 << 30

type encodedBatch struct {
	data []([]byte) // in-memory items alias the caller's buffers, which Python keeps alive
	hdr  []codec.Header
	name string // the caller's argument, which errors name: "data" or "src"
	list bool   // errors name "<name>[i]" (a list source) or "<name>"
}

var batches handles[*encodedBatch]

// HeaderColumns and RunColumns are the table widths, read by Python (one source).
func HeaderColumns() int64 { return HeaderCols }
func RunColumns() int64    { return RunCols }

// itemArg names item i the way the caller passed it.
func (b *encodedBatch) itemArg(i int) string {
	if b.list {
		return fmt.Sprintf("%s[%d]", b.name, i)
	}
	return b.name
}

// renamed returns err with its argument set to the item's name (codec errors say "data").
func (b *encodedBatch) renamed(i int, err error) error {
	if e, ok := err.(*engine.Error); ok {
		return &engine.Error{Code: e.Code, Arg: b.itemArg(i), Msg: e.Msg}
	}
	return &engine.Error{Code: engine.CodeDecode, Arg: b.itemArg(i), Msg: err.Error()}
}

// DecodeOpen reads count encoded items and probes their headers. desc is an int64 array object of
// (count, 2) rows: (address, length) of an in-memory buffer, or (-1, k) for the k-th of paths (each
// path's bytes in hex, comma-separated: any byte string the OS takes survives the trip), read here. hdr (an int64 array object of (count, HeaderCols)) receives each
// header. An image over maxPixels (0: no limit) is refused here, before anything is decoded. Errors
// name the argument name, or name[i] for a list.
func DecodeOpen(desc, count int64, paths string, hdr, maxPixels int64, name string, list bool) (h int64, err error) {
	defer engine.Recover(&err)
	if count < 1 || count > 1<<24 {
		return 0, engine.Errorf(engine.CodeInvalidArgument, name, "count %d out of range", count)
	}
	dp, err := readArrayData(desc)
	if err != nil {
		return 0, err
	}
	hp, err := readArrayData(hdr)
	if err != nil {
		return 0, err
	}
	d := unsafe.Slice((*int64)(dp), 2*count)
	ht := unsafe.Slice((*int64)(hp), HeaderCols*count)
	var names []string
	if paths != "" {
		for _, hx := range strings.Split(paths, ",") {
			p, err := hex.DecodeString(hx)
			if err != nil {
				return 0, engine.Errorf(engine.CodeInternal, name, "malformed path list: %v", err)
			}
			names = append(names, string(p))
		}
	}
	b := &encodedBatch{data: make([][]byte, count), hdr: make([]codec.Header, count), name: name, list: list}
	for i := range b.data {
		addr, n := d[2*i], d[2*i+1]
		switch {
		case addr == -1:
			if n < 0 || int(n) >= len(names) {
				return 0, engine.Errorf(engine.CodeInternal, b.itemArg(i), "path index %d out of range", n)
			}
			data, err := readFile(names[n])
			if err != nil {
				return 0, b.renamed(i, err)
			}
			b.data[i] = data
		case n < 0 || n > maxFileBytes:
			return 0, engine.Errorf(engine.CodeTooLarge, b.itemArg(i), "%d bytes is beyond the %d-byte limit", n, maxFileBytes)
		case n == 0:
			b.data[i] = nil
		default:
			p := *(*unsafe.Pointer)(unsafe.Pointer(&addr)) // memory Python owns, outside Go's heap
			b.data[i] = unsafe.Slice((*byte)(p), n)
		}
	}
	for i, data := range b.data {
		hd, err := codec.Probe(data)
		if err != nil {
			return 0, b.renamed(i, err)
		}
		if maxPixels > 0 && int64(hd.Height)*int64(hd.Width) > maxPixels {
			return 0, engine.Errorf(engine.CodeTooLarge, b.itemArg(i),
				"the image is %dx%d (%d pixels), beyond the limit of %d pixels (goprep.set_max_image_pixels)",
				hd.Width, hd.Height, int64(hd.Height)*int64(hd.Width), maxPixels)
		}
		b.hdr[i] = hd
		row := ht[HeaderCols*i : HeaderCols*(i+1)]
		row[hdrFormat] = 0
		if hd.Format == codec.PNG {
			row[hdrFormat] = 1
		}
		row[hdrHeight], row[hdrWidth], row[hdrComponents] = int64(hd.Height), int64(hd.Width), int64(hd.Components)
		row[hdrOrientation] = int64(hd.Orientation)
		row[hdrProgressive] = 0
		if hd.Progressive {
			row[hdrProgressive] = 1
		}
	}
	return batches.add(b), nil
}

// readFile reads a whole file, refusing one over maxFileBytes before reading it.
func readFile(name string) ([]byte, error) {
	st, err := os.Stat(name)
	if err != nil {
		return nil, engine.Errorf(engine.CodeDecode, "data", "cannot read %q: %v", name, unwrapPathErr(err))
	}
	if st.IsDir() {
		return nil, engine.Errorf(engine.CodeDecode, "data", "%q is a directory", name)
	}
	if st.Size() > maxFileBytes {
		return nil, engine.Errorf(engine.CodeTooLarge, "data", "%q is %d bytes, beyond the %d-byte limit", name, st.Size(), maxFileBytes)
	}
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, engine.Errorf(engine.CodeDecode, "data", "cannot read %q: %v", name, unwrapPathErr(err))
	}
	return data, nil
}

func unwrapPathErr(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// DecodeClose frees batch h; an unknown handle is ignored.
func DecodeClose(h int64) { batches.remove(h) }

// NumDecodeBatches is how many batches are open (tests check none leak).
func NumDecodeBatches() int64 { return int64(batches.len()) }

// decodeBuf is one goroutine's decode buffer, reused across the images it decodes: at most
// NumThreads of them are alive in a call, so a batch's peak memory is its outputs plus one decoded
// image per goroutine.
type decodeBuf struct{ b []byte }

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

func putDecodeBuf(b *decodeBuf) {
	if cap(b.b) > bigDecodeBuf {
		return
	}
	decodeBufs.Lock()
	defer decodeBufs.Unlock()
	if len(decodeBufs.free) < engine.NumThreads() {
		decodeBufs.free = append(decodeBufs.free, b)
	}
}

// DecodeRun decodes the items of batch h and runs each one's plan on it: desc is an int64 array object
// of (count, RunCols) rows (plan handle, output address, scale, mode, orientation flag), count the
// batch's size. The plan's source must be the decoded image's size (Python traced it from the header).
func DecodeRun(h, desc, count int64) (err error) {
	defer engine.Recover(&err)
	b, ok := batches.get(h)
	if !ok {
		return engine.Errorf(engine.CodeInvalidArgument, "handle", "unknown decode batch %d", h)
	}
	if count != int64(len(b.data)) {
		return engine.Errorf(engine.CodeInternal, "count", "%d rows for a batch of %d", count, len(b.data))
	}
	dp, err := readArrayData(desc)
	if err != nil {
		return err
	}
	d := unsafe.Slice((*int64)(dp), RunCols*count)
	jobs := make([]decodeJob, count)
	for i := range jobs {
		row := d[RunCols*i : RunCols*(i+1)]
		p, err := lookup(row[runPlan])
		if err != nil {
			return err
		}
		o := codec.Options{Scale: int(row[runScale]), Mode: codec.Mode(row[runMode]), ApplyOrientation: row[runOrient] != 0}
		oh, ow, oc := codec.OutSize(b.hdr[i], o)
		in := p.Spec.In
		// (the plan zeroes the strides of size-1 axes: those are never used to address)
		if in.DType != engine.U8 || in.N != 0 || in.H != oh || in.W != ow || in.C != oc ||
			oh > 1 && in.Strides[1] != int64(ow*oc) || ow > 1 && in.Strides[2] != int64(oc) || oc > 1 && in.Strides[3] != 1 {
			return engine.Errorf(engine.CodeInternal, b.itemArg(i), "the plan reads a %dx%dx%d source, the image decodes to %dx%dx%d", in.H, in.W, in.C, oh, ow, oc)
		}
		if y0, y1, x0, x1, ok := p.SourceWindow(); ok && (y1-y0 < oh || x1-x0 < ow) && (!o.ApplyOrientation || b.hdr[i].Orientation == 1) {
			o.Window = codec.Window{Y0: y0, Y1: y1, X0: x0, X1: x1} // decode only what the plan reads
		}
		out := row[runOut]
		jobs[i] = decodeJob{plan: p, opts: o, out: *(*unsafe.Pointer)(unsafe.Pointer(&out)), size: oh * ow * oc, stride: ow * oc}
	}
	threads := min(engine.NumThreads(), len(jobs))
	var next atomic.Int64
	var failed atomic.Bool
	errs := make([]error, len(jobs))
	var wg sync.WaitGroup
	work := func() {
		buf := getDecodeBuf()
		defer putDecodeBuf(buf)
		for !failed.Load() {
			i := int(next.Add(1) - 1)
			if i >= len(jobs) {
				return
			}
			if err := jobs[i].run(b.data[i], buf); err != nil {
				errs[i] = b.renamed(i, err)
				failed.Store(true)
				return
			}
		}
	}
	for range threads - 1 {
		wg.Go(func() {
			defer func() {
				if r := recover(); r != nil {
					errs[0] = engine.Errorf(engine.CodeInternal, "", "unexpected panic: %v", r)
					failed.Store(true)
				}
			}()
			work()
		})
	}
	work()
	wg.Wait()
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

type decodeJob struct {
	plan         *engine.Plan
	opts         codec.Options
	out          unsafe.Pointer
	size, stride int
}

// run decodes one image into buf and runs its plan from there into its output.
func (j *decodeJob) run(data []byte, buf *decodeBuf) error {
	if cap(buf.b) < j.size {
		buf.b = nil // the old buffer goes before the new one comes
		buf.b = make([]byte, j.size)
	}
	img := buf.b[:j.size]
	if err := codec.Decode(data, j.opts, img, j.stride); err != nil {
		return err
	}
	job := [1]engine.Job{{Plan: j.plan, Src: unsafe.Pointer(&img[0]), Out: j.out}}
	return engine.RunSerial(job[:])
}
