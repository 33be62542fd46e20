//go:build !linux

package engine

import "testing"

// guarded is plan_fuzz_test.go's guard-page allocation where mmap/mprotect are not used: plain
// memory (an overrun reads Go's allocation slack instead of faulting).
func guarded(t testing.TB, n int, atEnd bool) []byte { return make([]byte, n) }
