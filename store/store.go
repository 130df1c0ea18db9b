package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// Version identifies one stored state of a document; 0 means nothing
// stored. Every successful CompareAndSave answers a larger one.
type Version int64

// Lease is a claim a process takes on a document by compare-and-save
// before work no other process may do at once (a grant's refresh): Owner
// (a random id of one process's manager) holds it until Until (Unix
// milliseconds). Stores keep it beside the document, never sealed (it
// holds no secret), so that a write that changes only the lease can be
// cheap (the file store's lease slots).
type Lease struct {
	Owner string `json:"owner"`
	Until int64  `json:"until"`
}

// Document is what a store keeps under one collection and key: Body, a
// JSON value (the document itself, or its sealed envelope: sealed.go),
// and the lease, when the collection uses leases.
type Document struct {
	Body  []byte
	Lease *Lease
}

// Clone is a deep copy.
func (d *Document) Clone() *Document {
	if d == nil {
		return nil
	}
	c := &Document{Body: bytes.Clone(d.Body)}
	if d.Lease != nil {
		l := *d.Lease
		c.Lease = &l
	}
	return c
}

// String names what a document is without its body (it may hold
// secrets).
func (d *Document) String() string {
	if d == nil {
		return "<no document>"
	}
	lease := "none"
	if d.Lease != nil {
		lease = fmt.Sprintf("%s until %d", d.Lease.Owner, d.Lease.Until)
	}
	return fmt.Sprintf("document{%d bytes, lease %s}", len(d.Body), lease)
}

// GoString is String (%#v).
func (d *Document) GoString() string { return d.String() }

// LeasedBy reports whether a lease other than owner's is live at nowMS.
func (d *Document) LeasedBy(owner string, nowMS int64) bool {
	return d != nil && d.Lease != nil && d.Lease.Owner != owner && d.Lease.Until > nowMS
}

// Store is the contract of every store. Implementations are safe for
// concurrent use by many goroutines and, but for Memory, many processes.
type Store interface {
	// Load returns the document under (collection, key) and its version,
	// or (nil, 0) when there is none.
	Load(ctx context.Context, collection, key string) (*Document, Version, error)
	// CompareAndSave stores doc if the stored version is expected (0:
	// nothing stored yet) and answers (new version, nil). Otherwise
	// nothing is written and it answers the stored version and the
	// document that won (nil only if it vanished).
	CompareAndSave(ctx context.Context, collection, key string, expected Version, doc *Document) (Version, *Document, error)
	// Close releases connections and files.
	Close() error
}

// Versioner is a store that answers a document's version without its
// body: a reader that holds the document at that version (the pin guard
// on every list refresh, every host's re-read) need not fetch it again.
type Versioner interface {
	VersionOf(ctx context.Context, collection, key string) (Version, error)
}

// VersionOf is the document's version (0: none), from the store's
// VersionOf when it has one, else from a Load.
func VersionOf(ctx context.Context, s Store, collection, key string) (Version, error) {
	if v, ok := s.(Versioner); ok {
		return v.VersionOf(ctx, collection, key)
	}
	_, ver, err := s.Load(ctx, collection, key)
	return ver, err
}

// Update runs a read-modify-write of one document until it lands: fn gets
// the current document (nil when none) and answers the next one, or nil
// to write nothing. A lost compare-and-save runs fn again on the winner,
// at most maxUpdateTries times, after a random pause that grows with each
// loss (so that writers at the same pace do not meet again at once): two
// processes updating at once both keep their change.
func Update(ctx context.Context, s Store, collection, key string, fn func(cur *Document) (*Document, error)) (*Document, Version, error) {
	cur, ver, err := s.Load(ctx, collection, key)
	if err != nil {
		return nil, 0, err
	}
	for try := range maxUpdateTries {
		if try > 0 {
			pause := time.NewTimer(rand.N(min(time.Duration(try)*500*time.Microsecond, 20*time.Millisecond)) + time.Microsecond)
			select {
			case <-ctx.Done():
				pause.Stop()
				return nil, 0, ctx.Err()
			case <-pause.C:
			}
		}
		next, err := fn(cur.Clone())
		if err != nil || next == nil {
			return cur, ver, err
		}
		v, won, err := s.CompareAndSave(ctx, collection, key, ver, next)
		if err != nil {
			return nil, 0, err
		}
		if won == nil && v > ver {
			return next, v, nil
		}
		cur, ver = won, v
	}
	return nil, 0, fmt.Errorf("the store's document %s/%s changed under %d updates in a row; nothing was written", collection, key, maxUpdateTries)
}

const maxUpdateTries = 64

// checkBody refuses a document whose body is not one JSON value before
// anything is written.
func checkBody(collection, key string, doc *Document) error {
	if doc == nil || !json.Valid(doc.Body) {
		return fmt.Errorf("the document %s/%s to save is not a JSON value; nothing was written", collection, key)
	}
	return nil
}

// ErrClosed is returned by a store used after Close.
var ErrClosed = errors.New("the store is closed")

func isCanceled(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
