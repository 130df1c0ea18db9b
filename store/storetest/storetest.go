package storetest

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/store"
)

// Backends are the unsealed stores by name; those needing a server join
// when its URL is in the environment.
func Backends(t testing.TB) map[string]store.Store {
	t.Helper()
	f, err := store.OpenFile(filepath.Join(t.TempDir(), "store.json"))
	require.NoError(t, err)
	out := map[string]store.Store{"memory": store.NewMemory(), "file": f, "app": store.NewApp(NewApplication().Ask)}
	for name, s := range ServerBackends(t) {
		out[name] = s
	}
	for _, s := range out {
		t.Cleanup(func() { _ = s.Close() })
	}
	return out
}

// All are Backends and each sealed ("<name>+sealed") with a fresh key in
// an environment variable of the test.
func All(t *testing.T) map[string]store.Store {
	t.Helper()
	out := Backends(t)
	env := SetKey(t, "LEMONMCP_TEST_STORE_KEY")
	for name, s := range Backends(t) {
		sealed, err := store.NewSealed(s, store.Encryption{KeyEnv: env})
		require.NoError(t, err)
		out[name+"+sealed"] = sealed
	}
	return out
}

// SetKey puts a fresh random key (base64) in the environment variable
// name for the test and answers name.
func SetKey(t *testing.T, name string) string {
	t.Helper()
	t.Setenv(name, NewKey())
	return name
}

// NewKey is a fresh random key, in base64.
func NewKey() string {
	k := make([]byte, 32)
	_, _ = rand.Read(k)
	return base64.StdEncoding.EncodeToString(k)
}

// ServerBackends are the stores backed by servers named in the
// environment (LEMONMCP_TEST_POSTGRES_URL, LEMONMCP_TEST_REDIS_URL).
func ServerBackends(t testing.TB) map[string]store.Store {
	t.Helper()
	out := map[string]store.Store{}
	if u := os.Getenv("LEMONMCP_TEST_POSTGRES_URL"); u != "" {
		s, err := store.OpenPostgres(u)
		require.NoError(t, err)
		out["postgres"] = s
	}
	if u := os.Getenv("LEMONMCP_TEST_REDIS_URL"); u != "" {
		s, err := store.OpenRedis(u)
		require.NoError(t, err)
		out["redis"] = s
	}
	if _, ok := t.(*testing.B); !ok && os.Getenv("LEMONMCP_REQUIRE_STORES") != "" {
		require.Len(t, out, 2, "LEMONMCP_TEST_POSTGRES_URL and LEMONMCP_TEST_REDIS_URL must name servers")
	}
	return out
}

// Application is an application's own store as a binding's helper keeps
// it: it answers store_load and store_save (docs/app-requests.md) from a
// map, with the compare-and-save the contract asks.
type Application struct {
	mu   sync.Mutex
	docs map[[2]string]appEntry
}

type appEntry struct {
	Version  int64           `json:"version"`
	Document json.RawMessage `json:"document"`
}

// NewApplication is an empty application store.
func NewApplication() *Application { return &Application{docs: map[[2]string]appEntry{}} }

// Ask answers one request as the application would.
func (a *Application) Ask(_ context.Context, kind string, payload []byte) ([]byte, error) {
	var req struct {
		Collection      string          `json:"collection"`
		Key             string          `json:"key"`
		ExpectedVersion int64           `json:"expected_version"`
		Document        json.RawMessage `json:"document"`
	}
	if err := json.Unmarshal(payload, &req); err != nil {
		return nil, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	k := [2]string{req.Collection, req.Key}
	cur, ok := a.docs[k]
	switch kind {
	case store.AppLoad:
		if !ok {
			return []byte(`{"version":0}`), nil
		}
		return json.Marshal(cur)
	case store.AppSave:
		if cur.Version != req.ExpectedVersion {
			return json.Marshal(struct {
				Conflict bool `json:"conflict"`
				appEntry
			}{true, cur})
		}
		a.docs[k] = appEntry{Version: cur.Version + 1, Document: req.Document}
		return json.Marshal(map[string]int64{"version": cur.Version + 1})
	}
	return nil, errors.New("not a store request: " + kind)
}

// Bodies are the bodies of the documents of collection, by key (what the
// application keeps, as a test inspects it).
func (a *Application) Bodies(collection string) map[string]json.RawMessage {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := map[string]json.RawMessage{}
	for k, e := range a.docs {
		if k[0] != collection {
			continue
		}
		var d struct {
			Body json.RawMessage `json:"body"`
		}
		if json.Unmarshal(e.Document, &d) == nil {
			out[k[1]] = d.Body
		}
	}
	return out
}
