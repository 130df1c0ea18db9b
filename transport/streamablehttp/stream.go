package streamablehttp

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/lemonmcp/lemonmcp/transport"
	"github.com/lemonmcp/lemonmcp/transport/internal/rpcpeek"
	"github.com/lemonmcp/lemonmcp/transport/sseparse"
)

// streamEnd is how one SSE connection ended and what it left to resume
// from.
type streamEnd struct {
	events   int    // events read, priming ones included: the stream was alive
	lastID   string // the last event id, "" when the server sent none
	retry    time.Duration
	hasRetry bool
	tooLarge bool  // an event over the limit was skipped
	err      error // nil when the server ended the stream
}

// readStream delivers the messages of one SSE connection until it ends.
// owner is the request the stream answers (nil for the GET stream); once
// its response has arrived the stream may run for t.grace (responseGrace) more.
func (t *Transport) readStream(body io.Reader, owner *pending) streamEnd {
	rd := sseparse.NewReader(body, t.cfg.MaxMessageBytes)
	defer rd.Release()
	var end streamEnd
	graceStarted := false
	for {
		ev, err := rd.Next()
		if err == nil {
			end.events++
			switch {
			case ev.Type != "message":
				t.log("debug", fmt.Sprintf("ignored an SSE event of type %q", truncate(ev.Type, 64)))
			case len(ev.Data) > 0: // empty data is a priming event
				t.deliver(ev.Data, owner)
			}
			if owner != nil && !graceStarted && t.settled(owner) {
				graceStarted = true
				timer := time.AfterFunc(t.grace, owner.cancel)
				defer timer.Stop()
			}
			continue
		}
		var tl *sseparse.TooLargeError
		if errors.As(err, &tl) {
			end.events++
			end.tooLarge = true
			t.oversized(tl)
			continue
		}
		end.lastID = rd.LastEventID()
		end.retry, end.hasRetry = rd.Retry()
		if !errors.Is(err, io.EOF) {
			end.err = err
		}
		return end
	}
}

// oversized handles an event over the limit. When its head shows which
// request it answers, that request fails with a clear error; otherwise
// (a notification, or a response whose id comes late) it is logged.
func (t *Transport) oversized(tl *sseparse.TooLargeError) {
	if id, ok := rpcpeek.ResponseID(tl.Head); ok {
		if p := t.settle(id); p != nil {
			p.cancel()
		}
		t.sink.RequestFailed(id, tooLargeError(tl.Limit))
		return
	}
	t.log("warning", fmt.Sprintf("skipped an SSE event larger than the limit of %d bytes (limits.max_message_bytes)", tl.Limit))
}

func tooLargeError(limit int) *transport.Error {
	return transport.Errorf(transport.CodeTransport,
		"the server's response is larger than the limit of %d bytes (limits.max_message_bytes)", limit)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}
