package serve

// One execution: the requests of a batch (or one request) decoded and preprocessed in Go, each
// image on its own goroutine into its row of one output buffer, and each request's reply built from
// its rows. A request whose file does not decode, or whose size has no plan, fails alone: the
// others' images are independent jobs. Stages as triton.py defines them: compute_input is reading
// the inputs (the headers probed, the sizes' plans fetched), compute_infer the decode and
// preprocessing, compute_output the replies.

import (
	"fmt"
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
	hdr  codec.Header
	h, w int
	plan *engine.Plan
}

func (s *Server) execute(batch []*pending) {
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
				im.hdr, im.h, im.w = hd, hd.Height, hd.Width
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
	item := s.cfg.Output.itemBytes()
	out := make([]byte, len(imgs)*item)
	errs := make([]error, len(imgs))
	var wg sync.WaitGroup
	for i, im := range imgs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.run(im, out[i*item:(i+1)*item])
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil && failed[imgs[i].p] == nil {
			failed[imgs[i].p] = err
		}
	}
	t.infer = time.Now()
	replies := make(map[*pending][]byte, len(batch))
	for _, p := range batch {
		if _, bad := failed[p]; bad {
			continue
		}
		q := p.req
		at := first[p]
		rows := out[at*item : (at+q.n)*item]
		t.items += q.n
		var outs []outTensor
		if len(q.want) == 0 || q.want[0] == s.cfg.Output.Name {
			o := s.cfg.Output
			outs = []outTensor{{name: o.Name, datatype: o.Datatype, shape: append([]int64{int64(q.n)}, o.Shape...), raw: rows}}
		}
		replies[p] = inferReply(s.cfg.ModelName, q.id, outs)
	}
	t.output = time.Now()
	s.stats.execution(t)
	for _, p := range batch {
		if err, bad := failed[p]; bad {
			p.done <- result{err: err}
		} else {
			p.done <- result{reply: replies[p], t: t}
		}
	}
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
		src = make([]byte, im.h*im.w*3)
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
		if e.err != nil {
			s.logf("no plan for a %dx%d image: %v", w, h, e.err)
			e.err = status.Error(codes.Internal, s.cfg.InternalMessage)
			s.planMu.Lock()
			delete(s.plans, key) // asked again next time
			s.planMu.Unlock()
		}
		close(e.ready)
	} else {
		s.planMu.Unlock()
		<-e.ready
	}
	return e.plan, e.err
}

// maxPlans bounds the cached plans (one per distinct image size).
const maxPlans = 64

type planEntry struct {
	ready chan struct{}
	plan  *engine.Plan
	err   error
}
