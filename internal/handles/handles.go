package handles

import (
	"sync/atomic"
	"unsafe"

	pointer "github.com/mattn/go-pointer"
)

// slot is what go-pointer stores for a key. Its value is cleared on Release,
// leaving the slot as the tombstone.
type slot[T any] struct {
	v atomic.Pointer[T]
}

// Registry hands out keys for values of type T.
type Registry[T any] struct {
	live atomic.Int64
}

// Save registers v and returns its new, never-reused key.
func (r *Registry[T]) Save(v *T) unsafe.Pointer {
	s := &slot[T]{}
	s.v.Store(v)
	r.live.Add(1)
	return pointer.Save(s)
}

// Get returns the value registered under key, or false when key is nil,
// unknown, or released.
func (r *Registry[T]) Get(key unsafe.Pointer) (*T, bool) {
	s, ok := pointer.Restore(key).(*slot[T])
	if !ok {
		return nil, false
	}
	v := s.v.Load()
	return v, v != nil
}

// Release turns key into a tombstone and returns the value it held. Only the
// first Release of a key returns true.
func (r *Registry[T]) Release(key unsafe.Pointer) (*T, bool) {
	s, ok := pointer.Restore(key).(*slot[T])
	if !ok {
		return nil, false
	}
	v := s.v.Swap(nil)
	if v == nil {
		return nil, false
	}
	r.live.Add(-1)
	return v, true
}

// Live counts the values registered and not yet released.
func (r *Registry[T]) Live() int64 { return r.live.Load() }
