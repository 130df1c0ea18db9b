package stdiotests

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/config"
	"github.com/lemonmcp/lemonmcp/core"
)

// host is a client with a host handler that answers the way a person
// would: elicitation accepted with defaults, roots listed, sampling
// answered by a stub model.
type host struct {
	*core.Client
	mu    sync.Mutex
	kinds []string
}

func (h *host) seen() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.kinds...)
}

func start(t *testing.T, mode string, args ...string) (*host, *core.Error) {
	t.Helper()
	argv, _ := json.Marshal(args)
	cfg := fmt.Sprintf(`{"transport":{"type":"stdio","command":%q,"args":%s},"protocol":{"mode":%q},
		"handlers":{"roots":{},"elicitation":{},"sampling":{}},"sampling_policy":{"mode":"model","max_tokens":100},
		"timeouts":{"ready_ms":5000,"call_ms":10000,"close_grace_ms":500}}`, fixtureBin, argv, mode)
	p, perr := config.Parse([]byte(cfg), "test")
	require.Nil(t, errOrNil(perr))
	h := &host{Client: core.New(p.Options, p.Transport)}
	require.Nil(t, errOrNil(h.SetAppRequestHandler(func(id uint64, kind string, _ []byte) {
		h.mu.Lock()
		h.kinds = append(h.kinds, kind)
		h.mu.Unlock()
		switch kind {
		case "elicitation":
			h.Respond(id, core.StatusOK, []byte(`{"action":"accept","content":{"age":7}}`))
		case "roots":
			h.Respond(id, core.StatusOK, []byte(`{"roots":[{"uri":"file:///work","name":"work"}]}`))
		case "sampling":
			h.Respond(id, core.StatusOK, []byte(`{"role":"assistant","content":{"type":"text","text":"Paris"},"model":"stub"}`))
		default:
			h.Respond(id, core.StatusUnsupported, nil)
		}
	}, nil)))
	require.Nil(t, errOrNil(h.Connect()))
	t.Cleanup(func() {
		h.Close(5 * time.Second)
		h.Free()
	})
	return h, h.WaitReady(10 * time.Second)
}

func toolText(t *testing.T, c *host, name, args string) string {
	t.Helper()
	res, err := c.CallSync("tools/call", []byte(`{"name":"`+name+`","arguments":`+args+`}`), core.CallOptions{})
	require.Nil(t, errOrNil(err), name)
	var r struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	require.NoError(t, json.Unmarshal(res, &r))
	require.False(t, r.IsError, "%s", res)
	require.NotEmpty(t, r.Content)
	return r.Content[0].Text
}

func era(t *testing.T, c *host) (string, string) {
	info, err := c.ServerInfo()
	require.Nil(t, errOrNil(err))
	var si struct {
		Era     string `json:"era"`
		Version string `json:"protocolVersion"`
	}
	require.NoError(t, json.Unmarshal(info, &si))
	return si.Era, si.Version
}

// The same host code works in both eras: a dual-era client probes, and
// the fixture's tools that ask the client something reach the host as the
// same app requests, whether they came as server requests (legacy) or
// inside input_required results (modern).
func TestBothErasOverStdio(t *testing.T) {
	for _, tc := range []struct {
		name, mode, era, version string
		args                     []string
	}{
		{"auto finds modern", "auto", "modern", "2026-07-28", nil},
		{"modern only", "modern", "modern", "2026-07-28", nil},
		{"auto falls back to legacy", "auto", "legacy", "2025-11-25", []string{"-protocol", "2025-11-25"}},
		{"legacy mode", "legacy", "legacy", "2025-11-25", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logFile := filepath.Join(t.TempDir(), "stdin.log")
			c, err := start(t, tc.mode, append([]string{"-log-file", logFile}, tc.args...)...)
			require.Nil(t, errOrNil(err))
			gotEra, gotVersion := era(t, c)
			require.Equal(t, tc.era, gotEra)
			require.Equal(t, tc.version, gotVersion)

			require.Equal(t, "hi", toolText(t, c, "echo", `{"text":"hi"}`))
			require.Contains(t, toolText(t, c, "elicit", `{"message":"who?"}`), `"name":"anon"`, "schema default filled")
			require.Contains(t, toolText(t, c, "roots", `{}`), "file:///work")
			require.Contains(t, toolText(t, c, "sample", `{"prompt":"capital?","max_tokens":10}`), "Paris")
			require.Equal(t, []string{"elicitation", "roots", "sampling"}, c.seen())

			require.Nil(t, errOrNil(c.Close(5*time.Second)))
			raw, rerr := os.ReadFile(logFile)
			require.NoError(t, rerr)
			lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
			sawInit := false
			for _, line := range lines {
				var m struct {
					ID     json.RawMessage `json:"id"`
					Method string          `json:"method"`
					Params struct {
						Meta map[string]json.RawMessage `json:"_meta"`
					} `json:"params"`
				}
				require.NoError(t, json.Unmarshal([]byte(line), &m), line)
				sawInit = sawInit || m.Method == "initialize"
				if tc.era != "modern" {
					continue
				}
				require.NotEqual(t, "", m.Method, "a modern client never sends responses: %s", line)
				if len(m.ID) > 0 {
					require.Equal(t, `"2026-07-28"`, string(m.Params.Meta["io.modelcontextprotocol/protocolVersion"]), line)
					require.Contains(t, m.Params.Meta, "io.modelcontextprotocol/clientCapabilities")
					require.Contains(t, m.Params.Meta, "io.modelcontextprotocol/clientInfo")
				}
			}
			require.Equal(t, tc.era == "legacy", sawInit)
		})
	}
}

// A modern-only client refuses a legacy-only server, clearly.
func TestModernOnlyRefusesLegacyServer(t *testing.T) {
	_, err := start(t, "modern", "-protocol", "2025-11-25")
	require.NotNil(t, err)
	require.Equal(t, core.StatusProtocol, err.Status)
	require.Contains(t, err.Message, "does not speak protocol 2026-07-28")
}

// On stdio a modern call is cancelled with notifications/cancelled.
func TestModernCancelOverStdio(t *testing.T) {
	logFile := filepath.Join(t.TempDir(), "stdin.log")
	c, err := start(t, "modern", "-log-file", logFile)
	require.Nil(t, errOrNil(err))
	done := make(chan core.Status, 1)
	id, cerr := c.Call("tools/call", []byte(`{"name":"slow","arguments":{"ms":5000,"steps":5}}`), core.CallOptions{}, func(_ uint64, st core.Status, _ []byte) { done <- st })
	require.Nil(t, errOrNil(cerr))
	time.Sleep(200 * time.Millisecond)
	require.Nil(t, errOrNil(c.Cancel(id)))
	require.Equal(t, core.StatusCancelled, <-done)
	require.Eventually(t, func() bool {
		raw, _ := os.ReadFile(logFile)
		return strings.Contains(string(raw), `"method":"notifications/cancelled"`)
	}, 5*time.Second, 20*time.Millisecond)
}

func errOrNil(e *core.Error) error {
	if e == nil {
		return nil
	}
	return e
}
