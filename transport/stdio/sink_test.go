package stdio

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/transport"
)

// testSink records what a transport delivers. Callbacks only send to
// channels or append under a mutex; every assertion happens on the test
// goroutine.
type testSink struct {
	recv   chan []byte
	closed chan *transport.ClosedError

	logMu sync.Mutex
	logs  []transport.LogLine
	logCh chan struct{} // pinged after each Log

	closedCount atomic.Int32
	afterClosed atomic.Int32 // calls after Closed: must stay 0
	failed      chan failedRequest
}

// failedRequest is one RequestFailed call.
type failedRequest struct {
	id  int64
	err *transport.Error
}

func newTestSink() *testSink {
	return &testSink{
		recv:   make(chan []byte, 1<<16),
		closed: make(chan *transport.ClosedError, 8),
		logCh:  make(chan struct{}, 1),
		failed: make(chan failedRequest, 16),
	}
}

func (s *testSink) Receive(data []byte) {
	if s.closedCount.Load() > 0 {
		s.afterClosed.Add(1)
	}
	s.recv <- append([]byte(nil), data...)
}

func (s *testSink) Log(line transport.LogLine) {
	if s.closedCount.Load() > 0 {
		s.afterClosed.Add(1)
	}
	s.logMu.Lock()
	s.logs = append(s.logs, line)
	s.logMu.Unlock()
	select {
	case s.logCh <- struct{}{}:
	default:
	}
}

// RequestFailed is called by stdio only for a response over the size
// limit whose head names its request.
func (s *testSink) RequestFailed(id int64, err *transport.Error) {
	if s.closedCount.Load() > 0 {
		s.afterClosed.Add(1)
	}
	s.failed <- failedRequest{id, err}
}

func (s *testSink) Closed(err *transport.ClosedError) {
	s.closedCount.Add(1)
	s.closed <- err
}

func (s *testSink) logLines() []transport.LogLine {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	return append([]transport.LogLine(nil), s.logs...)
}

const waitLong = 20 * time.Second

// recv waits for the next message.
func (s *testSink) next(t testing.TB) string {
	t.Helper()
	select {
	case b := <-s.recv:
		return string(b)
	case <-time.After(waitLong):
		require.FailNow(t, "no message arrived")
		return ""
	}
}

func (s *testSink) waitClosed(t testing.TB) *transport.ClosedError {
	t.Helper()
	select {
	case err := <-s.closed:
		return err
	case <-time.After(waitLong):
		require.FailNow(t, "Closed was not delivered")
		return nil
	}
}

// waitLog waits until a logged line satisfies match.
func (s *testSink) waitLog(t testing.TB, match func(transport.LogLine) bool) transport.LogLine {
	t.Helper()
	deadline := time.After(waitLong)
	for {
		for _, l := range s.logLines() {
			if match(l) {
				return l
			}
		}
		select {
		case <-s.logCh:
		case <-time.After(10 * time.Millisecond):
		case <-deadline:
			require.FailNow(t, "expected log line did not arrive", "logs: %v", s.logLines())
		}
	}
}

func testExe(t testing.TB) string {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	return exe
}

// helperConfig runs the test binary in the given helper mode. GORACE
// turns off the race runtime's one-second sleep at exit, which would
// otherwise make every clean exit look slow under -race.
func helperConfig(t testing.TB, mode string) Config {
	return Config{
		Command:    testExe(t),
		Env:        map[string]string{helperEnv: mode, "GORACE": "atexit_sleep_ms=0"},
		CloseGrace: 500 * time.Millisecond,
		Launcher:   testLauncher,
	}
}

// startHelper starts cfg with a fresh sink and closes it at cleanup.
func startHelper(t testing.TB, cfg Config) (*Transport, *testSink) {
	t.Helper()
	tr, err := New(cfg)
	require.NoError(t, err)
	sink := newTestSink()
	require.NoError(t, tr.Start(context.Background(), sink))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		tr.Close(ctx)
	})
	return tr, sink
}

func closeNow(t testing.TB, tr *Transport) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	require.NoError(t, tr.Close(ctx))
}

func send(t testing.TB, tr *Transport, msg string) {
	t.Helper()
	require.NoError(t, tr.Send(context.Background(), transport.Outbound{Data: []byte(msg), Kind: transport.KindRequest}))
}

func codeOf(t testing.TB, err error) transport.Code {
	t.Helper()
	var te *transport.Error
	require.True(t, errors.As(err, &te), "want *transport.Error, got %T %v", err, err)
	return te.Code
}

// procState returns the state letter of /proc/PID/stat, or 0 if the
// process no longer exists.
func procState(pid int) byte {
	var buf [512]byte
	st, ok := procStat("/proc/"+strconv.Itoa(pid)+"/stat", buf[:])
	if !ok {
		return 0
	}
	return st.state
}

// requireGone waits until pid has exited: gone, or a zombie when it is
// not our child (a grandchild waits for init to reap it).
func requireGone(t testing.TB, pid int, zombieOK bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		st := procState(pid)
		if st == 0 || (zombieOK && st == 'Z') {
			return
		}
		if time.Now().After(deadline) {
			require.FailNow(t, "process still exists", "pid %d state %c", pid, st)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func hasPrefixLine(lines []string, prefix string) bool {
	for _, l := range lines {
		if strings.HasPrefix(l, prefix) {
			return true
		}
	}
	return false
}
