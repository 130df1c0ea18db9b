package host

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/lemonmcp/lemonmcp/internal/jsonx"
	"github.com/lemonmcp/lemonmcp/store"
)

// pinCollection is the store's collection of pins: one document per
// server identity (serverIdentity's key).
const pinCollection = "pins"

// pinStoreTimeout bounds one load or save of pins, on any backend (the
// application's answer included): no person is asked.
const pinStoreTimeout = 30 * time.Second

// pinServer is one server's pins: per kind, the pinned hash (and the
// definition it was taken from, for a readable diff) of each definition.
// A kind's map is nil until the kind was first seen: first_use applies to
// a kind never seen, "new" to a name never seen on a kind already pinned.
type pinServer struct {
	Name         string                          `json:"name"`
	Identity     map[string]any                  `json:"identity"`
	Instructions *pinEntry                       `json:"instructions,omitempty"`
	Kinds        map[string]map[string]*pinEntry `json:"kinds"`
}

// pinEntry is one pinned definition.
type pinEntry struct {
	Hash       string           `json:"hash"`
	Definition jsonx.RawMessage `json:"definition,omitempty"`
}

// pinDocs is the host's narrow door to the store for pins: a server's
// document by identity, read and changed by compare-and-save. Every
// process and machine sharing the store shares the pins.
type pinDocs struct {
	s store.Store

	// The last document decoded per identity and its version: a load at
	// the same version answers the same *pinServer, so that the guard can
	// tell "the pins did not change" by pointer.
	mu     sync.Mutex
	cached map[string]pinCached
}

type pinCached struct {
	ver store.Version
	ps  *pinServer
}

func newPinDocs(s store.Store) *pinDocs {
	return &pinDocs{s: s, cached: map[string]pinCached{}}
}

// load is the server's pins (nil when none) and their version; the
// caller must not change them.
func (p *pinDocs) load(ident string) (*pinServer, store.Version, error) {
	ctx, cancel := context.WithTimeout(context.Background(), pinStoreTimeout)
	defer cancel()
	p.mu.Lock()
	c, ok := p.cached[ident]
	p.mu.Unlock()
	if ok {
		// The usual refresh: the pins did not change, and only their
		// version is read.
		if ver, err := store.VersionOf(ctx, p.s, pinCollection, ident); err != nil {
			return nil, 0, err
		} else if ver == c.ver {
			return c.ps, ver, nil
		}
	}
	d, ver, err := p.s.Load(ctx, pinCollection, ident)
	if err != nil {
		return nil, 0, err
	}
	return p.decode(ident, d, ver)
}

func (p *pinDocs) decode(ident string, d *store.Document, ver store.Version) (*pinServer, store.Version, error) {
	if d == nil {
		return nil, ver, nil
	}
	p.mu.Lock()
	c, ok := p.cached[ident]
	p.mu.Unlock()
	if ok && c.ver == ver {
		return c.ps, ver, nil
	}
	ps := &pinServer{}
	if jsonx.Unmarshal(d.Body, ps) != nil {
		return nil, 0, fmt.Errorf("the pin store's document of this server is not a pin document (version %d); it was left as it is", ver)
	}
	if ps.Kinds == nil {
		ps.Kinds = map[string]map[string]*pinEntry{}
	}
	p.mu.Lock()
	p.cached[ident] = pinCached{ver: ver, ps: ps}
	p.mu.Unlock()
	return ps, ver, nil
}

// update lets fn change a fresh copy of the server's pins (made when
// missing with name and identity) and saves it when fn says it changed,
// by compare-and-save: a lost save runs fn again on the winner's pins,
// so approvals made at once in two processes are both kept.
func (p *pinDocs) update(ident, name string, identity map[string]any, fn func(*pinServer) (bool, error)) (*pinServer, error) {
	ctx, cancel := context.WithTimeout(context.Background(), pinStoreTimeout)
	defer cancel()
	d, ver, err := store.Update(ctx, p.s, pinCollection, ident, func(cur *store.Document) (*store.Document, error) {
		ps := &pinServer{Name: name, Identity: identity}
		if cur != nil && jsonx.Unmarshal(cur.Body, ps) != nil {
			return nil, fmt.Errorf("the pin store's document of the server %s is not a pin document; it was left as it is", jsonQuote(name))
		}
		if ps.Kinds == nil {
			ps.Kinds = map[string]map[string]*pinEntry{}
		}
		changed, err := fn(ps)
		if err != nil || !changed {
			return nil, err
		}
		return &store.Document{Body: jsonx.MustMarshal(ps)}, nil
	})
	if err != nil {
		return nil, err
	}
	ps, _, err := p.decode(ident, d, ver)
	return ps, err
}
