package binding

import (
	"sync"
	"testing"
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
