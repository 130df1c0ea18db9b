package tokenstore

import (
	"context"
	"sync"
)

// Memory is a Store within one process: the managers of one process that
// share a grant (and tests) coordinate through it.
type Memory struct {
	mu   sync.Mutex
	recs map[string]memEntry
}

type memEntry struct {
	rec *Record
	ver Version
}

// NewMemory returns an empty in-process store.
func NewMemory() *Memory { return &Memory{recs: map[string]memEntry{}} }

// Load implements Store.
func (s *Memory) Load(_ context.Context, key string) (*Record, Version, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.recs[key]
	return e.rec.Clone(), e.ver, nil
}

// CompareAndSave implements Store.
func (s *Memory) CompareAndSave(_ context.Context, key string, expected Version, rec *Record) (Version, *Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.recs[key]
	if e.ver != expected {
		return e.ver, e.rec.Clone(), nil
	}
	e = memEntry{rec: rec.Clone(), ver: e.ver + 1}
	s.recs[key] = e
	return e.ver, nil, nil
}

// Close implements Store.
func (s *Memory) Close() error { return nil }
