package stdio

import (
	"context"
	"errors"
	"os"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/lemonmcp/lemonmcp/transport"
)

// Transport runs one MCP server process. Create it with New.
type Transport struct {
	cfg Config

	mu    sync.Mutex // guards state during Start and Close
	state int

	// Set once by Start, before started is stored; read-only afterwards.
	started atomic.Bool
	sink    transport.Sink
	proc    *os.Process
	pgid    int
	stdin   *os.File
	stdout  *os.File
	stderr  *os.File     // nil unless capturing
	errs    *stderrLines // nil unless capturing
	reader  *lineReader  // the stdout reader, kept for tests
	launch  *Launch      // nil unless a Launcher runs the server
	report  any          // the launch's report of this start, nil for none
	// serverGone is closed when the launched server itself has exited
	// (Launch.ServerGone); nil when there is no launch or it cannot tell.
	serverGone <-chan struct{}
	// warnMu orders the launch's warnings before Closed (closedSent).
	warnMu     sync.Mutex
	closedSent bool

	sender sender

	// down makes Send fail fast once the transport is closing or lost.
	down atomic.Bool
	// requested records that Close was called; it goes into ClosedError.
	requested atomic.Bool
	// inClosed is true while the sink's Closed callback runs.
	inClosed atomic.Bool

	closeReq  chan struct{} // closed by the first Close
	hurry     chan struct{} // closed when a Close's ctx ends first
	closeOnce sync.Once
	hurryOnce sync.Once

	exited chan struct{} // closed once the child is reaped
	pidfd  int           // the child's pidfd, -1 when none (see reaper.go)
	// status is how the child ended, valid when statusKnown; both are set
	// before exited is closed.
	status      syscall.WaitStatus
	statusKnown bool
	readerDone  chan struct{} // closed when the stdout reader returns
	readErr     error
	stderrDone  chan struct{} // closed when stderr draining returns
	done        chan struct{} // closed when everything is torn down
}

const (
	stateNew = iota
	stateStarted
	stateClosed // closed before it was ever started
)

var _ transport.Transport = (*Transport)(nil)

// New checks cfg and returns a transport that is ready to Start. Errors are
// *transport.Error with CodeInvalidArgument.
func New(cfg Config) (*Transport, error) {
	c, err := cfg.normalize()
	if err != nil {
		return nil, err
	}
	return &Transport{
		cfg:        c,
		closeReq:   make(chan struct{}),
		hurry:      make(chan struct{}),
		exited:     make(chan struct{}),
		readerDone: make(chan struct{}),
		stderrDone: make(chan struct{}),
		done:       make(chan struct{}),
	}, nil
}

// Name returns "stdio".
func (t *Transport) Name() string { return "stdio" }

// InboundStream implements transport.LineStreamer: messages are the lines
// of the server's stdout.
func (t *Transport) InboundStream() string { return "stdout" }

// PID is the server's process id (also its process group id), or 0 before
// a successful Start. It is meant for diagnostics.
func (t *Transport) PID() int {
	if !t.started.Load() {
		return 0
	}
	return t.pgid
}

// Start spawns the server and begins delivering what it writes to sink.
// ctx bounds only the start itself, not the server's lifetime.
func (t *Transport) Start(ctx context.Context, sink transport.Sink) error {
	if sink == nil {
		return transport.Errorf(transport.CodeInvalidArgument, "sink is nil")
	}
	if err := ctx.Err(); err != nil {
		return ctxError("start", err)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	switch t.state {
	case stateStarted:
		return transport.Errorf(transport.CodeInvalidArgument, "transport already started")
	case stateClosed:
		return transport.Errorf(transport.CodeClosed, "transport is closed")
	}

	c, err := spawn(t.cfg)
	if err != nil {
		return err
	}
	t.sink = sink
	t.proc = c.proc
	t.pgid = c.proc.Pid // Setpgid(0) makes the group id the leader's pid
	t.pidfd = c.pidfd
	t.launch, t.report = c.launch, c.report
	t.serverGone = c.launch.serverGone(c.proc.Pid)
	t.stdin, t.stdout, t.stderr = c.stdin, c.stdout, c.stderr
	t.sender.attach(c.stdin)
	secrets := envSecrets(t.cfg.Env)
	t.reader = newLineReader(c.stdout, t.cfg.MaxMessageBytes, readChunk,
		&stdoutLines{sink: sink, limit: t.cfg.MaxMessageBytes, secrets: secrets})
	if c.stderr != nil {
		t.errs = newStderrLines(sink, t.cfg.StderrTailLines)
		t.errs.secrets = secrets
	}
	t.state = stateStarted
	t.started.Store(true)

	go t.wait()
	go t.readStdout()
	if c.stderr != nil {
		go t.readStderr()
	} else {
		close(t.stderrDone)
	}
	go t.supervise()
	if c.launch != nil && c.launch.Warnings != nil {
		c.launch.Warnings(func(text string) {
			t.warnMu.Lock()
			defer t.warnMu.Unlock()
			if !t.closedSent { // nothing reaches the sink after Closed
				sink.Log(transport.LogLine{Level: "warning", Source: "transport", Text: text})
			}
		})
	}
	return nil
}

// SandboxReport implements transport.SandboxReporter: what the launcher
// set up for this start (the sandbox helper's report), nil for nothing.
func (t *Transport) SandboxReport() any {
	if !t.started.Load() {
		return nil
	}
	return t.report
}

func (t *Transport) readStdout() {
	defer close(t.readerDone)
	// A bug while reading ends the reader as a read error would: supervise
	// then tears the connection down, and the host process lives on.
	defer transport.Recover(t.sink, "the stdout reader", func() { t.readErr = errReaderPanicked })
	t.readErr = t.reader.run()
}

func (t *Transport) readStderr() {
	defer close(t.stderrDone)
	defer transport.Recover(t.sink, "the stderr reader", nil)
	_ = newLineReader(t.stderr, maxStderrLineBytes, maxStderrLineBytes, t.errs).run()
}

var errReaderPanicked = errors.New("internal error in the stdout reader")

// Send writes msg.Data as one line. See sender.send for the error cases.
func (t *Transport) Send(ctx context.Context, msg transport.Outbound) error {
	if !t.started.Load() {
		return transport.Errorf(transport.CodeClosed, "transport is not started")
	}
	return t.sender.send(ctx, msg.Data, &t.down)
}

// HoldSends holds the lines sent until the matching ReleaseSends, which
// writes them at once (transport.SendHolder).
func (t *Transport) HoldSends() { t.sender.hold() }

// ReleaseSends ends a hold (transport.SendHolder).
func (t *Transport) ReleaseSends() { t.sender.release() }

// ctxError converts a context error into a transport error. There is no
// "cancelled" code: the core tells cancellation from a timeout by its own
// context, so both map to CodeTimeout with distinct messages.
func ctxError(op string, err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return transport.Errorf(transport.CodeTimeout, "%s timed out", op)
	}
	return transport.Errorf(transport.CodeTimeout, "%s cancelled", op)
}
