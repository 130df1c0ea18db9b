package store

import (
	"context"
	"sync"
)

// Memory is a store within one process: what its clients and hosts share
// (and tests).
type Memory struct {
	mu   sync.Mutex
	docs map[memKey]memEntry
}

type memKey struct{ collection, key string }

type memEntry struct {
	doc *Document
	ver Version
}

// NewMemory returns an empty in-process store.
func NewMemory() *Memory { return &Memory{docs: map[memKey]memEntry{}} }

// Load implements Store.
func (s *Memory) Load(_ context.Context, collection, key string) (*Document, Version, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.docs[memKey{collection, key}]
	return e.doc.Clone(), e.ver, nil
}

// CompareAndSave implements Store.
func (s *Memory) CompareAndSave(_ context.Context, collection, key string, expected Version, doc *Document) (Version, *Document, error) {
	if err := checkBody(collection, key, doc); err != nil {
		return 0, nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k := memKey{collection, key}
	e := s.docs[k]
	if e.ver != expected {
		return e.ver, e.doc.Clone(), nil
	}
	e = memEntry{doc: doc.Clone(), ver: e.ver + 1}
	s.docs[k] = e
	return e.ver, nil, nil
}

// Close implements Store.
func (s *Memory) Close() error { return nil }

// VersionOf implements Versioner.
func (s *Memory) VersionOf(_ context.Context, collection, key string) (Version, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.docs[memKey{collection, key}].ver, nil
}
