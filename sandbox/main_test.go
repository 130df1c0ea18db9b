package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/lemonmcp/lemonmcp/transport"
	"github.com/lemonmcp/lemonmcp/transport/stdio"
)

// TestMain builds the helper once and points the library at it, as make
// does by installing it next to liblemonmcp.so.
func TestMain(m *testing.M) {
	if os.Getenv(HelperEnv) != "" { // TestAsUnprivilegedUser's run
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "sandbox-helper-")
	if err != nil {
		panic(err)
	}
	helper := filepath.Join(dir, HelperName)
	if out, err := exec.Command("go", "build", "-o", helper, "../cmd/lemonmcp-sandbox").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building the helper: %v\n%s", err, out)
		os.Exit(1)
	}
	os.Setenv(HelperEnv, helper)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// recorder is a transport.Sink that keeps what arrives.
type recorder struct {
	mu     sync.Mutex
	lines  []string
	logs   []string
	closed chan *transport.ClosedError
}

func newRecorder() *recorder { return &recorder{closed: make(chan *transport.ClosedError, 1)} }

func (r *recorder) Receive(data []byte) {
	r.mu.Lock()
	r.lines = append(r.lines, string(data))
	r.mu.Unlock()
}

func (r *recorder) Log(l transport.LogLine) {
	r.mu.Lock()
	r.logs = append(r.logs, l.Text)
	r.mu.Unlock()
}
func (r *recorder) RequestFailed(int64, *transport.Error) {}
func (r *recorder) Closed(err *transport.ClosedError)     { r.closed <- err }

// daemonScript starts a daemon the way a server's helper would: a double
// fork (the subshell exits at once) and setsid, so the daemon leaves the
// server's process group and session and is orphaned. It writes its pid
// to $PIDFILE, then the server waits for stdin to close.
const daemonScript = `( setsid sh -c 'echo $$ > "$PIDFILE.tmp" && mv "$PIDFILE.tmp" "$PIDFILE"; exec sleep 300' & ) </dev/null >/dev/null 2>&1
`

// Servers after the daemon is started: one that exits on EOF, and one
// that ignores EOF and SIGTERM, so only a SIGKILL ends it.
const (
	politeServer   = daemonScript + "exec cat"
	stubbornServer = daemonScript + "trap '' TERM; exec sleep 300 </dev/null"
)

// startDaemonizer starts the daemonizing server through launcher and
// returns the transport and the daemon's pid.
func startDaemonizer(t *testing.T, script string, launcher stdio.Launcher) (*stdio.Transport, *recorder, int) {
	t.Helper()
	pidfile := filepath.Join(t.TempDir(), "daemon.pid")
	tr, err := stdio.New(stdio.Config{
		Command:    "/bin/sh",
		Args:       []string{"-c", script},
		Env:        map[string]string{"PIDFILE": pidfile},
		CloseGrace: 200 * time.Millisecond,
		Launcher:   launcher,
	})
	require.NoError(t, err)
	rec := newRecorder()
	require.NoError(t, tr.Start(context.Background(), rec))
	var pid int
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(pidfile)
		if err != nil {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil
	}, 30*time.Second, 5*time.Millisecond, "the daemon never wrote its pid")
	return tr, rec, pid
}

// gone waits (bounded) for pid to exit, through its pidfd, and reports
// whether it did.
func gone(pid int, within time.Duration) bool {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return err == unix.ESRCH
	}
	defer unix.Close(fd)
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds, int(within.Milliseconds()))
		if err == unix.EINTR {
			continue
		}
		return n == 1
	}
}

func TestNoDaemonOutlivesItsServer(t *testing.T) {
	launcher := Reaper(200 * time.Millisecond)
	require.NotNil(t, launcher, "the helper was built by TestMain")
	closeNow := func(tr *stdio.Transport) error {
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // the host being freed: no grace at all
		_ = tr.Close(ctx)
		return nil
	}
	cases := []struct {
		name   string
		server string
		close  func(*stdio.Transport) error
	}{
		{"close", politeServer, func(tr *stdio.Transport) error { return tr.Close(context.Background()) }},
		{"close out of time", politeServer, closeNow},
		// SIGKILL would end the helper before it could act: the lifeline
		// tells it first.
		{"stubborn server, close out of time", stubbornServer, closeNow},
		{"stubborn server, close", stubbornServer, func(tr *stdio.Transport) error { return tr.Close(context.Background()) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr, rec, daemon := startDaemonizer(t, tc.server, launcher)
			require.NoError(t, tc.close(tr))
			<-rec.closed
			require.True(t, gone(daemon, 30*time.Second), "the daemon %d outlived its server", daemon)
		})
	}
}

// TestDaemonEscapesWithoutTheReaper is the control: the process-group
// kill alone misses a daemon, which is what the reaper is for.
func TestDaemonEscapesWithoutTheReaper(t *testing.T) {
	tr, rec, daemon := startDaemonizer(t, politeServer, nil)
	require.NoError(t, tr.Close(context.Background()))
	<-rec.closed
	defer unix.Kill(daemon, unix.SIGKILL)
	require.False(t, gone(daemon, 0), "the control should leave the daemon running")
}
