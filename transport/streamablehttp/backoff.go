package streamablehttp

import (
	"context"
	"time"
)

const (
	// backoffFactor grows the reconnect delay after each failed attempt.
	backoffFactor = 1.5
	// minRetryDelay and maxRetryDelay clamp a server's retry field: the
	// delay is the server's to choose (SEP-1699), but a retry of 0 on a
	// stream that closes at once must not become a busy loop, and an
	// absurd one must not park a stream for days.
	minRetryDelay = 50 * time.Millisecond
	maxRetryDelay = 5 * time.Minute
)

// backoff is the reconnect schedule of one stream.
type backoff struct {
	first, cap time.Duration
	next       time.Duration
	failures   int // consecutive attempts that brought no event
	limit      int
}

func (t *Transport) newBackoff() *backoff {
	return &backoff{first: t.cfg.ReconnectDelay, cap: t.cfg.MaxReconnectDelay, next: t.cfg.ReconnectDelay, limit: t.cfg.MaxReconnectAttempts}
}

// alive records that a connection brought events: the schedule restarts.
func (b *backoff) alive() {
	b.failures = 0
	b.next = b.first
}

// delay returns how long to wait before the next attempt, and false when
// the attempts are used up. A server's retry value, when there is one, is
// the delay after a stream the server ended; after a failed connection the
// growing backoff applies too, so a server that is down is not hammered at
// its polling rate.
func (b *backoff) delay(retry time.Duration, hasRetry, failed bool) (time.Duration, bool) {
	b.failures++
	if b.failures > b.limit {
		return 0, false
	}
	d := b.next
	b.next = min(time.Duration(float64(b.next)*backoffFactor), b.cap)
	if hasRetry {
		r := min(max(retry, minRetryDelay), maxRetryDelay)
		if failed {
			r = max(r, d)
		}
		d = r
	}
	return d, true
}

// sleep waits d unless ctx ends first; it reports whether the full delay
// passed.
func sleep(ctx context.Context, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}
