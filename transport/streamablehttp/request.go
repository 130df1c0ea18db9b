package streamablehttp

import (
	"bytes"
	"context"
	"io"
	"net/http"

	"github.com/lemonmcp/lemonmcp/transport"
)

// Media types of the Streamable HTTP wire.
const (
	mediaJSON   = "application/json"
	mediaStream = "text/event-stream"
	acceptPOST  = mediaJSON + ", " + mediaStream
)

// newRequest builds a request to the endpoint: the configured headers, then
// the transport's own, which therefore always win, then the message's own
// (2026-07-28: the core's MCP-Protocol-Version, Mcp-Method, Mcp-Name and
// Mcp-Param-*; nil in the legacy era).
func (t *Transport) newRequest(ctx context.Context, method string, body []byte, session, version string, extra []transport.Header) *http.Request {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	// The URL was parsed by New and the method is a constant, so this
	// cannot fail.
	req, _ := http.NewRequestWithContext(ctx, method, t.cfg.rawURL, rd)
	for name, values := range t.cfg.headers {
		req.Header[name] = values // read-only, shared by all requests
	}
	req.Header.Set("User-Agent", t.cfg.UserAgent)
	if session != "" {
		req.Header.Set(HeaderSessionID, session)
	}
	if version != "" {
		req.Header.Set(HeaderProtocolVersion, version)
	}
	switch method {
	case http.MethodPost:
		req.Header.Set("Accept", acceptPOST)
		req.Header.Set("Content-Type", mediaJSON)
	case http.MethodGet:
		req.Header.Set("Accept", mediaStream)
	}
	for _, h := range extra {
		req.Header.Set(h.Name, h.Value)
	}
	return req
}

// newGET builds a GET for the event stream, resuming after lastID when it
// is set.
func (t *Transport) newGET(ctx context.Context, lastID string) (req *http.Request, session string) {
	session, version := t.wireState("")
	req = t.newRequest(ctx, http.MethodGet, nil, session, version, nil)
	if lastID != "" {
		req.Header.Set(HeaderLastEventID, lastID)
	}
	return req, session
}
