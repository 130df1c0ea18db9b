package hosttests

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/core"
	"github.com/lemonmcp/lemonmcp/host"
)

// failureReport is the part of a server report that says why.
type failureReport struct {
	State      string   `json:"state"`
	Start      string   `json:"start"`
	LastError  string   `json:"last_error"`
	Cause      string   `json:"cause"`
	ExitCode   *int     `json:"exit_code"`
	Signal     string   `json:"signal"`
	StderrTail []string `json:"stderr_tail"`
	Summary    string   `json:"summary"`
	Final      *bool    `json:"final"`
}

func failureReports(t *testing.T, h *host.Host) map[string]failureReport {
	t.Helper()
	var out map[string]failureReport
	require.NoError(t, json.Unmarshal(h.Servers(), &out))
	return out
}

// reportsNow is failureReports for an Eventually condition, which runs
// off the test goroutine (where require must not be used): a list that
// does not decode is no report yet.
func reportsNow(h *host.Host) map[string]failureReport {
	var out map[string]failureReport
	if json.Unmarshal(h.Servers(), &out) != nil {
		return nil
	}
	return out
}

// TestHostReportsWhyAServerFailed: a server that prints its trouble and
// exits (or is killed) is reported with its first cause, exit status or
// signal, and its last stderr lines, escaped, bounded and without the
// secrets its configuration holds.
func TestHostReportsWhyAServerFailed(t *testing.T) {
	many := "for i in $(seq 1 30); do echo line $i >&2; done; exit 2"
	tests := []struct {
		name   string
		script string
		env    string
		check  func(t *testing.T, r failureReport)
	}{
		{name: "exit status and stderr", script: "echo 'Error: GITHUB_TOKEN is not set' >&2; exit 1",
			check: func(t *testing.T, r failureReport) {
				require.NotNil(t, r.ExitCode)
				require.Equal(t, 1, *r.ExitCode)
				require.Equal(t, []string{"Error: GITHUB_TOKEN is not set"}, r.StderrTail)
				require.NotEmpty(t, r.Cause)
				require.True(t, strings.HasPrefix(r.Summary, `server "s" failed to start: `), r.Summary)
				require.Contains(t, r.Summary, "; exit status 1; stderr: Error: GITHUB_TOKEN is not set")
			}},
		{name: "signal", script: "echo dying >&2; kill -9 $$",
			check: func(t *testing.T, r failureReport) {
				require.Equal(t, "SIGKILL", r.Signal)
				require.Nil(t, r.ExitCode)
				require.Equal(t, []string{"dying"}, r.StderrTail)
			}},
		{name: "secrets scrubbed, control characters escaped", env: `"env":{"API_TOKEN":"tok-1234567890"}`,
			script: `printf '\033[31mbad token tok-1234567890\033[0m\n' >&2; exit 3`,
			check: func(t *testing.T, r failureReport) {
				require.Equal(t, []string{`\x1b[31mbad token [redacted]\x1b[0m`}, r.StderrTail)
			}},
		{name: "bounded to the last lines", script: many,
			check: func(t *testing.T, r failureReport) {
				require.Len(t, r.StderrTail, 10)
				require.Equal(t, "line 30", r.StderrTail[9])
				require.True(t, strings.HasSuffix(r.Summary, "; stderr: line 28 | line 29 | line 30"), "the summary quotes the last three lines: %s", r.Summary)
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			argv, _ := json.Marshal([]string{"-c", tc.script})
			srv := fmt.Sprintf(`{"command":"/bin/sh","args":%s,"restart":{"max_restarts":1,"backoff_ms":20},"timeouts":{"ready_ms":5000,"close_grace_ms":200}`, argv)
			if tc.env != "" {
				srv += "," + tc.env
			}
			h, _ := newHost(t, `{"mcpServers":{"s":`+srv+`}}}`)
			require.Eventually(t, func() bool {
				return strings.Contains(reportsNow(h)["s"].LastError, "gave up")
			}, 15*time.Second, 20*time.Millisecond)
			r := failureReports(t, h)["s"]
			require.Equal(t, "failed", r.State)
			require.NotNil(t, r.Final)
			require.True(t, *r.Final, "a server that gave up has its whole report")
			tc.check(t, r)
			raw := string(h.Servers())
			require.NotContains(t, raw, "tok-1234567890")
		})
	}
}

// TestHostCallToAFailedServerFailsAtOnce: a call to a server that failed
// for good fails at once with its reason, and a lazy one's start failure
// is the call's error, the same, whether or not the call waits for the
// server's pin verdict.
func TestHostCallToAFailedServerFailsAtOnce(t *testing.T) {
	for _, tc := range []struct{ name, start, pins string }{
		{"eager", "eager", ""},
		{"lazy", "lazy", ""},
		{"eager with pins", "eager", "pins"},
		{"lazy with pins", "lazy", "pins"},
	} {
		start := tc.start
		t.Run(tc.name, func(t *testing.T) {
			pins := ""
			if tc.pins != "" {
				pins = fmt.Sprintf(`"pins":{"store":{"type":"file","path":%q}},`, filepath.Join(t.TempDir(), "pins.json"))
			}
			h, _ := newHost(t, `{`+pins+`"start":"`+start+`","mcpServers":{"broken":{"command":"/nonexistent/mcp-server"}}}`)
			if err := h.WaitReady(10 * time.Second); start == "eager" {
				require.NotNil(t, err, "its only server failed")
			} else {
				require.Nil(t, errOrNil(err), "a lazy server is not started by wait_ready")
			}
			_, err := h.CallToolSync("broken__echo", []byte(`{}`), core.CallOptions{})
			require.NotNil(t, err)
			require.Equal(t, core.StatusInvalidState, err.Status, err.Message)
			require.Contains(t, err.Message, "executable not found: /nonexistent/mcp-server")
			require.JSONEq(t, `{"cause":"executable_not_found"}`, string(err.Data), "the machine-readable cause")
			// The call reads the client's failure at once; the host's report
			// follows when the host has handled the client's event, which
			// may be later (lazy with pins: the verdict's wait saw it first).
			r := failureReports(t, h)["broken"]
			reported := func(r failureReport) bool {
				return r.State == "failed" && r.Cause != "" && r.Final != nil && r.Summary != ""
			}
			for deadline := time.Now().Add(10 * time.Second); !reported(r) && time.Now().Before(deadline); {
				time.Sleep(10 * time.Millisecond)
				r = failureReports(t, h)["broken"]
			}
			require.Equal(t, "failed", r.State)
			require.Contains(t, r.Cause, "executable not found")
			require.NotNil(t, r.Final)
			require.True(t, *r.Final, "a start that could not happen has nothing more to report")
			require.Equal(t, `server "broken" failed to start: executable not found: /nonexistent/mcp-server (not retried: starting it again cannot succeed)`, r.Summary)
		})
	}
}

// TestHostLazyStart: lazy servers start on their first call or list; the
// others are never started.
func TestHostLazyStart(t *testing.T) {
	before := fixtureProcesses()
	cfg := fmt.Sprintf(`{"start":"lazy","mcpServers":{"a":%s,"b":%s,"c":%s}}`, stdioServer(""), stdioServer(""), stdioServer(`"start":"eager"`))
	h, _ := newHost(t, cfg)
	require.Nil(t, errOrNil(h.WaitReady(10*time.Second)), "wait_ready does not start lazy servers")
	rep := failureReports(t, h)
	require.Equal(t, "new", rep["a"].State)
	require.Equal(t, "lazy", rep["a"].Start)
	require.Equal(t, "new", rep["b"].State)
	require.Equal(t, "ready", rep["c"].State)
	require.Equal(t, `server "a" is not started`, rep["a"].Summary)
	require.Equal(t, `server "c" is ready`, rep["c"].Summary)
	require.Nil(t, rep["c"].Final, "final is a failed server's")
	require.Equal(t, "", rep["c"].Start)
	require.Equal(t, before+1, fixtureProcesses(), "only the eager server runs")

	res, err := h.CallToolSync("a__echo", []byte(`{"text":"woke"}`), core.CallOptions{})
	require.Nil(t, errOrNil(err), "the first call starts the lazy server and waits for it")
	require.Equal(t, "woke", textOf(t, res))
	rep = failureReports(t, h)
	require.Equal(t, "ready", rep["a"].State)
	require.Equal(t, "new", rep["b"].State, "the call started only the server it needed")

	tools := listTools(t, h)
	require.Contains(t, tools, "b__echo", "a list starts every lazy server")
	require.Equal(t, "ready", failureReports(t, h)["b"].State)

	require.Nil(t, errOrNil(h.Close(5*time.Second)))
	require.Equal(t, before, fixtureProcesses(), "no orphan process")
}

// TestHostLazyServerBeforeConnect: before Connect a lazy server is not
// started by a call, which reports the state.
func TestHostLazyServerBeforeConnect(t *testing.T) {
	h, err := host.Parse([]byte(fmt.Sprintf(`{"start":"lazy","mcpServers":{"a":%s}}`, stdioServer(""))), "test")
	require.Nil(t, errOrNil(err))
	defer h.Free()
	_, cerr := h.CallToolSync("a__echo", []byte(`{}`), core.CallOptions{})
	require.NotNil(t, cerr)
	require.Equal(t, core.StatusInvalidState, cerr.Status)
}

// TestHostReportsWhyAnUnsupervisedServerFailed: a server without restarts
// that exits during its handshake (the client closes it because the
// handshake could not be sent) is still reported with its exit status and
// stderr: its report is final only once they are in.
func TestHostReportsWhyAnUnsupervisedServerFailed(t *testing.T) {
	for i := 0; i < 5; i++ {
		h, _ := newHost(t, `{"mcpServers":{"s":{"command":"/bin/sh","args":["-c","echo 'Error: GITHUB_TOKEN is not set' >&2; exit 1"],"restart":false}}}`)
		require.NotNil(t, h.WaitReady(10*time.Second), "its only server failed")
		require.Eventually(t, func() bool {
			r := reportsNow(h)["s"]
			return r.State == "failed" && r.Final != nil && *r.Final
		}, 10*time.Second, 20*time.Millisecond, "%+v", failureReports(t, h)["s"])
		r := failureReports(t, h)["s"]
		require.NotNil(t, r.ExitCode, "a final report has the exit status: %+v", r)
		require.Equal(t, 1, *r.ExitCode)
		require.Equal(t, "Error: GITHUB_TOKEN is not set", r.StderrTail[0])
	}
}

// TestHostWaitReadyFailsWhenEveryServerFailed: a host whose every enabled
// server failed can serve nothing, and wait_ready says so with the first
// one's failure; one server that works, or a lazy one not started yet,
// makes it OK (lmcp_host_servers tells which failed).
func TestHostWaitReadyFailsWhenEveryServerFailed(t *testing.T) {
	const missing = `{"command":"/nonexistent/mcp-server-a"}`
	dying := `{"command":"/bin/sh","args":["-c","echo no >&2; exit 1"],"restart":false}`
	retrying := `{"command":"/bin/sh","args":["-c","exit 1"],"restart":{"max_restarts":1000,"backoff_ms":5000}}`
	tests := []struct {
		name    string
		servers string
		status  core.Status // 0: OK
		names   []string    // the servers the message names
	}{
		{name: "the only server is missing", servers: `"a":` + missing, status: core.StatusTransport, names: []string{"a: executable not found"}},
		{name: "every server failed", servers: `"a":` + missing + `,"b":` + dying + `,"off":{"command":"x","enabled":false}`,
			status: core.StatusTransport, names: []string{"a: executable not found", "b: "}},
		{name: "a handshake that timed out is not the wait's timeout", servers: `"a":{"command":"/bin/sh","args":["-c","exec sleep 60"],"restart":false,"timeouts":{"ready_ms":50,"close_grace_ms":50}}`,
			status: core.StatusClosed, names: []string{"a: "}},
		{name: "failed and still retrying", servers: `"a":` + retrying + `,"b":` + dying, status: core.StatusClosed, names: []string{"a: ", "b: "}},
		{name: "one server works", servers: `"a":` + missing + `,"ok":` + stdioServer("")},
		{name: "a lazy server may work", servers: `"a":` + missing + `,"later":` + stdioServer(`"start":"lazy"`)},
		{name: "no enabled server", servers: `"off":{"command":"x","enabled":false}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h, _ := newHost(t, `{"mcpServers":{`+tc.servers+`}}`)
			err := h.WaitReady(10 * time.Second)
			if tc.status == 0 {
				require.Nil(t, errOrNil(err))
				return
			}
			require.NotNil(t, err)
			require.Equal(t, tc.status, err.Status, err.Message)
			require.True(t, strings.HasPrefix(err.Message, "every enabled server failed: "), err.Message)
			for _, n := range tc.names {
				require.Contains(t, err.Message, n)
			}
			require.NotContains(t, err.Message, "off", "a disabled server is not waited for")
		})
	}
}

// TestHostToolRoute: the route of a host tool name known without asking a
// server (what a binding names a call by): a name's server prefix before
// any list, starting nothing; the catalogue's after one; none for a name
// only the lists would tell, and none from a prefix under tool_prefix
// "never", where "a__echo" is a tool's whole name.
func TestHostToolRoute(t *testing.T) {
	route := func(h *host.Host, name string) (string, core.Status) {
		raw, err := h.ToolRoute(name)
		if err != nil {
			return "", err.Status
		}
		return string(raw), core.StatusOK
	}
	for _, prefix := range []string{"always", "on_collision"} {
		t.Run(prefix, func(t *testing.T) {
			h, _ := newHost(t, fmt.Sprintf(`{"start":"lazy","tool_prefix":%q,"mcpServers":{"a":%s,"b":%s}}`, prefix, stdioServer(""), stdioServer("")))
			raw, st := route(h, "a__echo")
			require.Equal(t, core.StatusOK, st)
			require.JSONEq(t, `{"server":"a","original_name":"echo"}`, raw)
			_, st = route(h, "c__echo")
			require.Equal(t, core.StatusNotFound, st, "no server c")
			_, st = route(h, "echo")
			require.Equal(t, core.StatusNotFound, st, "only the lists tell")
			_, st = route(h, "")
			require.Equal(t, core.StatusInvalidArgument, st)
			require.Equal(t, "new", failureReports(t, h)["a"].State, "a route starts nothing")
			listTools(t, h)
			raw, st = route(h, "b__echo")
			require.Equal(t, core.StatusOK, st)
			require.JSONEq(t, `{"server":"b","original_name":"echo"}`, raw)
		})
	}
	t.Run("never", func(t *testing.T) {
		h, _ := newHost(t, fmt.Sprintf(`{"start":"lazy","tool_prefix":"never","mcpServers":{"a":%s}}`, stdioServer("")))
		_, st := route(h, "a__echo")
		require.Equal(t, core.StatusNotFound, st, "under never a prefix is part of the name")
		listTools(t, h)
		raw, st := route(h, "echo")
		require.Equal(t, core.StatusOK, st)
		require.JSONEq(t, `{"server":"a","original_name":"echo"}`, raw)
	})
}
