package httpclient

import (
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"
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
func NewClient() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 64
	return &http.Client{Transport: tr, CheckRedirect: sameOriginRedirects}
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
	if ct == "" {
		return ""
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
