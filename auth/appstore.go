package auth

import (
	"context"
	"errors"

	"github.com/lemonmcp/lemonmcp/auth/tokenstore"
	"github.com/lemonmcp/lemonmcp/store"
)

// VersionedTokenHost is a Host whose token store keeps the shared-store
// contract (auth.token_store {"type": "app"}): the app's "token_load"
// answers a record with its version and "token_save" is a
// compare-and-save (docs/app-requests.md). The core implements it over
// app requests.
type VersionedTokenHost interface {
	// LoadTokenVersioned returns the record under key and its version,
	// or (nil, 0) when there is none.
	LoadTokenVersioned(ctx context.Context, key TokenKey) (*tokenstore.Record, tokenstore.Version, error)
	// CompareAndSaveToken saves rec if the stored version is still
	// expected and answers the new version; otherwise it answers the
	// version and record that won.
	CompareAndSaveToken(ctx context.Context, key TokenKey, expected tokenstore.Version, rec *tokenstore.Record) (tokenstore.Version, *tokenstore.Record, error)
}

// appStore is the store of auth.token_store {"type": "app"}: the host's
// own store, over the Manager's bound Host. It keeps only grants.
type appStore struct{ m *Manager }

var errNoVersionedHost = errors.New("the host does not answer versioned token_load / token_save requests")

func (s appStore) host() (VersionedTokenHost, error) {
	if h, ok := s.m.hostOrNil().(VersionedTokenHost); ok {
		return h, nil
	}
	return nil, errNoVersionedHost
}

func (s appStore) key(k string) TokenKey { return TokenKey{Resource: s.m.canonical, Key: k} }

func (s appStore) Load(ctx context.Context, _, key string) (*store.Document, store.Version, error) {
	h, err := s.host()
	if err != nil {
		return nil, 0, err
	}
	rec, ver, err := h.LoadTokenVersioned(ctx, s.key(key))
	if err != nil || rec == nil {
		return nil, ver, err
	}
	d, err := tokenstore.Encode(rec)
	return d, ver, err
}

func (s appStore) CompareAndSave(ctx context.Context, _, key string, expected store.Version, doc *store.Document) (store.Version, *store.Document, error) {
	h, err := s.host()
	if err != nil {
		return 0, nil, err
	}
	rec, err := tokenstore.Decode(doc)
	if err != nil {
		return 0, nil, err
	}
	ver, won, err := h.CompareAndSaveToken(ctx, s.key(key), expected, rec)
	if err != nil || won == nil {
		return ver, nil, err
	}
	d, err := tokenstore.Encode(won)
	return ver, d, err
}

func (s appStore) Close() error { return nil }
