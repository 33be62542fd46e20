package serve

// Dynamic batching (--max-queue-delay), as python/goprep/_serve/batching.py's Batcher does it: a
// request joins the queue (at most MaxQueue waiting: more get RESOURCE_EXHAUSTED); when a worker is
// free, the batcher takes the waiting requests in arrival order, up to MaxBatch images, as soon as
// they fill the target (the largest preferred batch size, else MaxBatch) or the oldest has waited
// the delay. A request never splits across batches. Without batching each request is its own
// execution, at most Workers at once and Workers + MaxQueue admitted.

import (
	"context"
	"time"
)

// pending is one admitted request waiting for its execution's result.
type pending struct {
	req     *request
	arrived time.Time
	done    chan result // buffered: the execution never blocks on a client that left
}

type result struct {
	reply []byte
	err   error
}

// target is the images at which a batch closes without waiting out the delay.
func (s *Server) target() int {
	t := 0
	for _, p := range s.cfg.Preferred {
		if p <= s.cfg.MaxBatch {
			t = max(t, p)
		}
	}
	if t == 0 {
		return s.cfg.MaxBatch
	}
	return t
}

// enqueue admits p (false: the queue is full).
func (s *Server) enqueue(p *pending) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.queue) >= s.cfg.MaxQueue {
		return false
	}
	s.queue = append(s.queue, p)
	s.waiting += p.req.n
	s.wake()
	return true
}

// wake signals the batcher (s.mu held).
func (s *Server) wake() {
	select {
	case s.signal <- struct{}{}:
	default:
	}
}

// leave drops p from the queue if it still waits there (its client went away); true if it did.
func (s *Server) leave(p *pending) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, q := range s.queue {
		if q == p {
			s.queue = append(s.queue[:i], s.queue[i+1:]...)
			s.waiting -= p.req.n
			return true
		}
	}
	return false
}

// batcher forms a batch whenever a worker is free and runs it, until ctx ends.
func (s *Server) batcher(ctx context.Context) {
	delay := time.Duration(s.cfg.DelayUS) * time.Microsecond
	target := s.target()
	for {
		select {
		case s.free <- struct{}{}: // a worker slot taken
		case <-ctx.Done():
			return
		}
		var batch []*pending
		for batch == nil {
			s.mu.Lock()
			ready := len(s.queue) > 0 && (s.waiting >= target || s.draining || time.Since(s.queue[0].arrived) >= delay)
			var wait time.Duration = -1
			if len(s.queue) > 0 && !ready {
				wait = delay - time.Since(s.queue[0].arrived)
			}
			if ready {
				n := 0
				for len(s.queue) > 0 && (len(batch) == 0 || n+s.queue[0].req.n <= s.cfg.MaxBatch) {
					p := s.queue[0]
					s.queue = s.queue[1:]
					s.waiting -= p.req.n
					n += p.req.n
					batch = append(batch, p)
				}
			}
			s.mu.Unlock()
			if batch != nil {
				break
			}
			var timer <-chan time.Time
			if wait >= 0 {
				timer = time.After(wait)
			}
			select {
			case <-s.signal:
			case <-timer:
			case <-ctx.Done():
				<-s.free
				return
			}
		}
		go func() {
			defer func() { <-s.free }()
			s.execute(batch)
		}()
	}
}
