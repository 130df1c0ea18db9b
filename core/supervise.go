package core

import (
	"context"
	"time"

	"github.com/lemonmcp/lemonmcp/internal/jsonx"
	"github.com/lemonmcp/lemonmcp/transport"
	"github.com/lemonmcp/lemonmcp/transport/respawn"
)

// RestartPolicy says how a supervised client brings its server back after
// the connection was lost (a stdio server exited or crashed, an HTTP
// connection or session was lost, a handshake failed).
type RestartPolicy struct {
	// MaxRestarts within Window; one more loss closes the client for good.
	MaxRestarts int
	// Backoff is the delay before the first restart; each further restart
	// within Window doubles it, up to MaxBackoff.
	Backoff    time.Duration
	MaxBackoff time.Duration
	Window     time.Duration
}

// DefaultRestartPolicy is the policy of a host's servers (a bare client has
// none unless configured).
func DefaultRestartPolicy() RestartPolicy {
	return RestartPolicy{MaxRestarts: 5, Backoff: 500 * time.Millisecond, MaxBackoff: 30 * time.Second, Window: time.Minute}
}

// delay is the backoff before restart number n (1-based) within the window.
func (p RestartPolicy) delay(n int) time.Duration {
	d := p.Backoff
	for i := 1; i < n && d < p.MaxBackoff; i++ {
		d *= 2
	}
	if p.MaxBackoff > 0 && d > p.MaxBackoff {
		d = p.MaxBackoff
	}
	return d
}

// supervisor is the restart state of a supervised client. Its fields are
// guarded by the client's mu.
type supervisor struct {
	policy     RestartPolicy
	live       *respawn.Transport
	recent     []time.Time // restarts within the window
	restarts   int         // restarts over the client's life
	restarting bool        // between a loss and the next ready
	retiring   *Error      // the current generation is being closed to restart, for this reason
	timer      *time.Timer // the pending respawn
}

// Restarts reports how many times the client restarted its server.
func (c *Client) Restarts() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sup == nil {
		return 0
	}
	return c.sup.restarts
}

// Restarting reports whether the client is between a lost connection and
// the next ready.
func (c *Client) Restarting() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sup != nil && c.sup.restarting
}

// LastError is why the client last failed, closed or restarted (nil when
// nothing went wrong).
func (c *Client) LastError() *Error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stateErr
}

// supervisedLocked reports whether a loss of the connection now restarts
// the server rather than closing the client.
func (c *Client) supervisedLocked() bool {
	return c.sup != nil && !c.freed && (c.state == StateConnecting || c.state == StateReady)
}

// restartOnClose takes the transport's Closed when the client is
// supervised: unless the close was asked for by Close or Free, the server
// is restarted. It reports false when Closed must close the client.
func (c *Client) restartOnClose(cerr *transport.ClosedError) bool {
	c.mu.Lock()
	if !c.supervisedLocked() || (cerr.Requested && c.sup.retiring == nil) {
		c.mu.Unlock()
		return false
	}
	reason := Errorf(StatusClosed, "%s", cerr.Message)
	if c.sup.retiring != nil {
		// Closed to restart after a failed handshake: the server often
		// failed it by exiting, so its exit status and stderr still say
		// why, and a handshake that failed only because the connection
		// went away ("closed its stdin") says less than the exit does.
		if c.sup.retiring.Status != StatusClosed {
			reason = c.sup.retiring
		}
		lost := *cerr
		lost.Requested = false
		cerr = &lost
	}
	c.sup.retiring = nil
	c.restartLocked(reason, cerr)
	return true
}

// restartLocked fails the calls in flight (never replayed: a tool call may
// not be idempotent), keeps the calls waiting for readiness, and schedules
// the respawn; or, past the policy's budget, closes the client for good.
// It unlocks c.mu.
func (c *Client) restartLocked(reason *Error, cerr *transport.ClosedError) {
	s := c.sup
	c.endSessionLocked(reason)
	failed := c.takeInFlightLocked()
	hosts := c.takeAppRequestsLocked()
	c.endServedTasksLocked()
	now := time.Now()
	kept := s.recent[:0]
	for _, t := range s.recent {
		if s.policy.Window <= 0 || now.Sub(t) < s.policy.Window {
			kept = append(kept, t)
		}
	}
	s.recent = kept
	c.stateErr = reason
	if len(s.recent) >= s.policy.MaxRestarts {
		c.giveUpLocked(&Error{Status: StatusClosed, Message: reason.Message + " (gave up after " + itoa(int64(s.policy.MaxRestarts)) + " restarts within " + formatMS(s.policy.Window) + ")"}, failed, hosts, cerr)
		return
	}
	s.recent = append(s.recent, now)
	s.restarts++
	attempt, restarts := len(s.recent), s.restarts
	delay := s.policy.delay(attempt)
	if c.state == StateReady {
		c.state = StateConnecting
		c.ready = make(chan struct{})
	}
	c.reinit = false
	s.restarting = true
	s.timer = time.AfterFunc(delay, c.respawn)
	c.mu.Unlock()

	c.dropAppRequests(hosts)
	c.failCalls(failed, &Error{Status: StatusClosed, Message: "the connection was lost: " + reason.Message + " (the server is restarting; the call was not retried)"})
	ev := struct {
		Attempt  int    `json:"attempt"`
		Restarts int    `json:"restarts"`
		DelayMS  int64  `json:"delay_ms"`
		Reason   string `json:"reason"`
		ExitCode *int   `json:"exit_code,omitempty"`
		Signal   string `json:"signal,omitempty"`
		// StderrTail: the lost server's last stderr lines (scrubbed), so
		// that a host can tell why it keeps failing.
		StderrTail []string `json:"stderr_tail,omitempty"`
		// Sandbox: what confined the lost server (its start's report).
		Sandbox any `json:"sandbox,omitempty"`
	}{Attempt: attempt, Restarts: restarts, DelayMS: delay.Milliseconds(), Reason: reason.Message, Sandbox: c.SandboxReport()}
	if cerr != nil {
		ev.Signal, ev.StderrTail = cerr.Signal, cerr.StderrTail
		if cerr.ExitCode >= 0 && !cerr.Requested {
			code := cerr.ExitCode
			ev.ExitCode = &code
		}
	}
	c.emit("restarting", jsonx.MustMarshal(ev), false)
	if c.telemetryOn() {
		// c.mu was released above.
		c.recordLifecycle(RecordRestart, &Error{Status: StatusClosed, Message: reason.Message}, false)
	}
}

// giveUpLocked closes the client for good with final (too many restarts,
// or a start that cannot succeed). It unlocks c.mu.
func (c *Client) giveUpLocked(final *Error, failed []*call, hosts []*appRequest, cerr *transport.ClosedError) {
	s := c.sup
	if c.state == StateConnecting {
		close(c.ready)
	}
	c.state, c.stateErr = StateClosed, final
	s.restarting = false
	failed = append(failed, c.takeQueuedLocked()...)
	select {
	case <-c.trClosed:
	default:
		close(c.trClosed)
	}
	c.mu.Unlock()
	c.dropAppRequests(hosts)
	c.failCalls(failed, final)
	if cerr == nil {
		cerr = &transport.ClosedError{Message: final.Message, ExitCode: -1}
	}
	c.emitClosed(&transport.ClosedError{Message: final.Message, ExitCode: cerr.ExitCode, Signal: cerr.Signal, StderrTail: cerr.StderrTail})
}

// takeInFlightLocked removes the calls that were sent to the lost server;
// the calls queued for readiness stay. Handshake requests are retired
// silently: the restart replaces the handshake.
func (c *Client) takeInFlightLocked() []*call {
	queued := make(map[*call]bool, len(c.queued))
	for _, cl := range c.queued {
		queued[cl] = true
	}
	out := make([]*call, 0, len(c.calls))
	for _, cl := range c.calls {
		if queued[cl] {
			continue
		}
		if _, ok := c.retireLocked(cl); ok && cl.internal == nil {
			out = append(out, cl)
		}
	}
	clear(c.pending)
	c.forgetListensLocked()
	return out
}

func (c *Client) dropAppRequests(hosts []*appRequest) {
	for _, h := range hosts {
		h.timer.Stop()
		if h.onDrop != nil {
			h.onDrop()
		}
	}
}

// respawn starts the next generation of the transport and its handshake.
func (c *Client) respawn() {
	c.mu.Lock()
	if !c.supervisedLocked() || !c.sup.restarting {
		c.mu.Unlock()
		return
	}
	live := c.sup.live
	c.mu.Unlock()
	if err := live.Next(); err != nil {
		c.mu.Lock()
		if !c.supervisedLocked() {
			c.mu.Unlock()
			return
		}
		if permanentStart(err) {
			c.failForGoodLocked(notRetried(err))
			return
		}
		c.restartLocked(AsError(err), nil)
		return
	}
	c.startEra()
}

// retireGeneration closes the current transport so that the server is
// restarted (a failed handshake of a supervised client). It reports false
// when the client is not supervised now.
func (c *Client) retireGeneration(reason *Error) bool {
	c.mu.Lock()
	if !c.supervisedLocked() || c.state != StateConnecting {
		c.mu.Unlock()
		return false
	}
	c.sup.retiring = reason
	live := c.sup.live
	c.mu.Unlock()
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*c.opts.Timeouts.CloseGrace+time.Second)
		defer cancel()
		live.CloseCurrent(ctx)
	}()
	return true
}

// waitsForRestartLocked reports whether a call made now waits for the
// restarted server rather than failing.
func (c *Client) waitsForRestartLocked() bool {
	return c.sup != nil && c.sup.restarting && c.state == StateConnecting
}

// queueForRestartLocked queues a call until the server is ready again,
// bounded by the ready timeout.
func (c *Client) queueForRestartLocked(cl *call) {
	c.calls[cl.id] = cl
	livePending.Add(1)
	c.queued = append(c.queued, cl)
	c.startTimerLocked(cl)
	ready := c.opts.Timeouts.Ready
	time.AfterFunc(ready, func() {
		c.mu.Lock()
		waiting := !cl.finished && cl.reqID == 0 && c.sup.restarting
		c.mu.Unlock()
		if waiting {
			c.finish(cl, Errorf(StatusTimeout, "the server was not ready again within %s (it is restarting)", formatMS(ready)), nil)
		}
	})
}
