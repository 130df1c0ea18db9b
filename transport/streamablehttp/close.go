package streamablehttp

import (
	"context"
	"net/http"

	"github.com/lemonmcp/lemonmcp/transport"
	"github.com/lemonmcp/lemonmcp/transport/internal/httpclient"
)

// Close ends the session: every request and stream is cancelled, the
// server gets a DELETE with the session id (bounded by DeleteTimeout and
// ctx; 405 and 404 are fine, other failures are logged), and Closed is
// delivered once every goroutine has returned. Pending requests are not
// reported one by one: Closed tells the core they are all gone. Close is
// idempotent; it must not be called from inside a Sink callback.
func (t *Transport) Close(ctx context.Context) error {
	t.mu.Lock()
	switch {
	case t.state != stateStarted:
		t.state = stateClosed
		t.mu.Unlock()
		return nil
	case t.closing.Load():
		t.mu.Unlock()
		select {
		case <-t.done:
			return nil
		case <-ctx.Done():
			return transport.Errorf(transport.CodeTimeout, "close timed out")
		}
	}
	t.closing.Store(true)
	session, version := t.session, t.version
	t.mu.Unlock()

	t.cancel()
	if session != "" {
		t.deleteSession(ctx, session, version)
	}
	t.wg.Wait()
	if t.ownClient {
		t.client.CloseIdleConnections()
	}
	t.sink.Closed(&transport.ClosedError{Message: "the client closed the connection", ExitCode: -1, Requested: true})
	close(t.done)
	return nil
}

// deleteSession tells the server the session is over. It is a courtesy
// the specification asks for (SHOULD), so it never holds Close up for long.
func (t *Transport) deleteSession(ctx context.Context, session, version string) {
	ctx, cancel := context.WithTimeout(ctx, t.cfg.DeleteTimeout)
	defer cancel()
	resp, err := t.client.Do(t.newRequest(ctx, http.MethodDelete, nil, session, version, nil))
	if err != nil {
		t.log("debug", "ending the session failed: "+httpclient.Describe(err))
		return
	}
	defer httpclient.Discard(resp.Body)
	switch code := resp.StatusCode; {
	case httpclient.OK(code), code == http.StatusMethodNotAllowed, code == http.StatusNotFound:
	default:
		t.log("warning", "the server did not end the session: "+httpclient.Status(code))
	}
}
