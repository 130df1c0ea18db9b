package stdio

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/transport"
)

func TestRoundTripMany(t *testing.T) {
	const n = 3000
	tr, sink := startHelper(t, helperConfig(t, "echo"))

	errs := make(chan error, 1)
	go func() {
		for i := 0; i < n; i++ {
			msg := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, i)
			if err := tr.Send(context.Background(), transport.Outbound{Data: []byte(msg)}); err != nil {
				errs <- err
				return
			}
		}
		errs <- nil
	}()
	for i := 0; i < n; i++ {
		require.Equal(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, i), sink.next(t))
	}
	require.NoError(t, <-errs)

	closeNow(t, tr)
	ce := sink.waitClosed(t)
	require.Equal(t, "server exited with status 0", ce.Message)
	require.True(t, ce.Requested)
}

// Lines from concurrent senders arrive whole, including lines far larger
// than PIPE_BUF, where the kernel no longer keeps writes atomic for us.
func TestConcurrentSend(t *testing.T) {
	const senders, each = 16, 60
	tr, sink := startHelper(t, helperConfig(t, "echo"))

	want := make(map[string]bool)
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make(chan error, senders)
	for g := 0; g < senders; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				pad := strings.Repeat(string(rune('a'+g)), (g*997+i*131)%20000)
				msg := fmt.Sprintf(`{"g":%d,"i":%d,"pad":"%s"}`, g, i, pad)
				mu.Lock()
				want[msg] = true
				mu.Unlock()
				if err := tr.Send(context.Background(), transport.Outbound{Data: []byte(msg)}); err != nil {
					errs <- err
					return
				}
			}
		}(g)
	}

	got := make(map[string]bool)
	for i := 0; i < senders*each; i++ {
		got[sink.next(t)] = true
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Equal(t, want, got)
}

func TestBannerLines(t *testing.T) {
	tr, sink := startHelper(t, helperConfig(t, "banner"))

	require.Equal(t, `{"bom":1}`, sink.next(t))
	require.Equal(t, `{"crlf":1}`, sink.next(t))
	require.Equal(t, `  {"hello":1}`, sink.next(t))
	send(t, tr, `{"id":1}`)
	require.Equal(t, `{"id":1}`, sink.next(t))

	var stdout []string
	for _, l := range sink.logLines() {
		if l.Source == "stdout" {
			require.Equal(t, "warning", l.Level)
			stdout = append(stdout, l.Text)
		}
	}
	require.Equal(t, []string{
		"Welcome to the fake server v1.0",
		"not json {",
		strings.Repeat("b", 1024),
	}, stdout)
	closeNow(t, tr)
	require.Empty(t, sink.recv, "banner lines must never reach Receive")
}

func TestStderrFloodDoesNotWedge(t *testing.T) {
	tr, sink := startHelper(t, helperConfig(t, "stderr-flood"))

	// The server prints ready only after writing 5 MB to stderr: it gets
	// there only if stderr is drained.
	require.Equal(t, `{"ready":true}`, sink.next(t))
	send(t, tr, `{"echo":1}`)
	require.Equal(t, `{"echo":1}`, sink.next(t))

	closeNow(t, tr)
	ce := sink.waitClosed(t)
	require.Len(t, ce.StderrTail, DefaultStderrTailLines)
	require.Equal(t, []string{"tail 1", "tail 2", "tail 3", "tail 4", "tail 5"}, ce.StderrTail[15:])
	require.Equal(t, strings.Repeat("x", maxStderrLineBytes-len("long-")), strings.TrimPrefix(ce.StderrTail[14], "long-"))

	logs := sink.logLines()
	var stderrLogs int
	for _, l := range logs {
		if l.Source == "stderr" {
			require.Equal(t, "info", l.Level)
			require.LessOrEqual(t, len(l.Text), maxStderrLineBytes)
			stderrLogs++
		}
	}
	require.Greater(t, stderrLogs, 40000)
	require.Equal(t, "tail 5", logs[len(logs)-1].Text)
	require.Zero(t, sink.afterClosed.Load())
}

func TestStderrModes(t *testing.T) {
	tests := []struct {
		mode       string
		stdoutWarn bool // the stderr line shows up as a non-JSON stdout line
		stderrLog  bool
	}{
		{mode: StderrCapture, stderrLog: true},
		{mode: StderrMerge, stdoutWarn: true},
		{mode: StderrDiscard},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			cfg := helperConfig(t, "stderr-line")
			cfg.Stderr = tt.mode
			tr, sink := startHelper(t, cfg)
			require.Equal(t, `{"ok":1}`, sink.next(t))
			closeNow(t, tr)
			ce := sink.waitClosed(t)

			var sawStdout, sawStderr bool
			for _, l := range sink.logLines() {
				if l.Text == "oops on stderr" {
					sawStdout = sawStdout || l.Source == "stdout"
					sawStderr = sawStderr || l.Source == "stderr"
				}
			}
			require.Equal(t, tt.stdoutWarn, sawStdout)
			require.Equal(t, tt.stderrLog, sawStderr)
			if tt.stderrLog {
				require.Equal(t, []string{"oops on stderr"}, ce.StderrTail)
			} else {
				require.Nil(t, ce.StderrTail)
			}
		})
	}
}

func TestOverlongLineSkipped(t *testing.T) {
	cfg := helperConfig(t, "long-line")
	cfg.MaxMessageBytes = 1024
	cfg.Env[helperSizeEnv] = "5000"
	tr, sink := startHelper(t, cfg)

	require.Equal(t, `{"next":1}`, sink.next(t))
	warn := sink.waitLog(t, func(l transport.LogLine) bool { return l.Source == "transport" })
	require.Equal(t, transport.LogLine{
		Level:  "warning",
		Source: "transport",
		Text:   "skipped a stdout line of 5000 bytes, over the limit of 1024 bytes",
	}, warn)
	send(t, tr, `{"still":"working"}`)
	require.Equal(t, `{"still":"working"}`, sink.next(t))
	for _, l := range sink.logLines() {
		require.NotContains(t, l.Text, "aaaa", "the content of a skipped line is never reported")
	}
}

// A 50 MB line against a 1 MB limit: the reader's buffer never grows past
// the limit plus one read chunk.
func TestHugeLineMemoryBounded(t *testing.T) {
	const limit = 1 << 20
	cfg := helperConfig(t, "long-line")
	cfg.MaxMessageBytes = limit
	cfg.Env[helperSizeEnv] = fmt.Sprint(50 << 20)
	tr, sink := startHelper(t, cfg)

	require.Equal(t, `{"next":1}`, sink.next(t))
	sink.waitLog(t, func(l transport.LogLine) bool {
		return l.Text == fmt.Sprintf("skipped a stdout line of %d bytes, over the limit of %d bytes", 50<<20, limit)
	})
	require.LessOrEqual(t, tr.reader.peak.Load(), int64(limit+readChunk))
}

func TestExitReports(t *testing.T) {
	tests := []struct {
		name    string
		mode    string
		code    string
		message string
		exit    int
		signal  string
	}{
		{name: "status 3", mode: "exit", code: "3", message: "server exited with status 3", exit: 3},
		{name: "status 0", mode: "exit", code: "0", message: "server exited with status 0", exit: 0},
		{name: "killed", mode: "kill-self", message: "server was killed by SIGKILL", exit: -1, signal: "SIGKILL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := helperConfig(t, tt.mode)
			cfg.Env[helperCodeEnv] = tt.code
			tr, sink := startHelper(t, cfg)
			if tt.mode == "exit" {
				require.Equal(t, `{"bye":1}`, sink.next(t), "output before exit is delivered")
			}
			ce := sink.waitClosed(t)
			require.Equal(t, tt.message, ce.Message)
			require.Equal(t, tt.exit, ce.ExitCode)
			require.Equal(t, tt.signal, ce.Signal)
			require.False(t, ce.Requested)

			err := tr.Send(context.Background(), transport.Outbound{Data: []byte(`{}`)})
			require.Equal(t, transport.CodeClosed, codeOf(t, err))
			pid := tr.PID()
			closeNow(t, tr)
			requireGone(t, pid, false)
			require.EqualValues(t, 1, sink.closedCount.Load())
		})
	}
}

// A server that exits is reported by its exit status even when its reap
// comes long after exitSettle (a loaded machine, memcheck): the EOF on its
// stdout is not taken for a server that closed stdout and runs on.
func TestExitReportedWhenTheReapIsLate(t *testing.T) {
	release := make(chan struct{})
	hold := func() { <-release }
	holdReap.Store(&hold)
	t.Cleanup(func() { holdReap.Store(nil) })
	cfg := helperConfig(t, "exit")
	cfg.Env[helperCodeEnv] = "3"
	tr, sink := startHelper(t, cfg)
	require.Equal(t, `{"bye":1}`, sink.next(t))
	// Held past the settle, which has judged the EOF by then (were it
	// later, the reap would win and the test still pass).
	time.Sleep(5 * exitSettle)
	close(release)
	ce := sink.waitClosed(t)
	require.Equal(t, "server exited with status 3", ce.Message)
	require.Equal(t, 3, ce.ExitCode)
	closeNow(t, tr)
	require.EqualValues(t, 1, sink.closedCount.Load())
}

// ending tells a child on its way out from one that runs on with its
// stdout closed: running, a zombie (left for its waiter), reaped.
func TestEnding(t *testing.T) {
	cmd := exec.Command("sh", "-c", "exec >&-; sleep 30")
	require.NoError(t, cmd.Start())
	exited, exiting := ending(cmd.Process.Pid)
	require.False(t, exited || exiting, "a running child")
	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()

	cmd = exec.Command("true")
	require.NoError(t, cmd.Start())
	pid := cmd.Process.Pid
	for procState(pid) != 'Z' {
		time.Sleep(time.Millisecond)
	}
	exited, exiting = ending(pid)
	require.True(t, exited && exiting, "a zombie")
	require.NoError(t, cmd.Wait(), "ending reaped the child itself")
	exited, exiting = ending(pid)
	require.True(t, exited && exiting, "a reaped child")
}

// A server that closes stdout but keeps running is a lost connection: the
// sink hears about it at once and the process is terminated behind it.
func TestStdoutClosedWhileRunning(t *testing.T) {
	tr, sink := startHelper(t, helperConfig(t, "close-stdout"))
	var hello struct{ PID int }
	require.NoError(t, json.Unmarshal([]byte(sink.next(t)), &hello))
	if viaHelper == "" {
		require.Equal(t, tr.PID(), hello.PID)
	} else {
		hello.PID = tr.PID() // the helper's, which goes with the server
	}

	ce := sink.waitClosed(t)
	require.Equal(t, "server closed its stdout", ce.Message)
	require.Equal(t, -1, ce.ExitCode)
	require.False(t, ce.Requested)

	// Torn down in the background without anyone calling Close.
	requireGone(t, hello.PID, false)
	closeNow(t, tr)
	require.EqualValues(t, 1, sink.closedCount.Load())
}

func TestStartErrors(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain.txt")
	require.NoError(t, os.WriteFile(plain, []byte("x"), 0o644))

	tests := []struct {
		name    string
		cfg     Config
		code    transport.Code
		cause   string
		message string
	}{
		{
			name:    "not found in PATH",
			cfg:     Config{Command: "lemon-no-such-server", Env: map[string]string{"TOKEN": "hunter2"}},
			code:    transport.CodeTransport,
			cause:   transport.CauseExecutableNotFound,
			message: "executable not found: lemon-no-such-server",
		},
		{
			name:    "not found by path",
			cfg:     Config{Command: "./lemon-no-such-server", Cwd: dir},
			code:    transport.CodeTransport,
			cause:   transport.CauseExecutableNotFound,
			message: "executable not found: ./lemon-no-such-server",
		},
		{
			name:    "not executable",
			cfg:     Config{Command: plain},
			code:    transport.CodeInvalidArgument,
			cause:   transport.CauseNotExecutable,
			message: "not an executable file: " + plain,
		},
		{
			name:    "missing cwd",
			cfg:     Config{Command: testExe(t), Cwd: filepath.Join(dir, "gone")},
			code:    transport.CodeInvalidArgument,
			cause:   transport.CauseWorkingDirectory,
			message: "working directory not found: " + filepath.Join(dir, "gone"),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, err := New(tt.cfg)
			require.NoError(t, err)
			sink := newTestSink()
			err = tr.Start(context.Background(), sink)
			require.Equal(t, tt.code, codeOf(t, err))
			require.Equal(t, tt.cause, err.(*transport.Error).Cause, "a machine-readable cause")
			require.Equal(t, tt.message, err.Error())
			require.NotContains(t, err.Error(), "hunter2")
			require.Equal(t, 0, tr.PID())
			require.NoError(t, tr.Close(context.Background()))
			require.Zero(t, sink.closedCount.Load(), "Closed is not called after a failed Start")
		})
	}
}

func TestStartStates(t *testing.T) {
	t.Run("closed before start", func(t *testing.T) {
		tr, err := New(helperConfig(t, "echo"))
		require.NoError(t, err)
		require.NoError(t, tr.Close(context.Background()))
		err = tr.Start(context.Background(), newTestSink())
		require.Equal(t, transport.CodeClosed, codeOf(t, err))
	})
	t.Run("started twice", func(t *testing.T) {
		tr, sink := startHelper(t, helperConfig(t, "echo"))
		err := tr.Start(context.Background(), sink)
		require.Equal(t, transport.CodeInvalidArgument, codeOf(t, err))
	})
	t.Run("cancelled context", func(t *testing.T) {
		tr, err := New(helperConfig(t, "echo"))
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		err = tr.Start(ctx, newTestSink())
		require.Equal(t, transport.CodeTimeout, codeOf(t, err))
	})
	t.Run("nil sink", func(t *testing.T) {
		tr, err := New(helperConfig(t, "echo"))
		require.NoError(t, err)
		require.Equal(t, transport.CodeInvalidArgument, codeOf(t, tr.Start(context.Background(), nil)))
	})
}

func envOf(t *testing.T, sink *testSink) map[string]string {
	t.Helper()
	var got struct{ Env []string }
	require.NoError(t, json.Unmarshal([]byte(sink.next(t)), &got))
	env := make(map[string]string)
	for _, kv := range got.Env {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	return env
}

func TestEnvInherit(t *testing.T) {
	t.Setenv("LEMON_STDIO_PARENT_SECRET", "from-parent")
	t.Setenv("LANG", "en_US.UTF-8")

	tests := []struct {
		mode       string
		seesParent bool
	}{
		{mode: EnvInheritMinimal, seesParent: false},
		{mode: EnvInheritAll, seesParent: true},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			cfg := helperConfig(t, "env")
			cfg.EnvInherit = tt.mode
			cfg.Env["LEMON_STDIO_EXTRA"] = "extra"
			cfg.Env["LANG"] = "C.UTF-8"
			_, sink := startHelper(t, cfg)
			env := envOf(t, sink)

			require.Equal(t, "extra", env["LEMON_STDIO_EXTRA"])
			require.Equal(t, "C.UTF-8", env["LANG"], "Env overrides the inherited value")
			_, seen := env["LEMON_STDIO_PARENT_SECRET"]
			require.Equal(t, tt.seesParent, seen)
			if tt.mode == EnvInheritMinimal {
				for k := range env {
					if k == "LEMON_STDIO_EXTRA" || k == helperEnv || k == "GORACE" {
						continue
					}
					if viaHelper == "confined" && slices.Contains([]string{"NPM_CONFIG_CACHE", "XDG_CACHE_HOME", "UV_CACHE_DIR"}, k) {
						continue // the sandbox's private caches
					}
					require.Contains(t, minimalEnv, k)
				}
			}
		})
	}
}

func TestCwd(t *testing.T) {
	dir := t.TempDir()
	real, err := filepath.EvalSymlinks(dir)
	require.NoError(t, err)
	require.NoError(t, os.Symlink(testExe(t), filepath.Join(dir, "srv")))

	tests := []struct {
		name    string
		command string
	}{
		{name: "absolute command", command: testExe(t)},
		{name: "command relative to cwd", command: "./srv"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := helperConfig(t, "cwd")
			cfg.Command = tt.command
			cfg.Cwd = dir
			_, sink := startHelper(t, cfg)
			var got struct{ Cwd string }
			require.NoError(t, json.Unmarshal([]byte(sink.next(t)), &got))
			require.Equal(t, real, got.Cwd)
		})
	}
}

// The PATH searched is the child's: a directory only the configured PATH
// names is found, and the same command without it is not.
func TestPathFromChildEnv(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.Symlink(testExe(t), filepath.Join(dir, "lemon-fake-server")))

	cfg := helperConfig(t, "echo")
	cfg.Command = "lemon-fake-server"
	cfg.Env["PATH"] = dir
	tr, sink := startHelper(t, cfg)
	send(t, tr, `{"via":"path"}`)
	require.Equal(t, `{"via":"path"}`, sink.next(t))

	delete(cfg.Env, "PATH")
	tr2, err := New(cfg)
	require.NoError(t, err)
	err = tr2.Start(context.Background(), newTestSink())
	require.Equal(t, "executable not found: lemon-fake-server", err.Error())
}

func TestSendErrors(t *testing.T) {
	tr, sink := startHelper(t, helperConfig(t, "echo"))
	notStarted, err := New(helperConfig(t, "echo"))
	require.NoError(t, err)

	tests := []struct {
		name string
		tr   *Transport
		data string
		code transport.Code
	}{
		{name: "raw newline", tr: tr, data: "{\n}", code: transport.CodeInvalidArgument},
		{name: "empty", tr: tr, data: "", code: transport.CodeInvalidArgument},
		{name: "not started", tr: notStarted, data: "{}", code: transport.CodeClosed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.tr.Send(context.Background(), transport.Outbound{Data: []byte(tt.data)})
			require.Equal(t, tt.code, codeOf(t, err))
		})
	}

	t.Run("after close", func(t *testing.T) {
		closeNow(t, tr)
		sink.waitClosed(t)
		err := tr.Send(context.Background(), transport.Outbound{Data: []byte("{}")})
		require.Equal(t, transport.CodeClosed, codeOf(t, err))
	})
}

// A server that never reads stdin fills the pipe. Send still returns at
// once: what the pipe cannot take waits in a bounded queue, each line
// bounded by its sender's deadline, and the stream stays usable for
// framing.
func TestSendFullPipe(t *testing.T) {
	tr, sink := startHelper(t, helperConfig(t, "no-read"))
	require.Equal(t, `{"ready":1}`, sink.next(t))
	tr.sender.mu.Lock()
	tr.sender.maxQueued = 1 << 20
	tr.sender.mu.Unlock()
	big := []byte(`{"pad":"` + strings.Repeat("p", 256<<10) + `"}`)

	t.Run("never blocks, and a full queue refuses at once", func(t *testing.T) {
		// No deadline, and the server never reads: a Send that waited for
		// the pipe would never return.
		var err error
		sent := 0
		done := make(chan struct{})
		go func() {
			defer close(done)
			for ; sent < 64 && err == nil; sent++ {
				err = tr.Send(context.Background(), transport.Outbound{Data: big})
			}
		}()
		select {
		case <-done:
		case <-time.After(waitLong): // not a time limit: see above
			require.FailNow(t, "Send waited for the server")
		}
		require.Error(t, err, "a 1 MiB queue took %d lines of 256 KiB", sent)
		require.Equal(t, transport.CodeTimeout, codeOf(t, err))
		require.Contains(t, err.Error(), "the server is not reading its stdin")
		require.LessOrEqual(t, tr.sender.queued(), 1<<20+len(big)+1)
	})
	t.Run("an ended context is refused before anything is written", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		err := tr.Send(ctx, transport.Outbound{Data: []byte(`{"small":1}`)})
		require.Equal(t, transport.CodeTimeout, codeOf(t, err))
	})
}

// deadlineOnly is a context with a deadline that never ends: what a
// sender whose deadline passes after its Send returned looks like.
type deadlineOnly struct {
	context.Context
	at time.Time
}

func (c deadlineOnly) Deadline() (time.Time, bool) { return c.at, true }

// Lines whose sender's deadline passes while they wait are dropped, and a
// line cut part-way makes the next one start on a fresh line.
func TestSendExpiredLinesDropped(t *testing.T) {
	tr, sink := startHelper(t, helperConfig(t, "no-read"))
	require.Equal(t, `{"ready":1}`, sink.next(t))
	big := []byte(`{"pad":"` + strings.Repeat("p", 256<<10) + `"}`)
	// The lines' deadline, which the sender reads: the four sends are
	// queued however long a loaded machine takes over them (Err stays
	// nil), and the first write starts well before it, so it is cut.
	ctx := deadlineOnly{Context: context.Background(), at: time.Now().Add(time.Second)}
	for i := 0; i < 4; i++ {
		require.NoError(t, tr.Send(ctx, transport.Outbound{Data: big}))
	}
	require.Positive(t, tr.sender.queued())
	deadline := time.Now().Add(waitLong)
	for tr.sender.queued() > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	require.Zero(t, tr.sender.queued(), "expired lines still queued")
	tr.sender.mu.Lock()
	defer tr.sender.mu.Unlock()
	require.True(t, tr.sender.resync, "the first line was cut part-way")
	require.False(t, tr.sender.flushing)
}

// A server that reads late gets every queued line whole and in order.
func TestSendQueuedLinesArriveInOrder(t *testing.T) {
	tr, sink := startHelper(t, helperConfig(t, "late-read"))
	require.Equal(t, `{"ready":1}`, sink.next(t))
	readNow := func() { require.NoError(t, syscall.Kill(tr.PID(), syscall.SIGUSR1)) }
	var want []string
	for i := 0; i < 8; i++ {
		want = append(want, fmt.Sprintf(`{"n":%d,"pad":"%s"}`, i, strings.Repeat(string(rune('a'+i)), 100<<10)))
	}
	// The server reads only once every Send has returned: one that waited
	// for it would never return.
	errs := make(chan error, len(want))
	go func() {
		for _, line := range want {
			errs <- tr.Send(context.Background(), transport.Outbound{Data: []byte(line)})
		}
	}()
	for range want {
		select {
		case err := <-errs:
			require.NoError(t, err)
		case <-time.After(waitLong): // not a time limit: see above
			readNow()
			require.FailNow(t, "Send waited for the server")
		}
	}
	require.Positive(t, tr.sender.queued(), "800 KiB fit a pipe: the test proves nothing")
	readNow()
	for i, w := range want {
		got := sink.next(t)
		require.Equal(t, len(w), len(got), "line %d", i)
		require.Equal(t, w, got, "line %d", i)
	}
}

func TestSendCloseWithQueue(t *testing.T) {
	tr, sink := startHelper(t, helperConfig(t, "no-read"))
	require.Equal(t, `{"ready":1}`, sink.next(t))
	big := []byte(`{"pad":"` + strings.Repeat("p", 256<<10) + `"}`)
	require.NoError(t, tr.Send(context.Background(), transport.Outbound{Data: big}))
	require.NoError(t, tr.Send(context.Background(), transport.Outbound{Data: big}))
	closeNow(t, tr)
	sink.waitClosed(t)
	err := tr.Send(context.Background(), transport.Outbound{Data: []byte("{}")})
	require.Equal(t, transport.CodeClosed, codeOf(t, err))
	deadline := time.Now().Add(waitLong)
	for tr.sender.queued() > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	require.Zero(t, tr.sender.queued(), "the queue outlived the pipe")
}
