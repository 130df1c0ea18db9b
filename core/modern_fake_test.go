package core

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

const modernVersion = "2026-07-28"

// discoverOK answers server/discover as a 2026-07-28 server would.
func discoverOK(caps map[string]any) handlerFunc {
	return func(_ *fakeServer, _ wireMsg) reply {
		return reply{result: map[string]any{
			"supportedVersions": []string{modernVersion},
			"capabilities":      caps,
			"instructions":      "modern and stateless",
			"_meta":             map[string]any{"io.modelcontextprotocol/serverInfo": map[string]any{"name": "modern-fake", "version": "2.0"}},
			"ttlMs":             60000,
			"cacheScope":        "public",
		}}
	}
}

// newModernServer is a fake 2026-07-28 server (it also answers
// initialize, so a test sees whether the client wrongly falls back).
func newModernServer(t *testing.T) *fakeServer {
	s := newFakeServer(t, "2025-11-25", defaultCaps())
	s.handle("server/discover", discoverOK(defaultCaps()))
	return s
}

func modernOptions(mode string) Options {
	o := testOptions()
	o.Mode = mode
	if mode == ModeModern {
		o.Versions = nil
	}
	return o
}

// hostFunc answers one app request.
type hostFunc func(c *Client, id uint64, kind string, payload []byte)

// connectWith connects a client of s with a host handler and waits for
// the handshake's end, whatever it is.
func connectWith(t *testing.T, s *fakeServer, opts Options, host hostFunc) (*Client, *Error) {
	tr, peer := s.pairForTest()
	c := New(opts, tr)
	s.peer = peer
	go s.serve()
	t.Cleanup(func() { c.Free(); close(s.stop); <-s.done })
	if host != nil {
		require.Nil(t, errOrNil(c.SetAppRequestHandler(func(id uint64, kind string, payload []byte) { host(c, id, kind, payload) }, nil)))
	}
	require.Nil(t, errOrNil(c.Connect()))
	return c, c.WaitReady(5 * time.Second)
}

// meta decodes a request's params._meta.
func meta(t *testing.T, m wireMsg) map[string]json.RawMessage {
	t.Helper()
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	require.NoError(t, json.Unmarshal(m.Params, &p))
	return p.Meta
}

func params(t *testing.T, m wireMsg) map[string]json.RawMessage {
	t.Helper()
	var p map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(m.Params, &p))
	return p
}

func (s *fakeServer) requests(method string) []wireMsg {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []wireMsg
	for _, m := range s.received {
		if m.Method == method {
			out = append(out, m)
		}
	}
	return out
}
