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

	sizes []int // model: each output's bytes for the batch

	reply chan hostReply
}

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
	next     int64
	waiting  map[int64]*hostJob
}

func (h *host) ask(j *hostJob) hostReply {
	h.mu.Lock()
	h.next++
	j.ID = h.next
	j.reply = make(chan hostReply, 1)
	h.waiting[j.ID] = j
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		delete(h.waiting, j.ID)
		h.mu.Unlock()
	}()
	select {
	case h.jobs <- j:
	case <-h.stopped:
		return hostReply{err: fmt.Errorf("the server is stopping")}
	}
	select {
	case r := <-j.reply:
		return r
	case <-h.stopped:
		return hostReply{err: fmt.Errorf("the server is stopping")}
	}
}

func (h *host) Plan(height, width int) (*engine.Plan, error) {
	r := h.ask(&hostJob{Kind: "plan", H: height, W: width})
	return r.plan, r.err
}

func (h *host) Statistics(s serve.Snapshot) ([]byte, error) {
	r := h.ask(&hostJob{Kind: "stats", Snap: &s})
	return r.data, r.err
}

func (h *host) Model(batch []byte, n int) ([][]byte, error) {
	sizes := make([]int, len(h.outputs))
	for k, o := range h.outputs {
		sizes[k] = n * o
	}
	r := h.ask(&hostJob{Kind: "model", Addr: int64(uintptr(unsafe.Pointer(&batch[0]))), N: n, sizes: sizes})
	runtime.KeepAlive(batch) // Python read it through its address until its reply
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
	front.mu.Lock()
	h := front.host
	front.mu.Unlock()
	if h == nil {
		return 0, nil
	}
	h.mu.Lock()
	j := h.waiting[id]
	h.mu.Unlock()
	if j == nil {
		return 0, nil
	}
	var r hostReply
	switch {
	case errMsg != "":
		r.err = fmt.Errorf("%s", errMsg)
	case j.Kind == "plan":
		r.plan, r.err = lookup(plan)
	default:
		r.data, r.err = base64.StdEncoding.DecodeString(data)
	}
	j.reply <- r // buffered, one reply per question
	return 0, nil
}

// ServeReplyArrays answers model question id with the model's outputs: objs holds the NumPy array
// objects (Python's id(), comma-separated, C-contiguous) of each output in order, each copied here
// (Python holds them during the call); errMsg non-empty: the model failed.
func ServeReplyArrays(id int64, objs, errMsg string) (n int64, err error) {
	defer engine.Recover(&err)
	front.mu.Lock()
	h := front.host
	front.mu.Unlock()
	if h == nil {
		return 0, nil
	}
	h.mu.Lock()
	j := h.waiting[id]
	h.mu.Unlock()
	if j == nil {
		return 0, nil
	}
	var r hostReply
	ids := strings.Split(objs, ",")
	switch {
	case errMsg != "":
		r.err = fmt.Errorf("%s", errMsg)
	case len(ids) != len(j.sizes):
		r.err = fmt.Errorf("%d outputs, want %d", len(ids), len(j.sizes))
	}
	for k := 0; r.err == nil && k < len(ids); k++ {
		obj, perr := strconv.ParseInt(ids[k], 10, 64)
		var p unsafe.Pointer
		if perr == nil {
			p, perr = readArrayData(obj)
		}
		if perr != nil {
			r.err = perr
			break
		}
		r.outs = append(r.outs, bytes.Clone(unsafe.Slice((*byte)(p), j.sizes[k])))
	}
	j.reply <- r
	return 0, nil
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
