package serve

// One execution: the requests of a batch (or one request) decoded and preprocessed in Go, each
// image on its own goroutine into its row of one output buffer, and each request's reply built from
// its rows. A request whose file does not decode, or whose size has no plan, fails alone: the
// others' images are independent jobs. Stages as triton.py defines them: compute_input is reading
// the inputs (the headers probed, the sizes' plans fetched), compute_infer the decode and
// preprocessing, compute_output the replies.

import (
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"sync"
	"time"
	"unsafe"

	"github.com/goprep/goprep/gomod/codec"
	"github.com/goprep/goprep/gomod/engine"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// image is one image of a batch: its request, source (a file or a frame) and plan.
type image struct {
	p    *pending
	k    int // index within its request
	file []byte
	h, w int
	plan *engine.Plan
}

func (s *Server) execute(batch []*pending) {
	defer func() { // a panic fails the batch's requests, not the process
		if r := recover(); r != nil {
			s.logf("an execution of %d requests panicked: %v\n%s", len(batch), r, debug.Stack())
			for _, p := range batch {
				select { // unanswered ones only: done holds one result
				case p.done <- result{err: status.Error(codes.Internal, s.cfg.InternalMessage)}:
				default:
				}
			}
		}
	}()
	t := &timing{start: time.Now()}
	failed := make(map[*pending]error)
	var imgs []*image
	first := make(map[*pending]int, len(batch)) // where each request's images begin in imgs
	for _, p := range batch {
		q := p.req
		var mine []*image
		for k := range q.n {
			im := &image{p: p, k: k, h: q.h, w: q.w}
			if q.encoded {
				im.file = q.files[k]
				hd, err := codec.Probe(im.file)
				if err != nil {
					failed[p] = status.Errorf(codes.InvalidArgument, "%s is not a readable JPEG or PNG file: %v", where(k), err)
					break
				}
				if int64(hd.Height)*int64(hd.Width) > s.cfg.MaxPixels {
					failed[p] = status.Errorf(codes.ResourceExhausted, "%s of %dx%d pixels is larger than the server's limit of %d pixels",
						where(k), hd.Width, hd.Height, s.cfg.MaxPixels)
					break
				}
				im.h, im.w = hd.Height, hd.Width
			}
			plan, err := s.plan(im.h, im.w)
			if err != nil {
				failed[p] = err
				break
			}
			im.plan = plan
			mine = append(mine, im)
		}
		if failed[p] == nil {
			first[p] = len(imgs)
			imgs = append(imgs, mine...)
		}
	}
	t.inputs = time.Now()
	item := s.cfg.Tensor.itemBytes()
	buf := getBuf(len(imgs) * item)
	kept := false // the host may still read buf (ErrStopped): left to the garbage collector
	defer func() {
		if !kept {
			putBuf(buf) // the replies and the model's outputs are copies
		}
	}()
	out := (*buf)[:len(imgs)*item]
	errs := make([]error, len(imgs))
	var wg sync.WaitGroup
	for i, im := range imgs {
		s.decodes <- struct{}{} // at most cap(decodes) images decoding at once, every execution together
		wg.Add(1)
		go func() {
			defer func() { <-s.decodes; wg.Done() }()
			errs[i] = s.run(im, out[i*item:(i+1)*item])
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil && failed[imgs[i].p] == nil {
			failed[imgs[i].p] = err
		}
	}
	live, rows := batch, out // the requests answered OK, in order, and their images' rows
	if len(failed) > 0 {
		live, rows = nil, nil
	}
	for _, p := range batch {
		if _, bad := failed[p]; !bad && len(failed) > 0 {
			at := first[p]
			live = append(live, p)
			rows = append(rows, out[at*item:(at+p.req.n)*item]...)
		}
	}
	outs, kept, err := s.outputs(rows, len(rows)/item)
	if err != nil {
		for _, p := range live {
			failed[p] = err
		}
		live = nil
	}
	t.infer = time.Now()
	replies := make(map[*pending][]byte, len(live))
	at := 0
	for _, p := range live {
		q := p.req
		var ts []outTensor
		for k, o := range s.cfg.Outputs {
			if len(q.want) > 0 && !slices.Contains(q.want, o.Name) {
				continue
			}
			row := len(outs[k]) / (len(rows) / item)
			ts = append(ts, outTensor{name: o.Name, datatype: o.Datatype, shape: append([]int64{int64(q.n)}, o.Shape...),
				raw: outs[k][at*row : (at+q.n)*row]})
		}
		at += q.n
		t.items += q.n
		replies[p] = inferReply(s.cfg.ModelName, q.id, ts)
	}
	t.output = time.Now()
	arrived := make([]time.Time, 0, len(live))
	for _, p := range live {
		arrived = append(arrived, p.arrived)
	}
	s.stats.executed(t, arrived, t.output)
	for _, p := range batch {
		if err, bad := failed[p]; bad {
			p.done <- result{err: err}
		} else {
			p.done <- result{reply: replies[p]}
		}
	}
}

// outputs are the reply tensors of the n preprocessed images in rows: the rows themselves, or the
// model's outputs (Host.Model), each checked to hold n rows of its Output; stopped: the host gave
// up at the stop (ErrStopped) and may still read rows.
func (s *Server) outputs(rows []byte, n int) (outs [][]byte, stopped bool, err error) {
	if n == 0 {
		return nil, false, nil
	}
	if !s.cfg.Model {
		return [][]byte{rows}, false, nil
	}
	outs, err = s.host.Model(rows, n)
	if err == nil && len(outs) != len(s.cfg.Outputs) {
		err = fmt.Errorf("the model returned %d outputs, want %d", len(outs), len(s.cfg.Outputs))
	}
	for k := 0; err == nil && k < len(outs); k++ {
		if len(outs[k]) != n*s.cfg.Outputs[k].itemBytes() {
			err = fmt.Errorf("output %s has %d bytes for %d images, want %d", s.cfg.Outputs[k].Name, len(outs[k]), n, n*s.cfg.Outputs[k].itemBytes())
		}
	}
	if errors.Is(err, ErrStopped) {
		return nil, true, status.Error(codes.Internal, s.cfg.InternalMessage)
	}
	if err != nil {
		s.logf("the model failed on a batch of %d images: %v", n, err)
		return nil, false, status.Error(codes.Internal, s.cfg.InternalMessage)
	}
	return outs, false, nil
}

// where names image k of its request as the Python server does.
func where(k int) string {
	return fmt.Sprintf("image[%d]", k)
}

// run decodes (a file) or reads (a frame) one image and runs its plan into dst.
func (s *Server) run(im *image, dst []byte) (err error) {
	defer engine.Recover(&err)
	q := im.p.req
	var src []byte
	if q.encoded {
		buf := getBuf(im.h * im.w * 3)
		defer putBuf(buf)
		src = (*buf)[:im.h*im.w*3]
		if err := codec.Decode(im.file, codec.Options{Mode: codec.RGB, MaxPixels: s.cfg.MaxPixels}, src, im.w*3); err != nil {
			return status.Errorf(codes.InvalidArgument, "%s is not a readable JPEG or PNG file: %v", where(im.k), err)
		}
	} else {
		n := im.h * im.w * 3
		src = q.frames[im.k*n : (im.k+1)*n]
	}
	job := []engine.Job{{Plan: im.plan, Src: unsafe.Pointer(&src[0]), Out: unsafe.Pointer(&dst[0])}}
	if err := (engine.CPU{}).Run(job); err != nil {
		s.logf("preprocessing image %d failed: %v", im.k, err)
		return status.Error(codes.Internal, s.cfg.InternalMessage)
	}
	return nil
}

// bufs holds the byte buffers of decoded images and of batches' tensors for reuse: fresh ones of
// about a megabyte per image, each request's garbage, cost page faults and zeroing on every request.
var bufs sync.Pool

// getBuf is a buffer of at least n bytes (its contents arbitrary); putBuf returns it.
func getBuf(n int) *[]byte {
	if b, ok := bufs.Get().(*[]byte); ok && cap(*b) >= n {
		return b
	}
	b := make([]byte, n)
	return &b
}

func putBuf(b *[]byte) { bufs.Put(b) }

// plan is the preprocessing plan of an h x w x 3 uint8 source: cached, else asked of the host once
// per size (concurrent askers of one size wait for the first).
func (s *Server) plan(h, w int) (*engine.Plan, error) {
	key := [2]int{h, w}
	s.planMu.Lock()
	e := s.plans[key]
	if e == nil {
		if len(s.plans) >= maxPlans {
			for k := range s.plans { // forget one: the plan lives on while a running job holds it
				delete(s.plans, k)
				break
			}
		}
		e = &planEntry{ready: make(chan struct{})}
		s.plans[key] = e
		s.planMu.Unlock()
		e.plan, e.err = s.host.Plan(h, w)
		if e.err == nil {
			e.err = s.fits(e.plan, h, w)
		}
		if e.err != nil {
			s.logf("no plan for a %dx%d image: %v", w, h, e.err)
			e.err = status.Error(codes.Internal, s.cfg.InternalMessage)
			s.planMu.Lock()
			if s.plans[key] == e { // asked again next time (unless evicted and asked anew meanwhile)
				delete(s.plans, key)
			}
			s.planMu.Unlock()
		}
		close(e.ready)
	} else {
		s.planMu.Unlock()
		<-e.ready
	}
	return e.plan, e.err
}

// fits checks that plan reads one h x w x 3 uint8 image within its h*w*3 bytes and writes one
// Tensor row: run hands it exactly those (the host is trusted for neither).
func (s *Server) fits(plan *engine.Plan, h, w int) error {
	lo, n := plan.ImageSpan()
	if plan.N > 1 || plan.InDType() != engine.U8 || lo < 0 || lo+n > h*w*3 || plan.OutImageBytes() != s.cfg.Tensor.itemBytes() {
		return fmt.Errorf("the plan for a %dx%d image reads %d images, %s elements [%d, %d) of %d, and writes %d bytes of the %d of a row",
			w, h, plan.N, plan.InDType(), lo, lo+n, h*w*3, plan.OutImageBytes(), s.cfg.Tensor.itemBytes())
	}
	return nil
}

// maxPlans bounds the cached plans (one per distinct image size).
const maxPlans = 64

type planEntry struct {
	ready chan struct{}
	plan  *engine.Plan
	err   error
}
