package binding

// The decode entries: encoded images (JPEG, PNG) in, through a plan, into the caller's memory.
// python/goprep/_decode.py opens and closes the batches; python/goprep/_run.py runs them. A call is
// two steps, because the plan of each image depends on its size, which only its header tells:
//
//  1. DecodeOpen reads the files (GIL released), probes every header and refuses bombs and bad
//     data before any pixel is decoded; it returns a batch handle and fills the header table.
//  2. Execute (gpu.go) runs jobs whose rows name an item of the batch (jobBatch, jobItem, the decode
//     options): encodedJob makes each an engine job with an encoded source (engine.Encoded), which the
//     engine's CPU backend decodes into a buffer kept per worker and runs the plan (traced by Python
//     from the header) on, the images spread over its workers, one image each (engine/decode_job.go).
//
// DecodeClose frees the batch (the file contents read in step 1).

import (
	"encoding/hex"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"unsafe"

	"github.com/goprep/goprep/gomod/codec"
	"github.com/goprep/goprep/gomod/engine"
)

// Header table columns (DecodeOpen's hdr argument, int64 (count, HeaderCols)).
const (
	hdrFormat = iota // an index into formats
	hdrHeight
	hdrWidth
	hdrComponents
	hdrOrientation
	hdrProgressive
	HeaderCols
)

// formats are the header table's format codes: hdrFormat holds the index of the image's format here.
var formats = []codec.Format{codec.JPEG, codec.PNG}

// Formats names the header table's format codes in order, comma-separated: Python maps the codes
// with it (one source).
func Formats() string {
	s := make([]string, len(formats))
	for i, f := range formats {
		s[i] = string(f)
	}
	return strings.Join(s, ",")
}

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

// HeaderColumns is the header table's width, read by Python (one source).
func HeaderColumns() int64 { return HeaderCols }

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
	// Two phases, each on NumThreads goroutines (a training batch's 256 file reads and probes were a
	// tenth of its 2-thread call when serial), each returning the first error in item order: every
	// read error before any probe error, as one loop after the other gave.
	errs := make([]error, count)
	eachItem(int(count), func(i int) {
		addr, n := d[2*i], d[2*i+1]
		switch {
		case addr == -1:
			if n < 0 || int(n) >= len(names) {
				errs[i] = engine.Errorf(engine.CodeInternal, b.itemArg(i), "path index %d out of range", n)
				return
			}
			data, err := readFile(names[n])
			if err != nil {
				errs[i] = b.renamed(i, err)
				return
			}
			b.data[i] = data
		case n < 0 || n > maxFileBytes:
			errs[i] = engine.Errorf(engine.CodeTooLarge, b.itemArg(i), "%d bytes is beyond the %d-byte limit", n, maxFileBytes)
		case n == 0:
			b.data[i] = nil
		default:
			p := *(*unsafe.Pointer)(unsafe.Pointer(&addr)) // memory Python owns, outside Go's heap
			b.data[i] = unsafe.Slice((*byte)(p), n)
		}
	})
	if err := firstError(errs); err != nil {
		return 0, err
	}
	eachItem(int(count), func(i int) {
		hd, err := codec.Probe(b.data[i])
		switch {
		case err != nil:
			errs[i] = b.renamed(i, err)
		case maxPixels > 0 && int64(hd.Height)*int64(hd.Width) > maxPixels:
			errs[i] = engine.Errorf(engine.CodeTooLarge, b.itemArg(i),
				"the image is %dx%d (%d pixels), beyond the limit of %d pixels (goprep.set_max_image_pixels)",
				hd.Width, hd.Height, int64(hd.Height)*int64(hd.Width), maxPixels)
		default:
			b.hdr[i] = hd
		}
	})
	if err := firstError(errs); err != nil {
		return 0, err
	}
	for i := range b.data {
		hd := b.hdr[i]
		row := ht[HeaderCols*i : HeaderCols*(i+1)]
		row[hdrFormat] = int64(slices.Index(formats, hd.Format))
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

// encodedItem is item i of batch b with its decode options: a job's encoded source (engine.Encoded).
type encodedItem struct {
	b    *encodedBatch
	i    int
	opts codec.Options
}

// Decode decodes the item into dst (rows stride bytes apart); its errors name the item.
func (e *encodedItem) Decode(dst []byte, stride int) error {
	decodedPixels.Add(e.pixels())
	if err := codec.Decode(e.b.data[e.i], e.opts, dst, stride); err != nil {
		return e.b.renamed(e.i, err)
	}
	return nil
}

// decodedPixels counts the pixels encoded jobs asked their decoder for (TestingDecodedPixels).
var decodedPixels atomic.Int64

// pixels is how many pixels the item's decode asks for: its window's, or the whole decoded image's.
func (e *encodedItem) pixels() int64 {
	if w := e.opts.Window; !w.Empty() {
		return int64(w.Y1-w.Y0) * int64(w.X1-w.X0)
	}
	h, w, _ := codec.OutSize(e.b.hdr[e.i], e.opts)
	return int64(h) * int64(w)
}

// TestingDecodedPixels is the running count of pixels that encoded jobs asked their decoder for (the
// crop-aware window when the plan reads part of the image, else the whole decoded image), so a test
// can tell that a crop decoded only its part. Test-only.
func TestingDecodedPixels() int64 { return decodedPixels.Load() }

// encodedJob makes the source of Execute's job row for plan p when the row names a decode batch
// (jobBatch != 0): item jobItem of it, decoded with the row's options. The plan must read exactly
// the decoded image (Python traced it from the header); it reads only its SourceWindow, which is all
// a JPEG decodes when the image is not rotated.
func encodedJob(p *engine.Plan, row []int64) (engine.Encoded, error) {
	b, ok := batches.get(row[jobBatch])
	if !ok {
		return nil, engine.Errorf(engine.CodeInvalidArgument, "handle", "unknown decode batch %d", row[jobBatch])
	}
	i := row[jobItem]
	if i < 0 || i >= int64(len(b.data)) {
		return nil, engine.Errorf(engine.CodeInternal, "item", "item %d of a batch of %d", i, len(b.data))
	}
	o := codec.Options{Scale: int(row[jobScale]), Mode: codec.Mode(row[jobMode]), ApplyOrientation: row[jobOrient] != 0}
	oh, ow, oc := codec.OutSize(b.hdr[i], o)
	if h, w, c, ok := p.DecodedSource(); !ok || h != oh || w != ow || c != oc {
		in := p.Spec.In
		return nil, engine.Errorf(engine.CodeInternal, b.itemArg(int(i)), "the plan reads a %dx%dx%d source, the image decodes to %dx%dx%d", in.H, in.W, in.C, oh, ow, oc)
	}
	if y0, y1, x0, x1, ok := p.SourceWindow(); ok && (y1-y0 < oh || x1-x0 < ow) && (!o.ApplyOrientation || b.hdr[i].Orientation == 1) {
		o.Window = codec.Window{Y0: y0, Y1: y1, X0: x0, X1: x1} // decode only what the plan reads
	}
	return &encodedItem{b: b, i: int(i), opts: o}, nil
}

// firstError is the first non-nil error of errs, in order (nil when there is none).
func firstError(errs []error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}
