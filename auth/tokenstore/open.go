package tokenstore

import (
	"fmt"
)

// Spec is the auth.token_store object of the configuration:
// {"type": "file", "path": P}, {"type": "postgres", "url": U},
// {"type": "redis", "url": U} or {"type": "app"} (the host's store, which
// package auth reaches through its Host, not Open), each with an optional
// "key" (the default is derived from the grant: see package auth).
type Spec struct {
	Type string
	Path string
	URL  string
	Key  string
}

// Open connects the store a Spec names. Nothing is read or written yet:
// the PostgreSQL table is created on first use.
func Open(s Spec) (Store, error) {
	switch s.Type {
	case "file":
		return OpenFile(s.Path)
	case "postgres":
		return OpenPostgres(s.URL)
	case "redis":
		return OpenRedis(s.URL)
	}
	return nil, fmt.Errorf("type: %q is not a shared store type", s.Type)
}
