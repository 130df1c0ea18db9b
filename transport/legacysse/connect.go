package legacysse

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/lemonmcp/lemonmcp/transport"
	"github.com/lemonmcp/lemonmcp/transport/internal/httpclient"
	"github.com/lemonmcp/lemonmcp/transport/sseparse"
)

// Start opens the SSE stream and waits for the endpoint event, for at most
// EndpointTimeout and as long as ctx allows. On success the stream is read
// in the background until it ends or Close is called; ctx does not bound
// it.
func (t *Transport) Start(ctx context.Context, sink transport.Sink) error {
	if sink == nil {
		return transport.Errorf(transport.CodeInvalidArgument, "sink is nil")
	}
	if err := ctx.Err(); err != nil {
		return transport.Errorf(transport.CodeTimeout, "start cancelled")
	}
	t.mu.Lock()
	switch t.state {
	case stateStarting, stateStarted:
		t.mu.Unlock()
		return transport.Errorf(transport.CodeInvalidArgument, "transport already started")
	case stateClosed:
		t.mu.Unlock()
		return transport.Errorf(transport.CodeClosed, "transport is closed")
	}
	t.sink = sink
	t.ctx, t.cancel = context.WithCancel(context.Background())
	t.runners.Start(t.postRequest, t.ctx.Done(), &t.posts)
	t.state = stateStarting
	t.mu.Unlock()

	var expired atomic.Bool
	timer := time.AfterFunc(t.cfg.EndpointTimeout, func() { expired.Store(true); t.cancel() })
	stopCtx := context.AfterFunc(ctx, t.cancel)
	endpoint, rd, body, err := t.connect()
	timer.Stop()
	stopCtx()

	t.mu.Lock()
	closed := t.state == stateClosed // Close ran meanwhile
	if err == nil && (closed || t.ctx.Err() != nil) {
		body.Close()
		err = transport.Errorf(transport.CodeClosed, "transport is closed")
	}
	if err != nil {
		t.state = stateClosed
		t.mu.Unlock()
		t.cancel()
		if t.ownClient {
			t.client.CloseIdleConnections()
		}
		close(t.done)
		switch {
		case expired.Load():
			return transport.Errorf(transport.CodeTimeout, "the server did not send the endpoint event within %d ms", t.cfg.EndpointTimeout.Milliseconds())
		case closed:
			return transport.Errorf(transport.CodeClosed, "transport is closed")
		case ctx.Err() != nil:
			return transport.Errorf(transport.CodeTimeout, "start ended before the server sent the endpoint event")
		}
		return err
	}
	t.endpoint = endpoint
	t.state = stateStarted
	t.mu.Unlock()
	go t.read(rd, body)
	return nil
}

// connect makes the GET and reads up to the endpoint event.
func (t *Transport) connect() (endpoint string, rd *sseparse.Reader, body io.ReadCloser, err error) {
	req := t.newRequest(t.ctx, http.MethodGet, t.cfg.url.String(), nil)
	req.Header.Set("Accept", "text/event-stream")
	resp, derr := t.client.Do(req)
	if derr != nil {
		return "", nil, nil, httpclient.RequestError(derr, "connecting to the server")
	}
	if !httpclient.OK(resp.StatusCode) {
		return "", nil, nil, httpclient.StatusError(resp)
	}
	if mt := httpclient.MediaType(resp.Header); mt != "text/event-stream" {
		httpclient.Discard(resp.Body)
		return "", nil, nil, transport.Errorf(transport.CodeTransport, "the server answered with content type %q, not an SSE stream", truncate(mt, 64))
	}
	rd = sseparse.NewReader(resp.Body, t.cfg.MaxMessageBytes)
	for {
		ev, nerr := rd.Next()
		var tl *sseparse.TooLargeError
		switch {
		case errors.As(nerr, &tl):
			t.log("warning", "skipped an SSE event over the size limit before the endpoint event")
			continue
		case errors.Is(nerr, io.EOF):
			resp.Body.Close()
			rd.Release()
			return "", nil, nil, transport.Errorf(transport.CodeTransport, "the server closed the SSE stream before sending the endpoint event")
		case nerr != nil:
			resp.Body.Close()
			rd.Release()
			return "", nil, nil, transport.Errorf(transport.CodeTransport, "the SSE stream broke before the endpoint event: %s", httpclient.Describe(nerr))
		}
		switch ev.Type {
		case "endpoint":
			endpoint, err := t.resolveEndpoint(string(ev.Data))
			if err != nil {
				resp.Body.Close()
				rd.Release()
				return "", nil, nil, err
			}
			return endpoint, rd, resp.Body, nil
		case "message":
			if len(ev.Data) > 0 {
				t.log("warning", "ignored a message that arrived before the endpoint event")
			}
		default:
			t.log("debug", "ignored an SSE event of type "+truncate(ev.Type, 64)+" before the endpoint event")
		}
	}
}

// resolveEndpoint resolves the endpoint event's URI against the stream URL
// (RFC 3986) and refuses another origin.
func (t *Transport) resolveEndpoint(data string) (string, *transport.Error) {
	data = strings.TrimSpace(data)
	if data == "" {
		return "", transport.Errorf(transport.CodeTransport, "the server's endpoint event is empty")
	}
	u, err := t.cfg.url.Parse(data)
	if err != nil {
		return "", transport.Errorf(transport.CodeTransport, "the server's endpoint event does not hold a valid URI")
	}
	if !httpclient.SameOrigin(u, t.cfg.url) {
		return "", transport.Errorf(transport.CodeTransport,
			"the server's endpoint event names another origin (%s, not %s); refusing to send messages there",
			httpclient.Origin(u), httpclient.Origin(t.cfg.url))
	}
	u.Fragment, u.RawFragment = "", ""
	return u.String(), nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}
