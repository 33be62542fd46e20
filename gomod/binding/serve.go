package binding

// The Go front end of goprep serve (gomod/serve) inside the extension: python/goprep/_serve/gofront.py
// starts it (ServeStart), answers its questions on one thread (ServeNext blocks, GIL released, until
// the front end needs a plan for an image size or a statistics message; ServeReply answers) and
// stops it (ServeStop). One front end per process. Invariants: a question waits for its answer or
// for the front end's stop, never longer, so a Python thread that died or raised cannot hang a
// request (the request fails INTERNAL); a plan handle Python answers is resolved inside ServeReply,
// while Python still holds the plan, and the front end keeps the *engine.Plan itself.

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/goprep/goprep/gomod/engine"
	"github.com/goprep/goprep/gomod/serve"
)

type hostJob struct {
	ID   int64           `json:"id"`
	Kind string          `json:"kind"` // "plan", "stats" or "model"
	H    int             `json:"h,omitempty"`
	W    int             `json:"w,omitempty"`
	Snap *serve.Snapshot `json:"snapshot,omitempty"`
	Addr int64           `json:"addr,omitempty"` // model: the batch's address (Go memory, held until the reply)
	N    int             `json:"n,omitempty"`    // model: its images

	sizes []int  // model: each output's bytes for the batch
	batch []byte // model: the batch, referenced while Python may read it (lingering)

	reply chan hostReply
}

// jobIDs numbers the questions of every front end of the process, so that a reply finds its
// question even after the front end that asked it has stopped.
var jobIDs atomic.Int64

// lingering holds the model questions left unanswered at a stop (ask returned serve.ErrStopped),
// each until Python's reply: Python may still read the batch through its address.
var lingering sync.Map // int64 -> *hostJob

type hostReply struct {
	plan *engine.Plan
	data []byte
	outs [][]byte
	err  error
}

// host is the running front end's link to Python.
type host struct {
	outputs []int // each model output's bytes per image
	jobs    chan *hostJob
	stopped chan struct{}
	// stopOnce runs ServeStop's stop once: the host (Python's answers) lives on through the drain.
	stopOnce sync.Once
	mu       sync.Mutex
	waiting  map[int64]*hostJob
}

// ask puts question j to Python and waits for the reply, for the stop or for ctx's end.
func (h *host) ask(ctx context.Context, j *hostJob) hostReply {
	j.ID = jobIDs.Add(1)
	j.reply = make(chan hostReply, 1)
	h.mu.Lock()
	h.waiting[j.ID] = j
	h.mu.Unlock()
	stopped := hostReply{err: serve.ErrStopped}
	asked := false
	defer func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		delete(h.waiting, j.ID)
		if asked && j.Kind == "model" && len(j.reply) == 0 { // replies are sent under h.mu
			lingering.Store(j.ID, j)
		}
	}()
	select {
	case h.jobs <- j:
		asked = true
	case <-h.stopped:
		return stopped
	case <-ctx.Done():
		return hostReply{err: ctx.Err()}
	}
	select {
	case r := <-j.reply:
		asked = false
		return r
	case <-h.stopped:
		return stopped
	case <-ctx.Done():
		return hostReply{err: ctx.Err()}
	}
}

// answerJob hands question id the reply r builds (dropped when its asker is gone or it was
// answered already) and frees it if it lingers; false: no question id waits.
func answerJob(id int64, r func(j *hostJob) hostReply) bool {
	front.mu.Lock()
	h := front.host
	front.mu.Unlock()
	var j *hostJob
	if h != nil {
		h.mu.Lock()
		j = h.waiting[id]
		h.mu.Unlock()
	}
	if j == nil {
		lingering.Delete(id) // Python is done with its batch
		return false
	}
	rep := r(j)
	h.mu.Lock()
	select { // non-blocking: a duplicate reply is dropped
	case j.reply <- rep:
	default:
	}
	h.mu.Unlock()
	lingering.Delete(id) // asked, then stopped while this reply was being read
	return true
}

func (h *host) Plan(height, width int) (*engine.Plan, error) {
	r := h.ask(context.Background(), &hostJob{Kind: "plan", H: height, W: width})
	return r.plan, r.err
}

func (h *host) Statistics(ctx context.Context, s serve.Snapshot) ([]byte, error) {
	r := h.ask(ctx, &hostJob{Kind: "stats", Snap: &s})
	return r.data, r.err
}

func (h *host) Model(batch []byte, n int) ([][]byte, error) {
	sizes := make([]int, len(h.outputs))
	for k, o := range h.outputs {
		sizes[k] = n * o
	}
	r := h.ask(context.Background(), &hostJob{Kind: "model", Addr: int64(uintptr(unsafe.Pointer(&batch[0]))), N: n, sizes: sizes, batch: batch})
	runtime.KeepAlive(batch) // Python read it through its address until its reply (or lingering holds it)
	return r.outs, r.err
}

var front struct {
	mu   sync.Mutex
	srv  *serve.Server
	host *host
	done chan struct{} // closed when Serve has returned
}

// ServeStart starts the Go front end listening on addr (host:port; port 0 picks one) with the JSON
// configuration cfg (serve.Config); it returns the port.
func ServeStart(addr, cfg string) (port int64, err error) {
	defer engine.Recover(&err)
	front.mu.Lock()
	defer front.mu.Unlock()
	if front.srv != nil {
		return 0, engine.Errorf(engine.CodeInvalidArgument, "frontend", "a Go front end is already running in this process")
	}
	c, err := serve.ParseConfig(cfg)
	if err != nil {
		return 0, engine.Errorf(engine.CodeInternal, "cfg", "%v", err)
	}
	h := &host{jobs: make(chan *hostJob), stopped: make(chan struct{}), waiting: map[int64]*hostJob{}}
	for _, o := range c.Outputs {
		n := o.Itemsize
		for _, d := range o.Shape {
			n *= int(d)
		}
		h.outputs = append(h.outputs, n)
	}
	srv, err := serve.New(c, h, log.New(os.Stderr, "goprep serve: ERROR ", 0))
	if err != nil {
		return 0, err
	}
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return 0, engine.Errorf(engine.CodeInvalidArgument, "port", "cannot listen on %s: %v", addr, err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(lis) // returns once Drain has stopped it
	}()
	front.srv, front.host, front.done = srv, h, done
	return int64(lis.Addr().(*net.TCPAddr).Port), nil
}

// ServeNext blocks until the front end has a question for Python and returns it as JSON ({"id",
// "kind": "plan", "h", "w"} or {"id", "kind": "stats", "snapshot"}), or "" once it has stopped.
func ServeNext() string {
	front.mu.Lock()
	h := front.host
	front.mu.Unlock()
	if h == nil {
		return ""
	}
	select {
	case j := <-h.jobs:
		b, _ := json.Marshal(j) // plain fields always marshal
		return string(b)
	case <-h.stopped:
		return ""
	}
}

// ServeReply answers question id: a plan handle (plan), the message's bytes in base64 (stats), or
// errMsg (non-empty: the question failed). An unknown id (its asker gone) is ignored.
func ServeReply(id, plan int64, data, errMsg string) (n int64, err error) {
	defer engine.Recover(&err)
	answerJob(id, func(j *hostJob) (r hostReply) {
		switch {
		case errMsg != "":
			r.err = fmt.Errorf("%s", errMsg)
		case j.Kind == "plan":
			r.plan, r.err = lookup(plan)
		case j.Kind == "model":
			r.err = fmt.Errorf("a model question answered by ServeReply")
		default:
			r.data, r.err = base64.StdEncoding.DecodeString(data)
		}
		return r
	})
	return 0, nil
}

// ServeReplyArrays answers model question id with the model's outputs: objs holds the NumPy arrays
// (C-contiguous, each "id():nbytes", comma-separated) of each output in order, each checked to hold
// its output's bytes and copied here (Python holds them during the call); errMsg non-empty: the
// model failed. An unknown id (its asker gone) is ignored, a lingering one freed.
func ServeReplyArrays(id int64, objs, errMsg string) (n int64, err error) {
	defer engine.Recover(&err)
	answerJob(id, func(j *hostJob) (r hostReply) {
		if errMsg != "" {
			r.err = fmt.Errorf("%s", errMsg)
			return r
		}
		arrays := strings.Split(objs, ",")
		if len(arrays) != len(j.sizes) || objs == "" {
			r.err = fmt.Errorf("%d outputs, want %d", len(arrays), len(j.sizes))
			return r
		}
		for k, a := range arrays {
			p, err := arrayBytes(a, j.sizes[k])
			if err != nil {
				return hostReply{err: fmt.Errorf("output %d: %v", k, err)}
			}
			r.outs = append(r.outs, bytes.Clone(unsafe.Slice((*byte)(p), j.sizes[k])))
		}
		return r
	})
	return 0, nil
}

// arrayBytes is the data of the array "id:nbytes" (Python's id() and the array's nbytes), checked
// to hold exactly want bytes: Go never reads past what the array holds.
func arrayBytes(a string, want int) (unsafe.Pointer, error) {
	obj, size, ok := strings.Cut(a, ":")
	if !ok {
		return nil, fmt.Errorf("%q is not id:nbytes", a)
	}
	nb, err := strconv.Atoi(size)
	if err != nil || nb != want {
		return nil, fmt.Errorf("the array holds %s bytes, want %d", size, want)
	}
	id, err := strconv.ParseInt(obj, 10, 64)
	if err != nil {
		return nil, err
	}
	return readArrayData(id)
}

// ServeStop drains the front end (serve.Server.Drain, up to grace seconds), stops it and ends
// ServeNext's wait; it returns once the server has stopped. No front end running: nothing to do;
// calls during a stop wait for it.
func ServeStop(grace float64) {
	front.mu.Lock()
	srv, h, done := front.srv, front.host, front.done
	front.mu.Unlock()
	if srv == nil {
		return
	}
	h.stopOnce.Do(func() { // a second call waits for the first's stop
		srv.Drain(time.Duration(grace * float64(time.Second)))
		<-done
		close(h.stopped)
		front.mu.Lock()
		front.srv, front.host, front.done = nil, nil, nil
		front.mu.Unlock()
	})
}
