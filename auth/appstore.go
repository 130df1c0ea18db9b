package auth

import (
	"context"
	"errors"

	"github.com/lemonmcp/lemonmcp/auth/tokenstore"
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

// appStore is the tokenstore.Store of auth.token_store {"type": "app"}:
// the host's own store, over the Manager's bound Host.
type appStore struct{ m *Manager }

var errNoVersionedHost = errors.New("the host does not answer versioned token_load / token_save requests")

func (s appStore) host() (VersionedTokenHost, error) {
	if h, ok := s.m.hostOrNil().(VersionedTokenHost); ok {
		return h, nil
	}
	return nil, errNoVersionedHost
}

func (s appStore) key(k string) TokenKey { return TokenKey{Resource: s.m.canonical, Key: k} }

func (s appStore) Load(ctx context.Context, key string) (*tokenstore.Record, tokenstore.Version, error) {
	h, err := s.host()
	if err != nil {
		return nil, 0, err
	}
	return h.LoadTokenVersioned(ctx, s.key(key))
}

func (s appStore) CompareAndSave(ctx context.Context, key string, expected tokenstore.Version, rec *tokenstore.Record) (tokenstore.Version, *tokenstore.Record, error) {
	h, err := s.host()
	if err != nil {
		return 0, nil, err
	}
	return h.CompareAndSaveToken(ctx, s.key(key), expected, rec)
}

func (s appStore) Close() error { return nil }
