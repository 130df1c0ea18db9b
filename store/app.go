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
	AppLoad = "store_load" // {"collection", "key"} → {"version", "document"?}
	AppSave = "store_save" // {"collection", "key", "expected_version", "document"} → {"version"} | {"conflict": true, "version", "document"}
)

// App is the store the application keeps ({"type": "app"}): every Load
// is a store_load request, every CompareAndSave a store_save the
// application answers as a compare-and-save on its own storage (one
// small helper in each binding). The document it keeps is opaque to it:
// {"body": the document (or its sealed envelope), "lease"?: the lease}.
type App struct{ ask Ask }

// appDocument is the document as the application keeps it.
type appDocument struct {
	Body  json.RawMessage `json:"body"`
	Lease *Lease          `json:"lease,omitempty"`
}

// NewApp returns the application's store over ask.
func NewApp(ask Ask) *App { return &App{ask: ask} }

type appDoc struct {
	Version  *Version     `json:"version"`
	Document *appDocument `json:"document,omitempty"`
	Conflict bool         `json:"conflict,omitempty"`
}

type appSave struct {
	Collection      string      `json:"collection"`
	Key             string      `json:"key"`
	ExpectedVersion Version     `json:"expected_version"`
	Document        appDocument `json:"document"`
}

func (a appDoc) document() *Document {
	if a.Document == nil || len(a.Document.Body) == 0 || string(a.Document.Body) == "null" {
		return nil
	}
	return &Document{Body: []byte(a.Document.Body), Lease: a.Document.Lease}
}

// Load implements Store.
func (s *App) Load(ctx context.Context, collection, key string) (*Document, Version, error) {
	data, err := s.ask(ctx, AppLoad, jsonx.MustMarshal(map[string]string{"collection": collection, "key": key}))
	if err != nil {
		return nil, 0, err
	}
	var ans appDoc
	if jsonx.Unmarshal(orEmpty(data), &ans) != nil {
		return nil, 0, fmt.Errorf("the application's answer to %s is not {\"version\", \"document\": {\"body\", \"lease\"?}}", AppLoad)
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
	payload := jsonx.MustMarshal(appSave{Collection: collection, Key: key, ExpectedVersion: expected, Document: appDocument{Body: doc.Body, Lease: doc.Lease}})
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
