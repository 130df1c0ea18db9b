package stdio

import (
	"context"
	"encoding/json"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/transport"
)

// Close escalates only as far as the server makes it: stdin EOF, then
// SIGTERM after one grace period, then SIGKILL after another. The signal
// in the report tells which step ended the server, and the lower bounds
// that no step came early. That a step ends as soon as the server exits
// is shown where it cannot depend on the clock: with a grace of a day, a
// Close that waited out the grace after EOF never returns.
func TestCloseEscalation(t *testing.T) {
	const grace = 200 * time.Millisecond
	tests := []struct {
		name     string
		mode     string
		ready    string
		message  string
		exitCode int
		signal   string
		grace    time.Duration
		min      time.Duration
	}{
		{
			name: "exits on stdin EOF", mode: "echo",
			message: "server exited with status 0", exitCode: 0,
			grace: 24 * time.Hour,
		},
		{
			name: "ignores EOF, dies on SIGTERM", mode: "no-read", ready: `{"ready":1}`,
			message: "server was killed by SIGTERM", exitCode: -1, signal: "SIGTERM",
			grace: grace, min: grace,
		},
		{
			name: "ignores EOF and SIGTERM", mode: "stubborn", ready: `{"ready":1}`,
			message: "server was killed by SIGKILL", exitCode: -1, signal: "SIGKILL",
			grace: grace, min: 2 * grace,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := helperConfig(t, tt.mode)
			cfg.CloseGrace = tt.grace
			tr, sink := startHelper(t, cfg)
			if tt.ready != "" {
				require.Equal(t, tt.ready, sink.next(t))
			} else {
				send(t, tr, `{"a":1}`)
				require.Equal(t, `{"a":1}`, sink.next(t))
			}
			pid := tr.PID()

			start := time.Now()
			closed := make(chan error, 1)
			go func() { closed <- tr.Close(context.Background()) }()
			select {
			case err := <-closed:
				require.NoError(t, err)
			case <-time.After(waitLong): // not a time limit: see above
				syscall.Kill(pid, syscall.SIGKILL)
				require.FailNow(t, "Close waited out the grace after the server exited")
			}
			require.GreaterOrEqual(t, time.Since(start), tt.min)

			ce := sink.waitClosed(t)
			require.Equal(t, &transport.ClosedError{
				Message:  tt.message,
				ExitCode: tt.exitCode,
				Signal:   tt.signal,
				// Requested is true because Close asked, however it ended.
				Requested: true,
			}, ce)
			requireGone(t, pid, false) // reaped: not even a zombie
		})
	}
}

// When Close's context ends first the group is killed at once; the child is
// still reaped before Close returns.
func TestCloseContextExpires(t *testing.T) {
	cfg := helperConfig(t, "stubborn")
	// Without ctx the server would outlive two graces of a day: a Close
	// that did not heed ctx never returns, whatever the machine's speed.
	cfg.CloseGrace = 24 * time.Hour
	tr, sink := startHelper(t, cfg)
	require.Equal(t, `{"ready":1}`, sink.next(t))
	pid := tr.PID()

	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	closed := make(chan error, 1)
	go func() { closed <- tr.Close(ctx) }()
	var err error
	select {
	case err = <-closed:
	case <-time.After(waitLong): // not a time limit: see CloseGrace
		syscall.Kill(pid, syscall.SIGKILL)
		require.FailNow(t, "Close waited for the server, not for its context")
	}
	require.Equal(t, transport.CodeTimeout, codeOf(t, err))

	select {
	case ce := <-sink.closed:
		require.Equal(t, "SIGKILL", ce.Signal)
	default:
		require.FailNow(t, "Closed must be delivered before Close returns")
	}
	require.Equal(t, 0, int(procState(pid)), "reaped before Close returned")
	require.NoError(t, tr.Close(context.Background()), "a second Close is a no-op")
}

// Close kills what the server started, even after the server itself has
// exited cleanly and although the grandchild keeps stdout open.
func TestCloseKillsGrandchild(t *testing.T) {
	tests := []struct {
		name string
		kid  string
	}{
		{name: "grandchild obeys SIGTERM", kid: "sleep"},
		{name: "grandchild ignores SIGTERM", kid: "sleep-stubborn"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := helperConfig(t, "grandchild")
			cfg.Env[helperKidEnv] = tt.kid
			cfg.CloseGrace = 300 * time.Millisecond
			tr, sink := startHelper(t, cfg)

			// The server and its grandchild share stdout: the grandchild's
			// ready line may come before or after the server's pid line.
			var gc struct{ Grandchild int }
			ready := tt.kid != "sleep-stubborn"
			for gc.Grandchild == 0 || !ready {
				line := sink.next(t)
				if line == `{"grandchild_ready":1}` && !ready {
					ready = true
					continue
				}
				require.Zero(t, gc.Grandchild, "a second line from the server: %s", line)
				require.NoError(t, json.Unmarshal([]byte(line), &gc))
				require.NotZero(t, gc.Grandchild, "not the grandchild's pid: %s", line)
			}
			send(t, tr, `{"x":1}`)
			require.Equal(t, `{"x":1}`, sink.next(t))

			pid := tr.PID()
			if viaHelper == "confined" {
				// The server's pids are those of its PID namespace.
				gc.Grandchild = hostPID(t, pid, gc.Grandchild)
			}
			closeNow(t, tr)
			ce := sink.waitClosed(t)
			require.Equal(t, "server exited with status 0", ce.Message)
			require.True(t, ce.Requested)
			requireGone(t, pid, false)
			// Not our child, so it may linger as a zombie until init
			// reaps it; it must not be running.
			requireGone(t, gc.Grandchild, true)
		})
	}
}

func TestClosedExactlyOnce(t *testing.T) {
	tests := []struct {
		name string
		mode string
	}{
		{name: "server exits while closing", mode: "exit"},
		{name: "server keeps running", mode: "echo"},
		{name: "server ignores everything", mode: "stubborn"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := helperConfig(t, tt.mode)
			cfg.CloseGrace = 100 * time.Millisecond
			cfg.Env[helperCodeEnv] = "1"
			tr, sink := startHelper(t, cfg)
			if tt.mode == "echo" {
				send(t, tr, `{"ping":1}`)
			}
			sink.next(t)

			var wg sync.WaitGroup
			errs := make(chan error, 8)
			for i := 0; i < 8; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					errs <- tr.Close(context.Background())
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				require.NoError(t, err)
			}
			require.NoError(t, tr.Close(context.Background()))
			require.EqualValues(t, 1, sink.closedCount.Load())
			require.Zero(t, sink.afterClosed.Load())
		})
	}
}

// Every goroutine a transport starts has returned once Closed has been
// delivered and Close has returned.
func TestNoGoroutineLeak(t *testing.T) {
	settle := func() int {
		runtime.GC()
		return runtime.NumGoroutine()
	}
	before := settle()

	modes := []string{"echo", "stderr-flood", "grandchild", "close-stdout", "stubborn"}
	for _, mode := range modes {
		cfg := helperConfig(t, mode)
		cfg.CloseGrace = 100 * time.Millisecond
		cfg.Env[helperKidEnv] = "sleep"
		tr, err := New(cfg)
		require.NoError(t, err)
		sink := newTestSink()
		require.NoError(t, tr.Start(context.Background(), sink))
		if mode == "echo" {
			send(t, tr, `{"ping":1}`)
		}
		sink.next(t)
		ctx, cancel := context.WithTimeout(context.Background(), waitLong)
		require.NoError(t, tr.Close(ctx))
		cancel()
		sink.waitClosed(t)
	}

	deadline := time.Now().Add(3 * time.Second)
	for settle() > before && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	require.LessOrEqual(t, runtime.NumGoroutine(), before)
}

// reentrantSink calls Close from inside Closed, as a core tearing down its
// session on loss might.
type reentrantSink struct {
	*testSink
	tr       *Transport
	closeErr chan error
}

func (s *reentrantSink) Closed(err *transport.ClosedError) {
	s.testSink.Closed(err)
	s.closeErr <- s.tr.Close(context.Background())
}

func TestCloseFromClosedCallback(t *testing.T) {
	cfg := helperConfig(t, "exit")
	cfg.Env[helperCodeEnv] = "4"
	tr, err := New(cfg)
	require.NoError(t, err)
	sink := &reentrantSink{testSink: newTestSink(), tr: tr, closeErr: make(chan error, 1)}
	require.NoError(t, tr.Start(context.Background(), sink))

	select {
	case err := <-sink.closeErr:
		require.NoError(t, err)
	case <-time.After(waitLong):
		require.FailNow(t, "Close called from Closed deadlocked")
	}
	require.Equal(t, "server exited with status 4", sink.waitClosed(t).Message)
	closeNow(t, tr)
	require.EqualValues(t, 1, sink.closedCount.Load())
}

// hostPID is the pid, in ours, of the process nsPID of the PID namespace
// whose init is the process init (the sandbox helper).
func hostPID(t *testing.T, init, nsPID int) int {
	t.Helper()
	ns, err := os.Readlink("/proc/" + strconv.Itoa(init) + "/ns/pid_for_children")
	require.NoError(t, err)
	entries, err := os.ReadDir("/proc")
	require.NoError(t, err)
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if l, err := os.Readlink("/proc/" + e.Name() + "/ns/pid"); err != nil || l != ns {
			continue
		}
		status, err := os.ReadFile("/proc/" + e.Name() + "/status")
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(status), "\n") {
			if f := strings.Fields(line); len(f) == 3 && f[0] == "NSpid:" && f[2] == strconv.Itoa(nsPID) {
				return pid
			}
		}
	}
	t.Fatalf("no process %d in the PID namespace of %d", nsPID, init)
	return 0
}
