package gateway

import (
	"bufio"
	"errors"
	"io"
	"sync"

	"github.com/lemonmcp/lemonmcp/core"
)

// maxQueuedBytes bounds what waits for a front that does not read: past
// it the front is cut off rather than the gateway's memory growing.
const maxQueuedBytes = 64 << 20

// queueSink sends messages through write on a goroutine of its own, so
// that no sender (the host's delivery goroutine above all) waits on a
// front.
type queueSink struct {
	write func(msg []byte) error
	onEnd func() // runs once the sink ends (closed, or a write failed)

	mu     sync.Mutex
	cond   *sync.Cond
	queue  [][]byte
	bytes  int
	closed bool
	ended  chan struct{}
}

func newQueueSink(write func([]byte) error, onEnd func()) *queueSink {
	q := &queueSink{write: write, onEnd: onEnd, ended: make(chan struct{})}
	q.cond = sync.NewCond(&q.mu)
	go q.run()
	return q
}

func (q *queueSink) send(msg []byte) bool {
	if msg == nil {
		return true
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return false
	}
	if q.bytes+len(msg) > maxQueuedBytes {
		q.closed = true // a front this far behind is gone
		q.queue = nil
		q.cond.Signal()
		return false
	}
	q.queue = append(q.queue, msg)
	q.bytes += len(msg)
	q.cond.Signal()
	return true
}

// close ends the sink once what is queued has been written.
func (q *queueSink) close() {
	q.mu.Lock()
	q.closed = true
	q.cond.Signal()
	q.mu.Unlock()
}

// flushed is closed when the sink has ended.
func (q *queueSink) flushed() <-chan struct{} { return q.ended }

func (q *queueSink) run() {
	defer func() {
		close(q.ended)
		if q.onEnd != nil {
			q.onEnd()
		}
	}()
	for {
		q.mu.Lock()
		for len(q.queue) == 0 && !q.closed {
			q.cond.Wait()
		}
		if len(q.queue) == 0 {
			q.mu.Unlock()
			return
		}
		msg := q.queue[0]
		q.queue[0] = nil
		q.queue = q.queue[1:]
		q.bytes -= len(msg)
		q.mu.Unlock()
		if q.write(msg) != nil {
			q.mu.Lock()
			q.closed, q.queue = true, nil
			q.mu.Unlock()
			return
		}
	}
}

// ServeStream serves one front session over a byte stream of
// newline-delimited JSON-RPC messages (the stdio binding): in is what the
// front writes, out what it reads. It returns at once; serving ends when
// in ends (the front closed it) or Stop, and then the session's calls
// are cancelled upstream. closeIn, when set, unblocks a read of in on
// Stop.
func (s *Server) ServeStream(in io.Reader, out io.Writer, closeIn func()) *core.Error {
	var stopOnce sync.Once
	stop := func() {
		stopOnce.Do(func() {
			if closeIn != nil {
				closeIn()
			}
		})
	}
	if err := s.begin(stop); err != nil {
		return err
	}
	w := bufio.NewWriterSize(out, 64<<10)
	var wmu sync.Mutex
	outSink := newQueueSink(func(msg []byte) error {
		wmu.Lock()
		defer wmu.Unlock()
		if _, err := w.Write(msg); err != nil {
			return err
		}
		if err := w.WriteByte('\n'); err != nil {
			return err
		}
		return w.Flush()
	}, nil)
	sess, err := s.newSession(outSink, true)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.flushed = outSink.flushed()
	s.mu.Unlock()
	go func() {
		s.readLines(sess, in, outSink)
		// The front closed its end: calls still running are cancelled,
		// and serving is over once what is queued has been written.
		s.finish(nil)
		<-outSink.flushed()
	}()
	return nil
}

// readLines reads messages until in ends, each line bounded by
// MaxBodyBytes (a longer one is answered with an error and skipped).
func (s *Server) readLines(sess *Session, in io.Reader, out *queueSink) {
	br := bufio.NewReaderSize(in, 64<<10)
	limit := int(s.opts.MaxBodyBytes)
	var long []byte
	skipping := false
	for {
		chunk, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			if !skipping && len(long)+len(chunk) <= limit {
				long = append(long, chunk...)
				continue
			}
			if !skipping {
				out.send(errorMsg(nil, core.CodeInvalidRequest, "the message is longer than the gateway's max_body_bytes ("+itoa(int64(limit))+" bytes)", nil))
			}
			skipping, long = true, nil
			continue
		}
		line := chunk
		if long != nil {
			line = append(long, chunk...)
			long = nil
		}
		if skipping {
			skipping = false
		} else if len(trimLine(line)) > 0 {
			if len(line) > limit+1 {
				out.send(errorMsg(nil, core.CodeInvalidRequest, "the message is longer than the gateway's max_body_bytes ("+itoa(int64(limit))+" bytes)", nil))
			} else {
				msg := append([]byte(nil), trimLine(line)...)
				s.handle(sess, msg, &reply{related: out, done: func(m []byte) { out.send(m) }})
			}
		}
		if err != nil {
			return
		}
		if s.isStopping() {
			return
		}
	}
}

func (s *Server) isStopping() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stopping
}

func trimLine(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r' || b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}
