package hosttests

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/config"
	"github.com/lemonmcp/lemonmcp/core"
)

// supervisedClient makes (not connects) a supervised client of command.
func supervisedClient(t *testing.T, command string, args []string, extra string) (*core.Client, *recorder) {
	return supervisedWith(t, command, args, extra, `{"max_restarts":3,"backoff_ms":10,"window_ms":60000}`)
}

func supervisedWith(t *testing.T, command string, args []string, extra, restart string) (*core.Client, *recorder) {
	t.Helper()
	argv, _ := json.Marshal(args)
	cfg := fmt.Sprintf(`{"transport":{"type":"stdio","command":%q,"args":%s%s},
		"restart":%s,
		"timeouts":{"ready_ms":30000,"close_grace_ms":200}}`, command, argv, extra, restart)
	p, perr := config.Parse([]byte(cfg), "test")
	require.Nil(t, errOrNil(perr))
	c := core.New(p.Options, p.Transport)
	rec := newRecorder()
	c.SetEventHandler(rec.handle, nil)
	t.Cleanup(func() {
		c.Close(5 * time.Second)
		c.Free()
	})
	return c, rec
}

// TestPermanentStartFailuresAreNotRetried: a start that cannot succeed is
// reported by Connect itself, the client fails at once without a restart,
// and a call fails at once with the reason.
func TestPermanentStartFailuresAreNotRetried(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "not-executable")
	require.NoError(t, os.WriteFile(plain, []byte("#!/bin/sh\n"), 0o600))
	tests := []struct {
		name    string
		command string
		extra   string
		reason  string
		status  core.Status
	}{
		{"no such executable", "/nonexistent/lemonmcp-server", "", "executable not found: /nonexistent/lemonmcp-server", core.StatusTransport},
		{"no such executable on PATH", "lemonmcp-no-such-server", "", "executable not found: lemonmcp-no-such-server", core.StatusTransport},
		{"not executable", plain, "", "not an executable file", core.StatusInvalidArgument},
		{"working directory missing", fixtureBin, `,"cwd":"/nonexistent/dir"`, "working directory not found", core.StatusInvalidArgument},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, rec := supervisedClient(t, tc.command, nil, tc.extra)
			err := c.Connect()
			require.NotNil(t, err, "connect reports a start that cannot succeed")
			require.Equal(t, tc.status, err.Status)
			require.Contains(t, err.Message, tc.reason)
			require.Contains(t, err.Message, "not retried")
			rec.waitFor(t, "failed", 5*time.Second)
			require.Equal(t, core.StateFailed, c.State())
			require.False(t, c.Restarting())
			require.Equal(t, 0, c.Restarts())
			_, cerr := echo(c, "x")
			require.NotNil(t, cerr, "a call to a server failed for good fails at once")
			require.Equal(t, core.StatusInvalidState, cerr.Status)
			require.Contains(t, cerr.Message, tc.reason)
		})
	}
}

// TestExecutableGoneBeforeARestart: a server whose executable disappears
// while it runs is not retried once it is lost.
func TestExecutableGoneBeforeARestart(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "server")
	raw, err := os.ReadFile(fixtureBin)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(bin, raw, 0o700))
	c, rec := supervisedClient(t, bin, nil, "")
	require.Nil(t, errOrNil(c.Connect()))
	require.Nil(t, errOrNil(c.WaitReady(10*time.Second)))
	require.NoError(t, os.Remove(bin))
	_, cerr := c.CallSync("tools/call", []byte(`{"name":"crash","arguments":{}}`), core.CallOptions{})
	require.NotNil(t, cerr)
	rec.waitFor(t, "closed", 10*time.Second)
	require.Equal(t, core.StateClosed, c.State())
	require.Equal(t, 1, c.Restarts(), "the one restart found the executable gone and stopped")
	_, cerr = echo(c, "x")
	require.NotNil(t, cerr)
	require.Contains(t, cerr.Message, "executable not found")
	require.Contains(t, cerr.Message, "not retried")
}

// TestServerExitingBeforeItsHandshake: a server that keeps exiting before
// its handshake is retried with backoff, and a call waiting for it ends
// with its own timeout, not the (long) ready timeout.
func TestServerExitingBeforeItsHandshake(t *testing.T) {
	c, rec := supervisedWith(t, "/bin/sh", []string{"-c", "echo 'Error: GITHUB_TOKEN is not set' >&2; exit 1"}, "",
		`{"max_restarts":5,"backoff_ms":2000,"window_ms":60000}`)
	require.Nil(t, errOrNil(c.Connect()))
	rec.waitFor(t, "restarting", 10*time.Second)
	_, cerr := c.CallSync("tools/list", nil, core.CallOptions{Timeout: 300 * time.Millisecond, TimeoutSet: true})
	require.NotNil(t, cerr)
	require.Equal(t, core.StatusTimeout, cerr.Status, cerr.Message)
	require.Contains(t, cerr.Message, "within 300 ms", "the call's own timeout ended it")
	var restarting string
	for _, e := range rec.all() {
		if len(e) > 11 && e[:11] == "restarting " {
			restarting = e
		}
	}
	require.Contains(t, restarting, `"exit_code":1`)
	require.Contains(t, restarting, `"stderr_tail":["Error: GITHUB_TOKEN is not set"]`)
}

// TestMissingInterpreterIsNotRetried: a script whose #! interpreter does
// not exist cannot start either.
func TestMissingInterpreterIsNotRetried(t *testing.T) {
	script := filepath.Join(t.TempDir(), "server.sh")
	require.NoError(t, os.WriteFile(script, []byte("#!/nonexistent/interpreter\n"), 0o700))
	c, _ := supervisedClient(t, script, nil, "")
	err := c.Connect()
	require.NotNil(t, err)
	require.Contains(t, err.Message, "or its interpreter is missing")
	require.Contains(t, err.Message, "not retried")
	require.Equal(t, 0, c.Restarts())
}

// TestServerExitingAfterClosingItsStdin: a server that closes its stdin
// and then exits fails the handshake with a broken pipe before its exit is
// read, so the supervisor closes that generation itself to restart it. The
// restarting event still says how the server ended and what it printed,
// not just "closed its stdin" (the two orders of issue #18's race; this
// one forced: the server answers server/discover with an error only after
// closing its stdin, and exits a moment later).
func TestServerExitingAfterClosingItsStdin(t *testing.T) {
	script := `IFS= read -r line
id=$(printf '%s' "$line" | sed -n 's/.*"id":\([0-9]*\).*/\1/p')
exec 0<&-
echo 'Error: GITHUB_TOKEN is not set' >&2
printf '{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"Method not found"}}\n' "$id"
sleep 0.5
exit 1`
	argv, _ := json.Marshal([]string{"-c", script})
	cfg := fmt.Sprintf(`{"transport":{"type":"stdio","command":"/bin/sh","args":%s},
		"restart":{"max_restarts":1,"backoff_ms":600000,"max_backoff_ms":600000,"window_ms":600000},
		"timeouts":{"ready_ms":30000,"close_grace_ms":10000}}`, argv)
	p, perr := config.Parse([]byte(cfg), "test")
	require.Nil(t, errOrNil(perr))
	c := core.New(p.Options, p.Transport)
	rec := newRecorder()
	c.SetEventHandler(rec.handle, nil)
	t.Cleanup(func() {
		c.Close(5 * time.Second)
		c.Free()
	})
	require.Nil(t, errOrNil(c.Connect()))
	rec.waitFor(t, "restarting", 30*time.Second)
	var restarting string
	for _, e := range rec.all() {
		if len(e) > 11 && e[:11] == "restarting " {
			restarting = e
		}
	}
	require.Contains(t, restarting, `"exit_code":1`)
	require.Contains(t, restarting, `"stderr_tail":["Error: GITHUB_TOKEN is not set"]`)
	require.NotContains(t, restarting, "closed its stdin", "the exit says more than the broken pipe it caused")
}
