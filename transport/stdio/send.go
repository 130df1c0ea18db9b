package stdio

import (
	"bytes"
	"context"
	"errors"
	"os"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/lemonmcp/lemonmcp/transport"
)

const (
	// cancelPoll is how often a write blocked on a full pipe looks at its
	// context. A pipe write can be interrupted only by a deadline, so a
	// cancellable context is honoured by writing in deadline slices; this
	// needs no goroutine and no allocation, unlike context.AfterFunc.
	cancelPoll = 50 * time.Millisecond
	// maxRetainedSendBuf caps the line buffer kept between sends, so one
	// huge message does not pin its size in memory for the session.
	maxRetainedSendBuf = 1 << 20
)

// sender writes lines to the server's stdin.
type sender struct {
	// lock admits one writer at a time, so lines never interleave. It is
	// a channel rather than a sync.Mutex so that a sender queued behind a
	// write stuck on a full pipe still gives up when its own context ends.
	lock     chan struct{}
	w        *os.File
	buf      []byte    // reused line buffer
	deadline time.Time // the write deadline currently set on w
	// resync is set when a write stopped part-way through a line. The
	// server has an unterminated fragment; the next line starts with a
	// '\n' so the fragment becomes one bad line of its own (which the
	// server rejects) instead of corrupting the next message too.
	resync bool
}

// send writes data plus '\n' with a single Write under the lock, so
// concurrent senders' lines never interleave. The context's deadline is
// the write deadline: a server that stops reading stdin cannot block a
// sender forever.
//
// Errors: CodeInvalidArgument for empty data or data with a raw newline
// (the core sends compact JSON, so this is a bug upstream); CodeClosed once
// the transport is closing or lost, or the server closed its stdin;
// CodeTimeout when the context ends first; CodeTransport otherwise.
func (s *sender) send(ctx context.Context, data []byte, down *atomic.Bool) error {
	if down.Load() {
		return errClosed()
	}
	if len(data) == 0 {
		return transport.Errorf(transport.CodeInvalidArgument, "message is empty")
	}
	if bytes.IndexByte(data, '\n') >= 0 {
		return transport.Errorf(transport.CodeInvalidArgument, "message contains a raw newline")
	}
	if err := ctx.Err(); err != nil {
		return ctxError("send", err)
	}

	select {
	case s.lock <- struct{}{}:
	case <-ctx.Done():
		return ctxError("send", ctx.Err())
	}
	defer func() { <-s.lock }()
	if down.Load() {
		return errClosed()
	}

	buf := s.buf[:0]
	if s.resync {
		buf = append(buf, '\n')
	}
	buf = append(buf, data...)
	buf = append(buf, '\n')
	if cap(buf) <= maxRetainedSendBuf {
		s.buf = buf
	} else {
		s.buf = nil
	}

	ctxDeadline, hasDeadline := ctx.Deadline()
	cancellable := ctx.Done() != nil
	off := 0
	for {
		dl := ctxDeadline
		if cancellable {
			if slice := time.Now().Add(cancelPoll); !hasDeadline || slice.Before(dl) {
				dl = slice
			}
		}
		if !dl.Equal(s.deadline) {
			if err := s.w.SetWriteDeadline(dl); err != nil {
				return writeError(err, down)
			}
			s.deadline = dl
		}

		n, err := s.w.Write(buf[off:])
		off += n
		if err == nil {
			s.resync = false
			return nil
		}
		if off > 0 {
			s.resync = true
		}
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			return writeError(err, down)
		}
		// A deadline passed: the caller's, or only our polling slice.
		if cerr := ctx.Err(); cerr != nil {
			if errors.Is(cerr, context.DeadlineExceeded) {
				return transport.Errorf(transport.CodeTimeout, "send timed out: the server is not reading its stdin")
			}
			return transport.Errorf(transport.CodeTimeout, "send cancelled")
		}
		if hasDeadline && !time.Now().Before(ctxDeadline) {
			return transport.Errorf(transport.CodeTimeout, "send timed out: the server is not reading its stdin")
		}
		if down.Load() {
			return errClosed()
		}
	}
}

func writeError(err error, down *atomic.Bool) error {
	switch {
	case down.Load() || errors.Is(err, os.ErrClosed):
		return errClosed()
	case errors.Is(err, syscall.EPIPE):
		return transport.Errorf(transport.CodeClosed, "server closed its stdin")
	}
	return transport.Errorf(transport.CodeTransport, "writing to the server's stdin failed: %s", errnoText(err))
}

func errClosed() error {
	return transport.Errorf(transport.CodeClosed, "transport is closed")
}
