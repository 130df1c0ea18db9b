package sandbox_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/host"
	"github.com/lemonmcp/lemonmcp/sandbox"
)

// TestHostNamesTheSignalOfAConfinedCrash: a confined server killed by a
// signal is reported by the host, in lmcp_host_servers and in its
// restarting events, exactly as an unconfined one: by the signal, with no
// exit code (before the status record: exit code 137).
func TestHostNamesTheSignalOfAConfinedCrash(t *testing.T) {
	for _, boxed := range []bool{false, true} {
		name := map[bool]string{false: "unconfined", true: "confined"}[boxed]
		t.Run(name, func(t *testing.T) {
			argv, _ := json.Marshal([]string{"-c", "echo dying >&2; kill -KILL $$"})
			srv := `{"command":"/bin/sh","args":` + string(argv) +
				`,"restart":{"max_restarts":1,"backoff_ms":20},"timeouts":{"ready_ms":5000,"close_grace_ms":200}`
			if boxed {
				srv += `,"sandboxEnabled":true`
			}
			h, events := connectHost(t, `{"mcpServers":{"s":`+srv+`}}}`, func(kind, payload string) bool { return kind == "restarting" })

			type report struct {
				State     string           `json:"state"`
				LastError string           `json:"last_error"`
				ExitCode  *int             `json:"exit_code"`
				Signal    string           `json:"signal"`
				Sandbox   *json.RawMessage `json:"sandbox"`
			}
			var r report
			require.Eventually(t, func() bool {
				var all map[string]report
				if json.Unmarshal(h.Servers(), &all) != nil {
					return false
				}
				r = all["s"]
				return strings.Contains(r.LastError, "gave up")
			}, 30*time.Second, 20*time.Millisecond)
			require.Equal(t, boxed, r.Sandbox != nil, "the report says whether it was confined")
			require.Equal(t, "SIGKILL", r.Signal)
			require.Nil(t, r.ExitCode)

			restarting := events()
			require.NotEmpty(t, restarting)
			require.Contains(t, restarting[0], `"signal":"SIGKILL"`)
			require.Contains(t, restarting[0], "server was killed by SIGKILL")
			require.NotContains(t, restarting[0], "exit_code")
			// The event carries what confined the lost server.
			require.Equal(t, boxed, strings.Contains(restarting[0], `"sandbox":{"namespaces":true`), restarting[0])
		})
	}
}

// connectHost starts a host of config, closed and freed at cleanup, and
// returns the payloads of the events keep selects, as they are so far.
func connectHost(t *testing.T, config string, keep func(kind, payload string) bool) (*host.Host, func() []string) {
	t.Helper()
	h, err := host.Parse([]byte(config), "test")
	require.Nil(t, err)
	var mu sync.Mutex
	var kept []string
	h.SetEventHandler(func(kind string, payload []byte) {
		if keep(kind, string(payload)) {
			mu.Lock()
			kept = append(kept, string(payload))
			mu.Unlock()
		}
	}, nil)
	t.Cleanup(func() {
		h.Close(5 * time.Second)
		h.Free()
	})
	require.Nil(t, h.Connect())
	return h, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), kept...)
	}
}

// refusingServer (tests/fixtures/escapes/refusing_server.py) is a minimal
// MCP server that first asks the sandbox's proxy for a host allowedDomains
// does not name, then serves: it goes on running after the refusal, with
// nothing to say of it but "fetch failed".
const refusingServer = "../tests/fixtures/escapes/refusing_server.py"

// TestHostWarnsOfProxyRefusals: a request the proxy refuses while the
// server keeps running is a warning event of the host naming the server,
// the destination and the rule, and lmcp_host_servers lists it.
func TestHostWarnsOfProxyRefusals(t *testing.T) {
	script, err := filepath.Abs(refusingServer)
	require.NoError(t, err)
	argv, _ := json.Marshal([]string{script})
	srv := `{"command":"python3","args":` + string(argv) + `,"sandboxEnabled":true,
		"sandbox":{"network":{"allowedDomains":["registry.example"]}},"timeouts":{"ready_ms":30000,"close_grace_ms":200}}`
	h, events := connectHost(t, `{"mcpServers":{"fetcher":`+srv+`}}`, func(kind, payload string) bool {
		return kind == "log" && strings.Contains(payload, `"level":"warning"`)
	})
	const want = "the sandbox refused network access to denied.example:8080: not in allowedDomains"
	var servers map[string]map[string]any
	require.Eventually(t, func() bool {
		require.NoError(t, json.Unmarshal(h.Servers(), &servers))
		refusals, _ := servers["fetcher"]["sandbox_refusals"].([]any)
		return servers["fetcher"]["state"] == host.StateReady && len(refusals) > 0
	}, 60*time.Second, 20*time.Millisecond, "%v", servers)
	require.Equal(t, []any{want}, servers["fetcher"]["sandbox_refusals"])
	warnings := events()
	require.Len(t, warnings, 1, "%v", warnings)
	require.Contains(t, warnings[0], `"server":"fetcher"`)
	require.Contains(t, warnings[0], want)
}

// TestHostReportsWhatEachStartGot: lmcp_host_servers and the ready event
// report what the helper set up for each server's start, not what the
// probe found this machine could give: a server allowed Unix sockets and
// one given allowedDomains each differ from the probe, and from each
// other.
func TestHostReportsWhatEachStartGot(t *testing.T) {
	script, err := filepath.Abs(refusingServer) // here, a minimal server
	require.NoError(t, err)
	argv, _ := json.Marshal([]string{"-u", script})
	srv := func(sb string) string {
		return `{"command":"python3","args":` + string(argv) + `,"sandboxEnabled":true,"sandbox":` + sb +
			`,"timeouts":{"ready_ms":30000,"close_grace_ms":200}}`
	}
	h, events := connectHost(t, `{"mcpServers":{"sockets":`+srv(`{"network":{"allowAllUnixSockets":true}}`)+
		`,"proxied":`+srv(`{"network":{"allowedDomains":["registry.example"]}}`)+`}}`,
		func(kind, _ string) bool { return kind == "ready" })
	probe := sandbox.Features()
	require.NotNil(t, probe)
	require.Equal(t, "denied", probe.UnixSockets)
	require.Equal(t, "none", probe.Network)

	type report struct {
		State   string          `json:"state"`
		Sandbox *sandbox.Report `json:"sandbox"`
	}
	var servers map[string]report
	require.Eventually(t, func() bool {
		if json.Unmarshal(h.Servers(), &servers) != nil {
			return false
		}
		return servers["sockets"].State == host.StateReady && servers["proxied"].State == host.StateReady
	}, 60*time.Second, 20*time.Millisecond)
	want := map[string][2]string{"sockets": {"allowed", "none"}, "proxied": {"denied", "proxy"}}
	for name, w := range want {
		sb := servers[name].Sandbox
		require.NotNil(t, sb, name)
		require.Equal(t, w, [2]string{sb.UnixSockets, sb.Network}, name)
		require.True(t, sb.Namespaces, name)
		require.Empty(t, sb.Missing, name)
	}

	var ready []string
	require.Eventually(t, func() bool { ready = events(); return len(ready) == 2 }, 30*time.Second, 10*time.Millisecond)
	for _, payload := range ready {
		var ev struct {
			Server string `json:"server"`
			Info   struct {
				Sandbox *sandbox.Report `json:"sandbox"`
			} `json:"info"`
		}
		require.NoError(t, json.Unmarshal([]byte(payload), &ev), payload)
		require.Equal(t, servers[ev.Server].Sandbox, ev.Info.Sandbox, "the ready event of %s", ev.Server)
	}
}
