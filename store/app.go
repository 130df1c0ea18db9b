package store

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/lemonmcp/lemonmcp/internal/jsonx"
)

// Ask puts one of the library's own requests to the application and
// answers its reply: the core's app requests for a client, the host's for
// a host. The error names the request, never the application's message
// (it may echo a secret).
type Ask func(ctx context.Context, kind string, payload []byte) ([]byte, error)

// The application's store requests (docs/app-requests.md).
const (
	AppLoad = "store_load" // {"collection", "key"} → {"version", "document"?, "lease"?}
	AppSave = "store_save" // {"collection", "key", "expected_version", "document", "lease"?} → {"version"} | {"conflict": true, "version", "document", "lease"?}
)

// App is the store the application keeps ({"type": "app"}): every Load
// is a store_load request, every CompareAndSave a store_save the
// application answers as a compare-and-save on its own storage (one
// small helper in each binding).
type App struct{ ask Ask }

// NewApp returns the application's store over ask.
func NewApp(ask Ask) *App { return &App{ask: ask} }

type appDoc struct {
	Version  *Version        `json:"version"`
	Document json.RawMessage `json:"document,omitempty"`
	Lease    *Lease          `json:"lease,omitempty"`
	Conflict bool            `json:"conflict,omitempty"`
}

type appSave struct {
	Collection      string          `json:"collection"`
	Key             string          `json:"key"`
	ExpectedVersion Version         `json:"expected_version"`
	Document        json.RawMessage `json:"document"`
	Lease           *Lease          `json:"lease,omitempty"`
}

func (a appDoc) document() *Document {
	if len(a.Document) == 0 || string(a.Document) == "null" {
		return nil
	}
	return &Document{Body: []byte(a.Document), Lease: a.Lease}
}

// Load implements Store.
func (s *App) Load(ctx context.Context, collection, key string) (*Document, Version, error) {
	data, err := s.ask(ctx, AppLoad, jsonx.MustMarshal(map[string]string{"collection": collection, "key": key}))
	if err != nil {
		return nil, 0, err
	}
	var ans appDoc
	if jsonx.Unmarshal(orEmpty(data), &ans) != nil {
		return nil, 0, fmt.Errorf("the application's answer to %s is not {\"version\", \"document\"}", AppLoad)
	}
	if ans.Version == nil || *ans.Version <= 0 {
		return nil, 0, nil
	}
	d := ans.document()
	if d == nil {
		return nil, 0, fmt.Errorf("the application's answer to %s has version %d but no document", AppLoad, *ans.Version)
	}
	return d, *ans.Version, nil
}

// CompareAndSave implements Store.
func (s *App) CompareAndSave(ctx context.Context, collection, key string, expected Version, doc *Document) (Version, *Document, error) {
	if err := checkBody(collection, key, doc); err != nil {
		return 0, nil, err
	}
	payload := jsonx.MustMarshal(appSave{Collection: collection, Key: key, ExpectedVersion: expected, Document: doc.Body, Lease: doc.Lease})
	data, err := s.ask(ctx, AppSave, payload)
	if err != nil {
		return 0, nil, err
	}
	var ans appDoc
	if jsonx.Unmarshal(orEmpty(data), &ans) != nil || ans.Version == nil {
		return 0, nil, fmt.Errorf("the application's answer to %s is not {\"version\"} or {\"conflict\": true, \"version\", \"document\"}", AppSave)
	}
	if ans.Conflict {
		if *ans.Version == expected {
			return 0, nil, fmt.Errorf("the application's %s conflict answer gives the expected version %d back", AppSave, expected)
		}
		return *ans.Version, ans.document(), nil
	}
	if *ans.Version <= expected {
		return 0, nil, fmt.Errorf("the application's %s answer must give a version above expected_version %d", AppSave, expected)
	}
	return *ans.Version, nil, nil
}

// Close implements Store.
func (s *App) Close() error { return nil }

func orEmpty(data []byte) []byte {
	if len(data) == 0 {
		return []byte("{}")
	}
	return data
}
