package binding

import "sync"

// handles maps the integer handles Python holds to Go objects (plans, device arrays): gopy passes
// integers for a fraction of what wrapping Go pointers costs, and an unknown handle is an error,
// never a crash.
type handles[T any] struct {
	mu   sync.RWMutex // lookups (every Run) share the lock
	m    map[int64]T
	last int64
}

func (r *handles[T]) add(v T) int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = map[int64]T{}
	}
	r.last++
	r.m[r.last] = v
	return r.last
}

func (r *handles[T]) get(h int64) (T, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	v, ok := r.m[h]
	return v, ok
}

// remove forgets h and returns what it held.
func (r *handles[T]) remove(h int64) (T, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	v, ok := r.m[h]
	delete(r.m, h)
	return v, ok
}

func (r *handles[T]) len() int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.m)
}
