package callerhttp

import (
	"errors"
	"io"
	"sync"
)

// body is a response's body on a connection of ours. Read to its end, it
// gives the connection back; closed early, it resets the connection rather
// than read the rest (an SSE stream may never end), as net/http's close
// with unread data does.
// Close may come from another goroutine while a Read is blocked: it wakes
// the reader.
type body struct {
	rc   io.ReadCloser // http.ReadResponse's body
	t    *Transport
	c    *conn
	stop func() bool // the request context's watch
	keep bool
	left int64 // bytes still to come, -1 when unknown

	mu     sync.Mutex
	eof    bool
	closed bool
}

var errBodyClosed = errors.New("read on a closed response body")

func (b *body) Read(p []byte) (int, error) {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return 0, errBodyClosed
	}
	b.mu.Unlock()
	n, err := b.rc.Read(p)
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.left > 0 {
		b.left -= int64(n)
	}
	if err == io.EOF {
		b.eof = true
	}
	return n, err
}

// Close gives the connection back when the body was read to its end (for
// a body of known length, its last byte is its end), and closes it
// otherwise.
func (b *body) Close() error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	complete := b.eof || b.left == 0
	b.mu.Unlock()
	if b.c.key.blocking {
		defer onCallerNow.Add(-1)
	}
	if complete {
		b.t.release(b.c, b.stop, b.keep)
		return nil
	}
	b.stop()
	b.c.sock.abort()
	return nil
}
