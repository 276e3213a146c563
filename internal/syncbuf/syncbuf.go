// Package syncbuf is a bytes.Buffer that one goroutine may write (a logger,
// a subprocess's output copier) while another reads it: tests use it to
// watch logs.
package syncbuf

import (
	"bytes"
	"sync"
)

// Buffer is a mutex-guarded bytes.Buffer. The zero value is ready to use.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns everything written so far.
func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
