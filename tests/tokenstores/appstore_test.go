//go:build tokenstores

package tokenstores

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/config"
	"github.com/lemonmcp/lemonmcp/core"
)

// appStore is an application's own versioned store, answering the
// "token_load" / "token_save" app requests of auth.token_store
// {"type": "app"} for several clients as one database would.
type appStore struct {
	mu      sync.Mutex
	version map[string]int64
	record  map[string]json.RawMessage
	legacy  bool // answer the single-process form
	saves   int
}

func (s *appStore) answer(kind string, payload []byte) (core.Status, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var req struct {
		Key             string `json:"key"`
		ExpectedVersion int64  `json:"expected_version"`
	}
	if err := json.Unmarshal(payload, &req); err != nil || req.Key == "" {
		return core.StatusInvalidArgument, ""
	}
	switch kind {
	case "token_load":
		if s.legacy {
			if r, ok := s.record[req.Key]; ok {
				return core.StatusOK, string(r)
			}
			return core.StatusOK, "{}"
		}
		v := s.version[req.Key]
		if v == 0 {
			return core.StatusOK, `{"version": 0}`
		}
		return core.StatusOK, fmt.Sprintf(`{"version": %d, "record": %s}`, v, s.record[req.Key])
	case "token_save":
		s.saves++
		var rec map[string]any
		_ = json.Unmarshal(payload, &rec)
		delete(rec, "key")
		delete(rec, "expected_version")
		if s.legacy {
			s.record[req.Key] = payload // stored as it is
			return core.StatusOK, "{}"
		}
		if cur := s.version[req.Key]; cur != req.ExpectedVersion {
			return core.StatusOK, fmt.Sprintf(`{"conflict": true, "version": %d, "record": %s}`, cur, s.record[req.Key])
		}
		data, _ := json.Marshal(rec)
		s.version[req.Key]++
		s.record[req.Key] = data
		return core.StatusOK, fmt.Sprintf(`{"version": %d}`, s.version[req.Key])
	}
	return core.StatusInvalidArgument, ""
}

func appClient(t *testing.T, base string, s *appStore) *core.Client {
	cfg := clientConfig(base, map[string]any{"type": "app"})
	raw, err := json.Marshal(cfg)
	require.NoError(t, err)
	p, perr := config.Parse(raw, "test")
	require.Nil(t, perr)
	c := core.New(p.Options, p.Transport)
	t.Cleanup(func() { c.Close(5 * time.Second); c.Free() })
	require.Nil(t, c.SetAppRequestHandler(func(id uint64, kind string, payload []byte) {
		go func() {
			st, answer := s.answer(kind, payload)
			_ = c.Respond(id, st, []byte(answer))
		}()
	}, nil))
	return c
}

// TestAppStoreVersioned: clients that share the application's own
// versioned store (as processes sharing its database would) never redeem a
// refresh token twice.
func TestAppStoreVersioned(t *testing.T) {
	base := strictServer(t, 0)
	s := &appStore{version: map[string]int64{}, record: map[string]json.RawMessage{}}
	var clients []*core.Client
	for i := 0; i < 4; i++ {
		clients = append(clients, appClient(t, base, s))
	}
	until := time.Now().Add(5 * time.Second)
	var wg sync.WaitGroup
	errs := make(chan *core.Error, 64)
	for _, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := c.Connect(); err != nil {
				errs <- err
				return
			}
			if err := c.WaitReady(30 * time.Second); err != nil {
				errs <- err
				return
			}
			for time.Now().Before(until) {
				if _, err := c.CallSync("tools/call", []byte(`{"name":"echo","arguments":{"text":"app"}}`), core.CallOptions{}); err != nil {
					errs <- err
					return
				}
				time.Sleep(100 * time.Millisecond) // paced: each client still meets every expiry
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.Nil(t, err)
	}
	st := statsOf(t, base)
	require.Zero(t, st.Reuses)
	require.Zero(t, st.Revocations)
	require.Zero(t, st.Refused)
	require.Positive(t, st.Redemptions)
	require.LessOrEqual(t, st.Redemptions, int(5*time.Second/tokenPeriod)+2)
}

// TestAppStoreSingleProcessForm: a host answering the single-process form
// (the record as saved, {} to a save) still works with {"type": "app"}.
func TestAppStoreSingleProcessForm(t *testing.T) {
	base := strictServer(t, 0)
	s := &appStore{version: map[string]int64{}, record: map[string]json.RawMessage{}, legacy: true}
	c := appClient(t, base, s)
	require.Nil(t, c.Connect())
	require.Nil(t, c.WaitReady(30*time.Second))
	deadline := time.Now().Add(2*tokenPeriod + 500*time.Millisecond) // across two expiries
	for time.Now().Before(deadline) {
		_, err := c.CallSync("tools/call", []byte(`{"name":"echo","arguments":{"text":"legacy"}}`), core.CallOptions{})
		require.Nil(t, err)
		time.Sleep(50 * time.Millisecond)
	}
	st := statsOf(t, base)
	require.Zero(t, st.Reuses)
	require.GreaterOrEqual(t, st.Redemptions, 2, "refreshed across the expiries")
	s.mu.Lock()
	defer s.mu.Unlock()
	require.Positive(t, s.saves)
}
