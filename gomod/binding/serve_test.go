package binding

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"unsafe"

	"github.com/goprep/goprep/gomod/serve"
)

// serveConfig is a front end's configuration with dynamic batching on (a batcher goroutine runs).
const serveConfig = `{"model_name":"m","max_batch":2,"max_queue":2,"workers":1,"delay_us":1000,"max_pixels":64,` +
	`"max_request_bytes":65536,"tensor":{"name":"TENSOR","datatype":"FP32","shape":[3],"itemsize":4},` +
	`"outputs":[{"name":"TENSOR","datatype":"FP32","shape":[3],"itemsize":4}]}`

// A stop right after the start, two stops in a row and two at once: each returns, the race detector
// sees no unsynchronized start, and ServeNext then answers "" (the front end is gone).
func TestServeStartStop(t *testing.T) {
	for range 3 {
		if _, err := ServeStart("127.0.0.1:0", serveConfig); err != nil {
			t.Fatal(err)
		}
		ServeStop(0)
		ServeStop(0)
		if q := ServeNext(); q != "" {
			t.Fatalf("ServeNext after the stop: %q", q)
		}
	}
	if _, err := ServeStart("127.0.0.1:0", serveConfig); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ServeStop(0)
		}()
	}
	wg.Wait()
	if _, err := ServeStart("127.0.0.1:0", serveConfig); err != nil { // the first is gone
		t.Fatal(err)
	}
	ServeStop(0)
}

// installHost makes h the front end's host for ServeReply and ServeReplyArrays (no server).
func installHost(t *testing.T) *host {
	h := &host{jobs: make(chan *hostJob), stopped: make(chan struct{}), waiting: map[int64]*hostJob{}, outputs: []int{8}}
	front.mu.Lock()
	front.host = h
	front.mu.Unlock()
	t.Cleanup(func() {
		front.mu.Lock()
		front.host = nil
		front.mu.Unlock()
	})
	return h
}

// A model question unanswered at the stop keeps its batch referenced until Python's late reply
// frees it; replies to it, or twice to one question, never block.
func TestServeLateAndDuplicateReplies(t *testing.T) {
	h := installHost(t)
	batch := make([]byte, 12)
	res := make(chan error, 1)
	go func() {
		_, err := h.Model(batch, 1)
		res <- err
	}()
	j := <-h.jobs
	close(h.stopped)
	if err := <-res; !errors.Is(err, serve.ErrStopped) {
		t.Fatalf("Model at the stop: %v", err)
	}
	if l, ok := lingering.Load(j.ID); !ok || &l.(*hostJob).batch[0] != &batch[0] {
		t.Fatal("the stopped model question does not hold its batch")
	}
	ServeReplyArrays(j.ID, "", "late")
	ServeReplyArrays(j.ID, "", "later")
	if _, ok := lingering.Load(j.ID); ok {
		t.Error("the late reply did not free the batch")
	}

	h = installHost(t)
	go func() {
		_, err := h.Statistics(context.Background(), serve.Snapshot{})
		res <- err
	}()
	j = <-h.jobs
	ServeReply(j.ID, 0, "", "first")
	ServeReply(j.ID, 0, "", "second") // dropped, not blocked
	if err := <-res; err == nil || err.Error() != "first" {
		t.Errorf("Statistics: %v, want the first reply", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		_, err := h.Statistics(ctx, serve.Snapshot{})
		res <- err
	}()
	<-h.jobs
	cancel() // the call went away: Statistics returns unanswered
	if err := <-res; !errors.Is(err, context.Canceled) {
		t.Errorf("Statistics of a cancelled call: %v", err)
	}
}

// ServeReplyArrays reads an output only when its array holds exactly the output's bytes.
func TestServeReplyArraysSizes(t *testing.T) {
	old := dataOffset.Load()
	dataOffset.Store(16) // a fake array object: its data pointer at offset 16
	defer dataOffset.Store(old)
	data := fakeData[:]
	fakeObj[2] = unsafe.Pointer(&data[0])
	id := uintptr(unsafe.Pointer(&fakeObj[0]))
	h := installHost(t)
	for _, c := range []struct {
		objs string
		ok   bool
	}{{fmt.Sprintf("%d:8", id), true}, {fmt.Sprintf("%d:4", id), false}, {fmt.Sprintf("%d:16", id), false},
		{fmt.Sprint(id), false}, {"", false}, {fmt.Sprintf("%d:8,%d:8", id, id), false}} {
		res := make(chan hostReply, 1)
		go func() {
			res <- h.ask(context.Background(), &hostJob{Kind: "model", N: 1, sizes: []int{8}})
		}()
		j := <-h.jobs
		ServeReplyArrays(j.ID, c.objs, "")
		r := <-res
		if c.ok != (r.err == nil) || (c.ok && string(r.outs[0]) != string(data)) {
			t.Errorf("%q: %v %v", c.objs, r.outs, r.err)
		}
	}
}

// The fake array object and its data: package variables, which never move (a stack might).
var (
	fakeData = [8]byte{1, 2, 3, 4, 5, 6, 7, 8}
	fakeObj  [4]unsafe.Pointer
)
