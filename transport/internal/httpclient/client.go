package httpclient

import (
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/lemonmcp/lemonmcp/transport/internal/callerhttp"
)

// maxRedirects bounds a redirect chain, as net/http's default does.
const maxRedirects = 10

// drainBytes is how much of an unwanted body is read before closing it:
// a short body read to the end lets the connection be reused.
const drainBytes = 64 << 10

// NewClient returns the client a transport uses when the host gave none: a
// connection pool of its own (released when the transport closes, with room
// for many concurrent requests to one server), no overall timeout (SSE
// streams are long-lived; the core bounds every call), and redirects
// followed only within the same origin, because configured headers usually
// carry credentials that must not travel to another host.
//
// wrap, when not nil, wraps the connection pool (the OAuth layer does); the
// client's CloseIdleConnections still reaches the pool.
func NewClient(wrap func(http.RoundTripper) http.RoundTripper) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 64
	return &http.Client{Transport: Wrap(callerhttp.New(tr), wrap), CheckRedirect: sameOriginRedirects}
}

// WrapClient returns a copy of a host-given client whose transport is
// wrapped (or c itself when wrap is nil).
func WrapClient(c *http.Client, wrap func(http.RoundTripper) http.RoundTripper) *http.Client {
	if wrap == nil {
		return c
	}
	cp := *c
	base := cp.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	cp.Transport = Wrap(base, wrap)
	return &cp
}

// Wrap applies wrap to base, keeping base's CloseIdleConnections reachable.
func Wrap(base http.RoundTripper, wrap func(http.RoundTripper) http.RoundTripper) http.RoundTripper {
	if wrap == nil {
		return base
	}
	return wrappedTransport{RoundTripper: wrap(base), base: base}
}

type wrappedTransport struct {
	http.RoundTripper
	base http.RoundTripper
}

func (w wrappedTransport) CloseIdleConnections() {
	if ci, ok := w.base.(interface{ CloseIdleConnections() }); ok {
		ci.CloseIdleConnections()
	}
}

func sameOriginRedirects(req *http.Request, via []*http.Request) error {
	if len(via) >= maxRedirects {
		return errors.New("stopped after 10 redirects")
	}
	if !SameOrigin(req.URL, via[0].URL) {
		return errors.New("refused a redirect to another origin")
	}
	return nil
}

// MediaType returns the response's media type in lower case, without
// parameters, or "" when there is none or it is malformed.
func MediaType(h http.Header) string {
	ct := h.Get("Content-Type")
	switch ct {
	case "":
		return ""
	case "application/json", "text/event-stream":
		return ct // the usual replies, without parsing (it allocates)
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return ""
	}
	return strings.ToLower(mt)
}

// Discard reads a little of an unwanted body and closes it.
func Discard(body io.ReadCloser) {
	_, _ = io.Copy(io.Discard, io.LimitReader(body, drainBytes))
	body.Close()
}

// OK reports a 2xx status.
func OK(code int) bool { return code >= 200 && code <= 299 }
