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

// Header values every request shares, read-only: net/http never writes to
// a request's header values, and building each []string per request (as
// Header.Set does, canonicalizing the name too) is a measurable part of a
// call's cost.
var (
	keyUserAgent   = http.CanonicalHeaderKey("User-Agent")
	keyAccept      = http.CanonicalHeaderKey("Accept")
	keyContentType = http.CanonicalHeaderKey("Content-Type")
	keySessionID   = http.CanonicalHeaderKey(HeaderSessionID)
	keyVersion     = http.CanonicalHeaderKey(HeaderProtocolVersion)

	acceptPOSTValue  = []string{acceptPOST}
	acceptGETValue   = []string{mediaStream}
	contentTypeValue = []string{mediaJSON}
)

// wireValues holds the header values of one session id and protocol
// version, built when they change rather than on every request.
type wireValues struct {
	session, version   string
	sessionV, versionV []string
}

func (t *Transport) wireValuesFor(session, version string) *wireValues {
	if w := t.wire.Load(); w != nil && w.session == session && w.version == version {
		return w
	}
	w := &wireValues{session: session, version: version}
	if session != "" {
		w.sessionV = []string{session}
	}
	if version != "" {
		w.versionV = []string{version}
	}
	t.wire.Store(w)
	return w
}

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
	h := req.Header
	for name, values := range t.cfg.headers {
		h[name] = values // read-only, shared by all requests
	}
	h[keyUserAgent] = t.cfg.userAgentV
	w := t.wireValuesFor(session, version)
	if w.sessionV != nil {
		h[keySessionID] = w.sessionV
	}
	if w.versionV != nil {
		h[keyVersion] = w.versionV
	}
	switch method {
	case http.MethodPost:
		h[keyAccept] = acceptPOSTValue
		h[keyContentType] = contentTypeValue
	case http.MethodGet:
		h[keyAccept] = acceptGETValue
	}
	for _, e := range extra {
		h.Set(e.Name, e.Value)
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
