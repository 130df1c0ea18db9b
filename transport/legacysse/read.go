package legacysse

import (
	"errors"
	"fmt"
	"io"

	"github.com/lemonmcp/lemonmcp/transport"
	"github.com/lemonmcp/lemonmcp/transport/internal/httpclient"
	"github.com/lemonmcp/lemonmcp/transport/internal/rpcpeek"
	"github.com/lemonmcp/lemonmcp/transport/sseparse"
)

// read delivers the stream's messages until it ends, then closes the
// transport: the session does not outlive its stream.
func (t *Transport) read(rd *sseparse.Reader, body io.ReadCloser) {
	var reason string
	// A bug while reading costs the connection, not the host process: the
	// transport shuts down as if the stream had broken.
	defer transport.Recover(t.sink, "the SSE reader", func() {
		body.Close()
		t.shutdown("internal error in the SSE reader (a bug: see the log)")
	})
	for {
		ev, err := rd.Next()
		if err == nil {
			switch ev.Type {
			case "message":
				if len(ev.Data) > 0 {
					t.sink.Receive(ev.Data)
				}
			case "endpoint":
				t.log("debug", "ignored a second endpoint event")
			default:
				t.log("debug", "ignored an SSE event of type "+truncate(ev.Type, 64))
			}
			continue
		}
		var tl *sseparse.TooLargeError
		if errors.As(err, &tl) {
			t.oversized(tl)
			continue
		}
		if errors.Is(err, io.EOF) {
			reason = "the server closed the SSE stream"
		} else {
			reason = "the SSE stream broke: " + httpclient.Describe(err)
		}
		break
	}
	body.Close()
	rd.Release()
	t.shutdown(reason)
}

// oversized handles an event over the limit: when its head shows which
// request it answers, that request fails with a clear error, and
// otherwise the event is logged and skipped.
func (t *Transport) oversized(tl *sseparse.TooLargeError) {
	if id, ok := rpcpeek.ResponseID(tl.Head); ok {
		t.sink.RequestFailed(id, transport.Errorf(transport.CodeTransport,
			"the server's response is larger than the limit of %d bytes (limits.max_message_bytes)", tl.Limit))
		return
	}
	t.log("warning", fmt.Sprintf("skipped an SSE event larger than the limit of %d bytes (limits.max_message_bytes)", tl.Limit))
}

// shutdown ends the transport once the stream is over: no new POSTs, the
// ones in flight are cancelled and waited for, and Closed is delivered.
func (t *Transport) shutdown(reason string) {
	t.mu.Lock()
	t.down = true
	requested := t.requested
	t.mu.Unlock()
	t.cancel()
	t.posts.Wait()
	if t.ownClient {
		t.client.CloseIdleConnections()
	}
	if requested {
		reason = "the client closed the connection"
	}
	t.sink.Closed(&transport.ClosedError{Message: reason, ExitCode: -1, Requested: requested})
	close(t.done)
}
