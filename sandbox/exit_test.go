package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/transport"
	"github.com/lemonmcp/lemonmcp/transport/stdio"
)

// exitReport is the part of a ClosedError that says how the server ended.
type exitReport struct {
	Message  string
	ExitCode int
	Signal   string
}

// serverEnd runs script under /bin/sh through launcher, lets kill (if any)
// act on the running transport, and returns how the transport reports the
// end.
func serverEnd(t *testing.T, script string, launcher stdio.Launcher, kill func(*stdio.Transport)) exitReport {
	t.Helper()
	tr, err := stdio.New(stdio.Config{
		Command:    "/bin/sh",
		Args:       []string{"-c", script},
		CloseGrace: 200 * time.Millisecond,
		Launcher:   launcher,
	})
	require.NoError(t, err)
	rec := newRecorder()
	require.NoError(t, tr.Start(context.Background(), rec))
	defer tr.Close(context.Background())
	if kill != nil {
		kill(tr)
	}
	var ce *transport.ClosedError
	select {
	case ce = <-rec.closed:
	case <-time.After(time.Minute):
		t.Fatal("the server's end was never reported")
	}
	return exitReport{ce.Message, ce.ExitCode, ce.Signal}
}

// TestServerEndReportedThroughTheHelper: however a server ends, the
// transport reports it the same confined, under the reaper alone, or run
// directly. The helper of a confined server is the init of its PID
// namespace and cannot die by the server's signal: without the status
// record it exits 128+N, and a SIGKILL was reported as "exited with
// status 137".
func TestServerEndReportedThroughTheHelper(t *testing.T) {
	launchers := []struct {
		name     string
		launcher stdio.Launcher
	}{
		{"direct", nil},
		{"reaper", Reaper(200 * time.Millisecond)},
		{"confined", Confine(Policy{}, 200*time.Millisecond)},
	}
	require.NotNil(t, launchers[1].launcher, "the helper was built by TestMain")
	cases := []struct {
		name   string
		script string
		want   exitReport
	}{
		{"exit 0", "exit 0", exitReport{"server exited with status 0", 0, ""}},
		{"exit 3", "exit 3", exitReport{"server exited with status 3", 3, ""}},
		{"SIGKILL", "kill -KILL $$", exitReport{"server was killed by SIGKILL", -1, "SIGKILL"}},
		{"SIGTERM", "kill -TERM $$", exitReport{"server was killed by SIGTERM", -1, "SIGTERM"}},
	}
	for _, tc := range cases {
		for _, l := range launchers {
			t.Run(tc.name+"/"+l.name, func(t *testing.T) {
				require.Equal(t, tc.want, serverEnd(t, tc.script, l.launcher, nil))
			})
		}
	}
}

// TestHelperKilledReportsItsOwnEnd: a helper killed itself writes no
// status record, and its own wait status is the report.
func TestHelperKilledReportsItsOwnEnd(t *testing.T) {
	for _, l := range []struct {
		name     string
		launcher stdio.Launcher
	}{
		{"reaper", Reaper(200 * time.Millisecond)},
		{"confined", Confine(Policy{}, 200*time.Millisecond)},
	} {
		t.Run(l.name, func(t *testing.T) {
			got := serverEnd(t, "exec cat", l.launcher, func(tr *stdio.Transport) {
				require.NoError(t, syscall.Kill(tr.PID(), syscall.SIGKILL))
			})
			require.Equal(t, exitReport{"server was killed by SIGKILL", -1, "SIGKILL"}, got)
		})
	}
}

// A helper of another release that refuses a flag this library passes
// (an older one without -status) is reported missing by the probe: the
// servers then start as a missing helper says, instead of every start
// failing on the flag.
func TestProbeRefusesAHelperOfAnotherRelease(t *testing.T) {
	helper := os.Getenv(HelperEnv)
	require.NotEmpty(t, helper)
	require.True(t, probeHelper(helper).helper, "the helper built with this library")

	old := filepath.Join(t.TempDir(), "old-helper")
	script := "#!/bin/sh\nfor a; do [ \"$a\" = -status ] && { echo 'flag provided but not defined: -status' >&2; exit 2; }; done\nexec " + helper + " \"$@\"\n"
	require.NoError(t, os.WriteFile(old, []byte(script), 0o755))
	pr := probeHelper(old)
	require.False(t, pr.helper, "a helper refusing -status passed the probe")
}

// TestServerEndWhileTheHelperEndsLeftovers: a server that exits leaving a
// daemon that ignores SIGTERM closes its stdout at once, while the helper
// takes the close grace to end the daemon. That is the server's exit, not
// a server that closed its stdout and runs on: the transport knows the
// server itself is gone (Launch.ServerGone) and reports its status.
func TestServerEndWhileTheHelperEndsLeftovers(t *testing.T) {
	script := `( setsid sh -c 'trap "" TERM; exec sleep 300' & ) </dev/null >/dev/null 2>&1; sleep 0.05; exit 4`
	for name, launcher := range map[string]stdio.Launcher{
		"reaper":   Reaper(500 * time.Millisecond),
		"confined": Confine(Policy{}, 500*time.Millisecond),
	} {
		t.Run(name, func(t *testing.T) {
			require.Equal(t, exitReport{"server exited with status 4", 4, ""}, serverEnd(t, script, launcher, nil))
		})
	}
}
