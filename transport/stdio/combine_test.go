package stdio

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/transport"
)

// pipeSender is a sender on a fresh pipe, with the pipe's read end.
func pipeSender(t *testing.T) (*sender, *os.File, *atomic.Bool) {
	t.Helper()
	pr, pw, err := os.Pipe()
	require.NoError(t, err)
	t.Cleanup(func() { pr.Close(); pw.Close() })
	s := &sender{}
	s.attach(pw)
	return s, pr, &atomic.Bool{}
}

// sendAll sends lines from one goroutine each and returns their errors, in
// the lines' order, once every send returned.
func sendAll(s *sender, down *atomic.Bool, lines []string) []error {
	errs := make([]error, len(lines))
	var wg sync.WaitGroup
	for i, l := range lines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.send(context.Background(), []byte(l), down)
		}()
	}
	wg.Wait()
	return errs
}

// readLines reads n lines from r (bounded by waitLong) on a goroutine of
// its own; the result arrives on the channel.
func readLines(r *os.File, n int) <-chan []string {
	out := make(chan []string, 1)
	go func() {
		var got []string
		var rest []byte
		buf := make([]byte, 64<<10)
		_ = r.SetReadDeadline(time.Now().Add(waitLong))
		for len(got) < n {
			k, err := r.Read(buf)
			rest = append(rest, buf[:k]...)
			for {
				i := strings.IndexByte(string(rest), '\n')
				if i < 0 {
					break
				}
				got = append(got, string(rest[:i]))
				rest = rest[i+1:]
			}
			if err != nil {
				break
			}
		}
		out <- got
	}()
	return out
}

// Sends that arrive while another send writes are combined into one write
// made by that writer before it leaves, in the order they arrived, behind
// the writer's own line; a lone send makes one write of its own.
func TestSendCombinesConcurrentLines(t *testing.T) {
	for _, tc := range []struct {
		name    string
		batched int // lines sent while the first write is under way
		writes  int // write(2) calls expected
	}{
		{"a lone send writes once", 0, 1},
		{"one line behind the writer", 1, 2},
		{"sixteen lines behind the writer", 16, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, pr, down := pipeSender(t)
			var lines []string
			for i := range tc.batched {
				lines = append(lines, fmt.Sprintf(`{"n":%d}`, i))
			}
			writes := 0
			var errs []error
			s.beforeWrite = func() {
				writes++
				if writes == 1 {
					// In arrival order, each from a goroutine of its own.
					for _, l := range lines {
						errs = append(errs, sendAll(s, down, []string{l})...)
					}
				}
			}
			got := readLines(pr, tc.batched+1)
			require.NoError(t, s.send(context.Background(), []byte(`{"first":1}`), down))
			require.Equal(t, tc.writes, writes)
			for _, err := range errs {
				require.NoError(t, err)
			}
			require.Equal(t, append([]string{`{"first":1}`}, lines...), <-got)
			s.mu.Lock()
			defer s.mu.Unlock()
			require.False(t, s.writing, "the writer left writing set")
			require.Empty(t, s.batch)
		})
	}
}

// A writer writes at most maxWriterBatches batches for others; past them
// a goroutine takes over, and every line still arrives, in order.
func TestSendWriterHandsOverASteadyStream(t *testing.T) {
	s, pr, down := pipeSender(t)
	const more = 3 * maxWriterBatches
	var writes atomic.Int32
	errs := make(chan error, more)
	release := make(chan struct{})
	s.beforeWrite = func() {
		if writes.Load() >= 1+maxWriterBatches {
			<-release // the goroutine that took over waits for the check below
		}
		if k := writes.Add(1); k <= more {
			for _, err := range sendAll(s, down, []string{fmt.Sprintf(`{"n":%d}`, k)}) {
				errs <- err
			}
		}
	}
	got := readLines(pr, more+1)
	require.NoError(t, s.send(context.Background(), []byte(`{"n":0}`), down))
	require.Equal(t, int32(1+maxWriterBatches), writes.Load(), "the writer's own line and its batches")
	close(release)
	want := make([]string, more+1)
	for i := range want {
		want[i] = fmt.Sprintf(`{"n":%d}`, i)
	}
	require.Equal(t, want, <-got)
	for range more {
		require.NoError(t, <-errs)
	}
}

// Lines arriving from many goroutines at once all arrive whole, each
// once, whatever combines with what (run with -race).
func TestSendConcurrentLinesArriveWhole(t *testing.T) {
	s, pr, down := pipeSender(t)
	const n = 64
	lines := make([]string, n)
	for i := range lines {
		lines[i] = fmt.Sprintf(`{"n":%d,"pad":"%s"}`, i, strings.Repeat("x", 100*i))
	}
	got := readLines(pr, n)
	for _, err := range sendAll(s, down, lines) {
		require.NoError(t, err)
	}
	require.ElementsMatch(t, lines, <-got)
}

// A batch the pipe cannot take whole goes to the flusher behind the rest
// of the line being written: every line arrives whole and in order once
// the server reads.
func TestSendBatchPastAFullPipe(t *testing.T) {
	s, pr, down := pipeSender(t)
	pw := s.w
	// Through the RawConn: File.Fd would put the pipe in blocking mode.
	rc, err := pw.SyscallConn()
	require.NoError(t, err)
	var ferr error
	require.NoError(t, rc.Control(func(fd uintptr) { _, ferr = unixFcntl(fd, fSetPipeSize, 4096) }))
	require.NoError(t, ferr)
	var lines []string
	for i := range 8 {
		lines = append(lines, fmt.Sprintf(`{"n":%d,"pad":"%s"}`, i, strings.Repeat("y", 3000)))
	}
	writes := 0
	var errs []error
	s.beforeWrite = func() {
		writes++
		if writes == 1 {
			for _, l := range lines[1:] {
				errs = append(errs, sendAll(s, down, []string{l})...)
			}
		}
	}
	require.NoError(t, s.send(context.Background(), []byte(lines[0]), down))
	for _, err := range errs {
		require.NoError(t, err)
	}
	require.Positive(t, s.queued(), "8 lines of 3 KB fit a 4 KiB pipe: the test proves nothing")
	require.Equal(t, lines, <-readLines(pr, len(lines)))
	deadline := time.Now().Add(waitLong)
	for s.queued() > 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	require.Zero(t, s.queued())
}

// A write that fails drops the batch (as the flusher drops its queue: the
// pipe is gone) and leaves the sender usable: the next send reports the
// failure instead of batching behind a writer that left.
func TestSendBatchWriteFails(t *testing.T) {
	for _, tc := range []struct {
		name    string
		failAt  int // the write (1: the writer's own line, 2: the batch) during which the pipe goes
		closeRd bool
		wantErr transport.Code
	}{
		{"the server closes its stdin under the writer's own line", 1, true, transport.CodeClosed},
		{"the server closes its stdin under the batch", 2, true, transport.CodeClosed},
		{"the transport closes under the batch", 2, false, transport.CodeClosed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, pr, down := pipeSender(t)
			writes := 0
			var errs []error
			s.beforeWrite = func() {
				writes++
				if writes == 1 {
					errs = sendAll(s, down, []string{`{"b":1}`, `{"b":2}`})
				}
				if writes == tc.failAt {
					if tc.closeRd {
						pr.Close()
					} else {
						down.Store(true)
						s.w.Close()
					}
				}
			}
			err := s.send(context.Background(), []byte(`{"a":1}`), down)
			if tc.failAt == 1 {
				require.Equal(t, tc.wantErr, codeOf(t, err))
			} else {
				require.NoError(t, err)
			}
			for _, err := range errs {
				require.NoError(t, err, "a batched send returns before its line is written")
			}
			s.mu.Lock()
			require.False(t, s.writing, "the writer left writing set")
			require.Empty(t, s.batch, "the batch outlived the pipe")
			s.mu.Unlock()
			s.beforeWrite = nil
			err = s.send(context.Background(), []byte(`{"c":1}`), down)
			require.Equal(t, tc.wantErr, codeOf(t, err))
			require.Zero(t, s.queued())
		})
	}
}

// Sends that find the transport down while a writer writes are refused,
// not batched.
func TestSendDownWhileWriting(t *testing.T) {
	s, pr, down := pipeSender(t)
	var errs []error
	s.beforeWrite = func() {
		s.beforeWrite = nil
		down.Store(true)
		errs = sendAll(s, down, []string{`{"late":1}`})
	}
	require.NoError(t, s.send(context.Background(), []byte(`{"a":1}`), down))
	require.Len(t, errs, 1)
	require.Equal(t, transport.CodeClosed, codeOf(t, errs[0]))
	require.Equal(t, []string{`{"a":1}`}, <-readLines(pr, 1))
}

// fSetPipeSize is F_SETPIPE_SZ (Linux), which package syscall lacks.
const fSetPipeSize = 1031

func unixFcntl(fd uintptr, cmd, arg int) (int, error) {
	r, _, e := syscall.Syscall(syscall.SYS_FCNTL, fd, uintptr(cmd), uintptr(arg))
	if e != 0 {
		return int(r), e
	}
	return int(r), nil
}

// BenchmarkSendParallel sends a request-sized line from GOMAXPROCS*4
// goroutines at once into a pipe a reader drains, and reports the write(2)
// calls made per line ("writes/line", 1 without combining). Reported,
// never asserted.
func BenchmarkSendParallel(b *testing.B) {
	pr, pw, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close()
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	s := &sender{}
	s.attach(pw)
	var writes atomic.Int64
	s.beforeWrite = func() { writes.Add(1) }
	var down atomic.Bool
	line := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}`)
	b.SetParallelism(4)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := s.send(context.Background(), line, &down); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(writes.Load())/float64(b.N), "writes/line")
}

// Lines sent during a hold go out in one write at the last release, in
// the order they were sent; a hold made while another sender writes
// leaves the pipe to it (its lines join that writer's batch).
func TestSendHoldWritesAtTheLastRelease(t *testing.T) {
	for _, tc := range []struct {
		name          string
		holds         int  // holds taken before the lines are sent
		lines         int  // lines sent during the hold
		duringWrite   bool // the hold is taken while another send writes
		writesAtFirst int  // write(2) calls made once the first release returned
		writes        int  // write(2) calls made in all
	}{
		{"sixteen held lines, one write", 1, 16, false, 1, 1},
		{"nested holds: the last release writes", 2, 3, false, 0, 1},
		{"a hold with nothing sent writes nothing", 1, 0, false, 0, 0},
		{"a hold during another write joins its batch", 1, 4, true, 2, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, pr, down := pipeSender(t)
			var lines []string
			for i := range tc.lines {
				lines = append(lines, fmt.Sprintf(`{"n":%d}`, i))
			}
			writes := 0
			var errs []error
			sendHeld := func() {
				for range tc.holds {
					s.hold()
				}
				for _, l := range lines {
					errs = append(errs, s.send(context.Background(), []byte(l), down))
				}
			}
			want := lines
			if tc.duringWrite {
				s.beforeWrite = func() {
					writes++
					if writes == 1 {
						sendHeld()
					}
				}
				require.NoError(t, s.send(context.Background(), []byte(`{"first":1}`), down))
				want = append([]string{`{"first":1}`}, lines...)
			} else {
				s.beforeWrite = func() { writes++ }
				sendHeld()
				require.Zero(t, writes, "a held line was written before the release")
			}
			s.release()
			require.Equal(t, tc.writesAtFirst, writes)
			for range tc.holds - 1 {
				s.release()
			}
			require.Equal(t, tc.writes, writes)
			for _, err := range errs {
				require.NoError(t, err)
			}
			if len(want) > 0 {
				require.Equal(t, want, <-readLines(pr, len(want)))
			}
			s.mu.Lock()
			defer s.mu.Unlock()
			require.False(t, s.writing, "the hold left writing set")
			require.False(t, s.holding)
			require.Zero(t, s.holds)
			require.Empty(t, s.batch)
		})
	}
}
