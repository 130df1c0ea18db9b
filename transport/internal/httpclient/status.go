package httpclient

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/lemonmcp/lemonmcp/transport"
)

const (
	// excerptReadBytes is all of an error body that is ever read: bodies
	// of unknown size never reach memory whole.
	excerptReadBytes = 4 << 10
	// excerptBytes bounds the excerpt placed in a message.
	excerptBytes = 200
)

// Status names a status the way messages show it: "HTTP 404 Not Found".
func Status(code int) string {
	s := "HTTP " + strconv.Itoa(code)
	if text := http.StatusText(code); text != "" {
		s += " " + text
	}
	return s
}

// StatusError turns an error response into a transport error: 401 and 403
// are CodeAuthRequired, anything else CodeTransport. The message is the
// status plus, when the body says why, a short excerpt: the message of a
// JSON-RPC error, or the first line of a plain-text body, with every
// header value the request carried that may be secret scrubbed out (a
// server that echoes the request's headers must not put the host's
// Authorization into an error message). The body is consumed and closed.
func StatusError(resp *http.Response) *transport.Error {
	excerpt := Excerpt(resp)
	status := Status(resp.StatusCode)
	with := func(s string) string {
		if excerpt != "" {
			return s + ": " + excerpt
		}
		return s
	}
	switch resp.StatusCode {
	case http.StatusUnauthorized:
		return transport.Errorf(transport.CodeAuthRequired, "%s", with("the server requires authorization ("+status+")"))
	case http.StatusForbidden:
		return transport.Errorf(transport.CodeAuthRequired, "%s", with("the server refused access ("+status+")"))
	}
	return transport.Errorf(transport.CodeTransport, "%s", with(status))
}

// Excerpt reads at most a few KB of an error body and returns what it says,
// sanitized and short, or "" (HTML pages and binary bodies say nothing
// useful). The body is closed.
func Excerpt(resp *http.Response) string {
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, excerptReadBytes))
	mt := MediaType(resp.Header)
	var text string
	switch {
	case mt == "application/json" || (mt == "" && len(raw) > 0 && raw[0] == '{'):
		var body struct {
			Error *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(raw, &body) == nil && body.Error != nil {
			text = body.Error.Message
		}
	case mt == "text/plain" || mt == "":
		text = string(raw)
		if i := strings.IndexAny(text, "\r\n"); i >= 0 {
			text = text[:i]
		}
	}
	// Scrubbed before it is cut, so that no part of a secret survives.
	return sanitize(Secrets(resp.Request).Scrub(text), excerptBytes)
}

// sanitize makes server text fit for a message: valid UTF-8, control
// characters turned into spaces, trimmed, and cut at max bytes.
func sanitize(s string, max int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7F {
			return ' '
		}
		return r
	}, s)
	s = strings.TrimSpace(s)
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
