package stdio

import (
	"context"
	"errors"
	"io"
	"os"
	"syscall"
	"time"

	"github.com/lemonmcp/lemonmcp/transport"
)

const (
	// drainWindow is how long the readers may go on after the server has
	// exited. Output still in the pipes arrives within it; a grandchild
	// holding the pipes open must not keep them going forever.
	drainWindow = 100 * time.Millisecond
	// exitSettle is how long an EOF on stdout waits for the process to
	// exit: a server that is exiting closes stdout a moment before it is
	// reaped, and its exit status makes a better report than "closed its
	// stdout".
	exitSettle = 100 * time.Millisecond
	// sweepPoll is how often a group being terminated is checked.
	sweepPoll = 20 * time.Millisecond
	// lifelineWait bounds how long a launched helper may take to kill
	// the server's processes once its lifeline is cut, before SIGKILL.
	lifelineWait = time.Second
)

// Close shuts the server down: stdin is closed, then after CloseGrace the
// process group gets SIGTERM, after another CloseGrace SIGKILL, and the
// child is reaped; members of the group that outlive the server get the
// same treatment. If ctx ends first the group is killed at once, the child
// still reaped, and Close returns a CodeTimeout error. Closed has been
// delivered when Close returns. Close is idempotent.
//
// Close waits for Sink callbacks in flight, so it must not be called from
// inside Receive or Log. It may be called from inside Closed: while Closed
// is being delivered Close returns at once, and the teardown that follows
// Closed finishes in the background.
func (t *Transport) Close(ctx context.Context) error {
	t.mu.Lock()
	if t.state != stateStarted {
		t.state = stateClosed
		t.mu.Unlock()
		return nil
	}
	t.mu.Unlock()

	t.requested.Store(true)
	t.down.Store(true)
	t.closeOnce.Do(func() { close(t.closeReq) })

	select {
	case <-t.done:
		return nil
	default:
	}
	if t.inClosed.Load() {
		// Most likely called from the Closed callback itself, which the
		// supervisor is waiting on: waiting for it here would deadlock.
		return nil
	}
	select {
	case <-t.done:
		return nil
	case <-ctx.Done():
	}
	t.hurryOnce.Do(func() { close(t.hurry) })
	// Reaping after SIGKILL is quick, so this wait is short even though
	// ctx is over; returning earlier would leave the child unreaped.
	<-t.done
	return transport.Errorf(transport.CodeTimeout, "close timed out; the server's process group was killed")
}

// supervise owns the shutdown sequence. It waits for the first sign that
// the session is over (exit, EOF on stdout, or Close), reports it once to
// the sink, and makes sure nothing of the server is left afterwards.
func (t *Transport) supervise() {
	defer t.release()

	select {
	case <-t.exited:
	case <-t.closeReq:
	case <-t.readerDone:
		settle := time.NewTimer(exitSettle)
		select {
		case <-t.exited:
		case <-t.closeReq:
		case <-t.serverGone:
			// The server exited (its stdout closed with it); the helper
			// that launched it follows once it has ended what the server
			// left, and its report is the server's end.
			settle.Stop()
			follow := time.NewTimer(t.cfg.CloseGrace + exitSettle)
			select {
			case <-t.exited:
			case <-t.closeReq:
			case <-follow.C:
			}
			follow.Stop()
		case <-settle.C:
			// Ending but not reaped yet (a loaded machine, or memcheck):
			// its status is on its way, and is the better report.
			exited, exiting := ending(t.pgid)
			var bound <-chan time.Time
			switch {
			case !exiting:
				t.lost()
				return
			case !exited:
				follow := time.NewTimer(t.cfg.CloseGrace + exitSettle)
				defer follow.Stop()
				bound = follow.C
			}
			select {
			case <-t.exited:
			case <-t.closeReq:
			case <-bound:
				t.lost()
				return
			}
		}
		settle.Stop()
	}

	t.down.Store(true)
	killed := t.terminate()
	t.drain()
	t.deliver(t.exitReport())
	t.sweep(killed)
}

// lost handles a server that closed stdout but keeps running: the session
// is over, so the sink hears about it now, and the process is torn down
// afterwards with the usual escalation.
func (t *Transport) lost() {
	t.down.Store(true)
	if t.errs != nil {
		t.errs.mute() // no stderr log line may follow Closed
	}
	msg := "server closed its stdout"
	if t.readErr != nil && !errors.Is(t.readErr, io.EOF) {
		msg = "reading the server's stdout failed: " + errnoText(t.readErr)
	}
	if n := t.launch.note(); n != "" {
		msg += "; " + n
	}
	t.deliver(&transport.ClosedError{
		Message:    msg,
		ExitCode:   -1,
		Requested:  t.requested.Load(),
		StderrTail: t.stderrTail(),
	})
	killed := t.terminate()
	t.drain()
	t.sweep(killed)
}

// terminate makes the server exit and waits until it is reaped: EOF on
// stdin, grace, SIGTERM to the group, grace, SIGKILL. It reports whether
// SIGKILL was sent.
func (t *Transport) terminate() (killed bool) {
	// EOF on stdin is how MCP asks a stdio server to exit. Closing also
	// ends a flusher waiting on a full pipe: lines still queued for a server
	// that stopped reading are dropped with it.
	t.stdin.Close()
	if exited, k := t.awaitExit(t.cfg.CloseGrace); exited {
		return k
	}
	signalGroup(t.pgid, syscall.SIGTERM)
	if exited, k := t.awaitExit(t.cfg.CloseGrace); exited {
		return k
	}
	t.kill()
	<-t.exited
	return true
}

// awaitExit waits up to d for the child to be reaped. When a Close runs out
// of time meanwhile it kills the group and waits for the reap.
func (t *Transport) awaitExit(d time.Duration) (exited, killed bool) {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-t.exited:
		return true, false
	case <-timer.C:
		return false, false
	case <-t.hurry:
		t.kill()
		<-t.exited
		return true, true
	}
}

// kill ends the server at once. A launched helper is told first, by
// cutting its lifeline: it then kills every process the server started,
// daemons that left the group included, which a SIGKILL to the helper
// would keep it from doing. The group's SIGKILL follows for what is left.
func (t *Transport) kill() {
	if l := t.launch; l != nil && l.Lifeline != nil {
		l.Lifeline.Close()
		l.Lifeline = nil
		timer := time.NewTimer(lifelineWait)
		select {
		case <-t.exited:
		case <-timer.C:
		}
		timer.Stop()
	}
	signalGroup(t.pgid, syscall.SIGKILL)
}

// drain lets the readers consume what is left in the pipes, for at most
// drainWindow, and waits for them to return.
func (t *Transport) drain() {
	deadline := time.Now().Add(drainWindow)
	_ = t.stdout.SetReadDeadline(deadline)
	if t.stderr != nil {
		_ = t.stderr.SetReadDeadline(deadline)
	}
	<-t.readerDone
	<-t.stderrDone
}

// sweep terminates what is left of the process group once the server
// itself has been reaped: grandchildren (an npx wrapper's node, a shell
// script's pipeline) must not outlive the transport. A group whose members
// have all exited answers ESRCH and costs nothing.
func (t *Transport) sweep(killed bool) {
	if !groupAlive(t.pgid) {
		return
	}
	if !killed {
		signalGroup(t.pgid, syscall.SIGTERM)
		if t.awaitGroupGone(t.cfg.CloseGrace) {
			return
		}
	}
	t.kill()
}

// awaitGroupGone polls for up to d for the group to empty; a Close running
// out of time cuts the wait short.
func (t *Transport) awaitGroupGone(d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	tick := time.NewTicker(sweepPoll)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			if !groupAlive(t.pgid) {
				return true
			}
		case <-timer.C:
			return !groupAlive(t.pgid)
		case <-t.hurry:
			return false
		}
	}
}

// deliver calls Closed. Only the supervisor calls it, once.
func (t *Transport) deliver(ce *transport.ClosedError) {
	t.warnMu.Lock()
	t.closedSent = true
	t.warnMu.Unlock()
	t.inClosed.Store(true)
	defer t.inClosed.Store(false)
	t.sink.Closed(ce)
}

func (t *Transport) exitReport() *transport.ClosedError {
	msg, code, sig := exitReport(t.status, t.statusKnown)
	if n := t.launch.note(); n != "" && !t.requested.Load() {
		msg += "; " + n
	}
	return &transport.ClosedError{
		Message:    msg,
		ExitCode:   code,
		Signal:     sig,
		Requested:  t.requested.Load(),
		StderrTail: t.stderrTail(),
	}
}

func (t *Transport) stderrTail() []string {
	if t.errs == nil {
		return nil
	}
	return t.errs.tail()
}

// release closes the parent's pipe ends and marks the transport done. By
// now every other goroutine of this transport has returned.
func (t *Transport) release() {
	for _, f := range []*os.File{t.stdin, t.stdout, t.stderr} {
		if f != nil {
			f.Close()
		}
	}
	t.launch.release()
	close(t.done)
}
