package stdio

import (
	"bytes"
	"context"
	"errors"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/lemonmcp/lemonmcp/transport"
)

const (
	// downPoll is how often the flusher, blocked on a full pipe with no
	// deadline, looks whether the transport went down.
	downPoll = 50 * time.Millisecond
	// maxRetainedSendBuf caps the line buffer kept between sends, so one
	// huge message does not pin its size in memory for the session.
	maxRetainedSendBuf = 1 << 20
	// DefaultMaxQueuedBytes bounds the bytes waiting for a server that
	// stopped reading its stdin.
	DefaultMaxQueuedBytes = 64 << 20
)

// sender writes lines to the server's stdin without ever blocking its
// caller: Send runs on the host's thread (a C caller's, a BEAM
// scheduler's), which a server that stops reading must not be able to
// stall.
//
// The fast path is one non-blocking write(2) on the calling thread. When
// the pipe is full, what did not fit is queued and a flusher goroutine
// writes the queue in order, each message bounded by the deadline its
// sender had; while the flusher owns the pipe, later lines queue behind it
// so lines never interleave. The queue is bounded (maxQueued bytes): past
// it Send fails at once, as it does once the transport is down.
//
// Concurrent sends combine (flat combining): the write(2) is made outside
// mu, and a send that arrives while another is writing appends its line to
// the batch and returns; the writer writes the batch before it leaves. Many
// calls in flight then cost one write, and one wake-up of the server,
// instead of one each, and no sender waits on mu for someone else's
// syscall. A lone send makes the same single write as before.
type sender struct {
	mu sync.Mutex
	w  *os.File
	rc syscall.RawConn

	buf []byte // reused line buffer of the fast path
	// resync is set when a write stopped part-way through a line. The
	// server has an unterminated fragment; the next line starts with a
	// '\n' so the fragment becomes one bad line of its own (which the
	// server rejects) instead of corrupting the next message too.
	resync bool

	// writing is set while a sender writes outside mu: new lines go to
	// batch, which that writer writes before it clears writing.
	writing bool
	batch   []byte
	// batchDeadline is the latest deadline of the batch's lines, zero when
	// one has none: if the batch must wait for the flusher, no line is
	// dropped before its own sender gave up.
	batchDeadline time.Time
	batchSpare    []byte // the previous batch's buffer, reused
	// beforeWrite, when set (tests only), runs before each write made
	// outside mu, so a test can make sends arrive during it.
	beforeWrite func()

	// holds counts the open holds (hold); holding is set while a hold is
	// the writer: lines batch until the last hold is released.
	holds   int
	holding bool

	flushing    bool // the flusher owns the pipe; new lines queue
	queue       []queuedLine
	queuedBytes int
	maxQueued   int // 0 means DefaultMaxQueuedBytes

	// tryWrite's arguments and results, so the RawConn callback is one
	// method value made once (no allocation per send).
	tryBuf  []byte
	tryN    int
	tryErr  error
	tryFunc func(fd uintptr) bool
}

// queuedLine is a line (or the rest of one) waiting for the pipe.
type queuedLine struct {
	data     []byte
	cost     int       // what it counts against the byte limit
	deadline time.Time // zero: none
	started  bool      // part of it is already written
}

// attach sets the pipe. Without a RawConn (which an open *os.File always
// has) every line would go through the flusher: slower, never wrong.
func (s *sender) attach(w *os.File) {
	s.w = w
	if rc, err := w.SyscallConn(); err == nil {
		s.rc = rc
	}
	s.tryFunc = s.writeOnce
}

// send writes data plus '\n' as one line, or queues what the pipe cannot
// take now. It never waits for the server.
//
// Errors: CodeInvalidArgument for empty data or data with a raw newline
// (the core sends compact JSON, so this is a bug upstream); CodeClosed once
// the transport is closing or lost, or the server closed its stdin;
// CodeTimeout when ctx has already ended, or when the queue for a server
// that stopped reading is full; CodeTransport otherwise.
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
	deadline, _ := ctx.Deadline()

	s.mu.Lock()
	if down.Load() {
		s.mu.Unlock()
		return errClosed()
	}
	if s.flushing {
		err := s.enqueueLocked(lineOf(nil, data), deadline, false)
		s.mu.Unlock()
		return err
	}
	if s.writing {
		s.batchLocked(data, deadline)
		s.mu.Unlock()
		return nil
	}

	buf := s.buf[:0]
	if s.resync {
		buf = append(buf, '\n')
	}
	buf = append(buf, data...)
	buf = append(buf, '\n')
	s.buf = nil // this writer's until it is done with it
	s.writing = true
	s.mu.Unlock()

	n, err := s.tryWrite(buf)

	// No deferred unlock from here: writeBatchesLocked unlocks mu around
	// its writes.
	s.mu.Lock()
	if cap(buf) <= maxRetainedSendBuf {
		s.buf = buf
	}
	err = s.wroteLocked(buf, n, err, deadline, down)
	s.mu.Unlock()
	return err
}

// wroteLocked settles the writer's own write of buf (n bytes written, or
// err), then writes or hands on the batch.
func (s *sender) wroteLocked(buf []byte, n int, err error, deadline time.Time, down *atomic.Bool) error {
	if err != nil {
		if n > 0 {
			s.resync = true
		}
		s.dropBatchLocked()
		return writeError(err, down)
	}
	s.resync = false
	if n < len(buf) {
		// The pipe is full: the rest goes to the flusher, and the batch
		// behind it. Copied, since buf is reused by the next send. No
		// bound applies: nothing was queued while this sender wrote.
		s.pushLocked(bytes.Clone(buf[n:]), deadline, n > 0)
		s.handBatchLocked()
		return nil
	}
	s.writeBatchesLocked()
	return nil
}

// hold makes the lines sent until release go out in one write, at the
// release: a caller that starts many calls at once (an event loop resuming
// the tasks whose calls completed) wakes the server once instead of once
// per line. The hold takes the writer's place when no one writes (a send
// then batches its line and returns, as it does behind a writer); when a
// writer or the flusher owns the pipe already, lines batch or queue behind
// it anyway and the hold does nothing. Holds nest; the last release writes.
func (s *sender) hold() {
	s.mu.Lock()
	s.holds++
	if !s.writing && !s.flushing {
		s.writing, s.holding = true, true
	}
	s.mu.Unlock()
}

// release ends a hold (see hold).
func (s *sender) release() {
	s.mu.Lock()
	if s.holds > 0 {
		s.holds--
	}
	if s.holds == 0 && s.holding {
		s.holding = false
		s.writeBatchesLocked() // unlocks mu around its writes
	}
	s.mu.Unlock()
}

// batchLocked appends a line to the batch of the sender now writing.
func (s *sender) batchLocked(data []byte, deadline time.Time) {
	if len(s.batch) == 0 {
		s.batchDeadline = deadline
	} else if !s.batchDeadline.IsZero() && (deadline.IsZero() || deadline.After(s.batchDeadline)) {
		s.batchDeadline = deadline
	}
	s.batch = lineOf(s.batch, data)
}

// maxWriterBatches bounds the batches a sender writes for others before
// it returns: under a steady stream of sends, a goroutine takes over the
// writing, so no caller's send lasts longer than a few writes.
const maxWriterBatches = 4

// writeBatchesLocked is the writer's last duty: it writes the lines that
// arrived while it was writing, and those that arrive meanwhile, then
// clears writing. A batch the pipe cannot take whole goes to the flusher.
// A write error drops what is left, as the flusher does: the pipe is gone,
// and the calls learn it from the transport's fate or their deadlines.
func (s *sender) writeBatchesLocked() {
	for rounds := 0; len(s.batch) > 0; rounds++ {
		if rounds == maxWriterBatches {
			go s.takeOverBatches() // writing stays set: it is the writer now
			return
		}
		batch := s.batch
		s.batch, s.batchSpare = s.batchSpare[:0], nil
		deadline := s.batchDeadline
		s.batchDeadline = time.Time{}
		s.mu.Unlock()

		n, err := s.tryWrite(batch)

		s.mu.Lock()
		switch {
		case err != nil:
			if n > 0 {
				s.resync = true
			}
			s.dropBatchLocked()
			return
		case n < len(batch):
			// Lines batched meanwhile go after this rest.
			s.pushLocked(bytes.Clone(batch[n:]), deadline, n > 0)
			s.handBatchLocked()
			return
		}
		if cap(batch) <= maxRetainedSendBuf {
			s.batchSpare = batch
		}
	}
	s.writing = false
}

// takeOverBatches writes the batches of a writer that reached
// maxWriterBatches.
func (s *sender) takeOverBatches() {
	defer transport.Recover(nil, "the stdin writer", func() {
		if s.mu.TryLock() { // not if the panic came from under the lock
			s.dropBatchLocked()
			s.mu.Unlock()
		}
	})
	s.mu.Lock()
	s.writeBatchesLocked() // unlocks mu around its writes: no deferred unlock
	s.mu.Unlock()
}

// handBatchLocked gives the batch to the flusher, which owns the pipe now,
// and clears writing. The batch is queued even past the byte limit: its
// senders have returned.
func (s *sender) handBatchLocked() {
	if len(s.batch) > 0 {
		s.pushLocked(s.batch, s.batchDeadline, false)
		s.batch = nil
	}
	s.dropBatchLocked()
}

// dropBatchLocked forgets the batch and clears writing.
func (s *sender) dropBatchLocked() {
	s.batch = s.batch[:0]
	if cap(s.batch) > maxRetainedSendBuf {
		s.batch = nil
	}
	s.batchDeadline = time.Time{}
	s.writing = false
}

// lineOf returns a fresh copy of data plus '\n', allocated at its exact
// size: appending the '\n' to a copy would reallocate it and waste up to
// a quarter of every queued line.
func lineOf(dst, data []byte) []byte {
	if dst == nil {
		line := make([]byte, len(data)+1)
		copy(line, data)
		line[len(data)] = '\n'
		return line
	}
	dst = append(dst, data...)
	return append(dst, '\n')
}

// queuedLineCost is what the queue's bookkeeping costs per line beyond its
// bytes (its queuedLine entry, counted twice for the slack of the slice
// that holds it). It is charged against the byte limit, so that a queue
// of many small lines is bounded by the limit too.
const queuedLineCost = 2 * int(unsafe.Sizeof(queuedLine{}))

// allocSize bounds what the Go allocator takes for n bytes: small sizes are
// rounded up to a size class (at most an eighth more), large ones to whole
// 8 KiB pages.
func allocSize(n int) int {
	if n <= 32<<10 {
		return n + n/8
	}
	return (n + 8<<10 - 1) &^ (8<<10 - 1)
}

// enqueueLocked queues a line and starts the flusher if it is not running.
// A line is refused when others already wait and it would take the queue
// past its bound; an empty queue takes a line of any size, so one large
// message can always be sent. A line costs its allocated size plus its
// bookkeeping, so the bound is the queue's memory, not only its bytes.
func (s *sender) enqueueLocked(line []byte, deadline time.Time, started bool) error {
	limit := s.maxQueued
	if limit == 0 {
		limit = DefaultMaxQueuedBytes
	}
	cost := allocSize(len(line)) + queuedLineCost
	if s.queuedBytes > 0 && s.queuedBytes+cost > limit {
		return transport.Errorf(transport.CodeTimeout,
			"send refused: the server is not reading its stdin (%d bytes already wait)", s.queuedBytes)
	}
	s.pushLocked(line, deadline, started)
	return nil
}

// pushLocked queues a line whatever the bound, and starts the flusher if
// it is not running.
func (s *sender) pushLocked(line []byte, deadline time.Time, started bool) {
	cost := allocSize(len(line)) + queuedLineCost
	s.queue = append(s.queue, queuedLine{data: line, cost: cost, deadline: deadline, started: started})
	s.queuedBytes += cost
	if !s.flushing {
		s.flushing = true
		go s.flush()
	}
}

// tryWrite makes one non-blocking write(2) of buf (retrying EINTR) and
// reports how much was written. A full pipe is n < len(buf) with no error.
// Only the sender that set writing calls it.
func (s *sender) tryWrite(buf []byte) (int, error) {
	if s.beforeWrite != nil {
		s.beforeWrite()
	}
	if s.rc == nil {
		return 0, nil
	}
	s.tryBuf, s.tryN, s.tryErr = buf, 0, nil
	if err := s.rc.Write(s.tryFunc); err != nil {
		return 0, err // the file is closed
	}
	n, err := s.tryN, s.tryErr
	s.tryBuf = nil
	return n, err
}

// writeOnce is the RawConn callback: it writes what it can and never asks
// the poller to wait (it always returns true).
func (s *sender) writeOnce(fd uintptr) bool {
	for s.tryN < len(s.tryBuf) {
		n, err := syscall.Write(int(fd), s.tryBuf[s.tryN:])
		if n > 0 {
			s.tryN += n
		}
		switch {
		case err == nil:
			continue
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.EAGAIN):
			return true
		default:
			s.tryErr = err
			return true
		}
	}
	return true
}

// flush writes the queue in order until it is empty, the transport goes
// down, or the write fails. A line whose deadline passed before any of it
// was written is dropped (its caller has timed out); one cut off part-way
// leaves the stream to resync.
func (s *sender) flush() {
	// A bug here must not kill the host: drop the queue as a broken pipe
	// would (the calls time out; the reader sees the server's fate).
	defer transport.Recover(nil, "the stdin flusher", func() {
		if s.mu.TryLock() { // not if the panic came from under the lock
			s.queue, s.queuedBytes, s.flushing = nil, 0, false
			s.mu.Unlock()
		}
	})
	for {
		s.mu.Lock()
		if len(s.queue) == 0 {
			s.flushing = false
			s.queue = nil // release a grown backing array
			s.mu.Unlock()
			return
		}
		line := s.queue[0]
		s.mu.Unlock()

		w, err := s.writeBlocking(line)

		s.mu.Lock()
		s.queue[0] = queuedLine{} // the backing array must not keep the line alive
		s.queue = s.queue[1:]
		s.queuedBytes -= line.cost
		switch {
		case err != nil:
			// The pipe is gone: nothing queued can be delivered. Senders
			// learn it from the transport's state (down) or their own
			// deadlines.
			s.queue, s.queuedBytes, s.flushing = nil, 0, false
			s.mu.Unlock()
			return
		case w.wrote == len(line.data):
			s.resync = false
		case w.wrote > 0 || line.started:
			s.resync = true // cut part-way
		case w.prefixDone:
			s.resync = false // dropped whole, and the old fragment is ended
		}
		s.mu.Unlock()
	}
}

// lineWrite is what writeBlocking managed.
type lineWrite struct {
	wrote      int  // bytes of the line written
	prefixDone bool // the resync '\n' it owed was written (or none was owed)
}

// writeBlocking writes one queued line, waiting for the pipe up to the
// line's deadline (and, without one, for as long as the pipe lives). A
// resync '\n' goes first when the previous line was cut. The error is
// non-nil only when the pipe is unusable.
func (s *sender) writeBlocking(line queuedLine) (lineWrite, error) {
	s.mu.Lock()
	prefix := s.resync && !line.started
	s.mu.Unlock()
	data := line.data
	if prefix {
		data = append([]byte{'\n'}, data...)
	}
	defer s.w.SetWriteDeadline(time.Time{})
	off := 0
	report := func() lineWrite {
		if prefix {
			return lineWrite{wrote: max(off-1, 0), prefixDone: off > 0}
		}
		return lineWrite{wrote: off, prefixDone: true}
	}
	for off < len(data) {
		now := time.Now()
		if !line.deadline.IsZero() && !now.Before(line.deadline) {
			return report(), nil // its caller has given up: drop the rest
		}
		dl := now.Add(downPoll)
		if !line.deadline.IsZero() && line.deadline.Before(dl) {
			dl = line.deadline
		}
		if err := s.w.SetWriteDeadline(dl); err != nil {
			return report(), err
		}
		n, err := s.w.Write(data[off:])
		off += n
		if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
			return report(), err
		}
	}
	return report(), nil
}

// queued reports the bytes waiting for the pipe (for tests).
func (s *sender) queued() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.queuedBytes
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
