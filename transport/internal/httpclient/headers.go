package httpclient

import (
	"net/http"
	"sort"
	"strings"

	"github.com/lemonmcp/lemonmcp/transport"
)

// reserved are the headers the transports set themselves (or that belong to
// HTTP framing). A configured header may never replace one of them: the
// protocol depends on their values. Every Mcp-* header is reserved too, as
// the protocol's own namespace.
var reserved = map[string]bool{
	"Accept":               true,
	"Content-Type":         true,
	"Content-Length":       true,
	"Content-Encoding":     true,
	"Transfer-Encoding":    true,
	"Connection":           true,
	"Keep-Alive":           true,
	"Proxy-Connection":     true,
	"Upgrade":              true,
	"Te":                   true,
	"Trailer":              true,
	"Host":                 true,
	"User-Agent":           true,
	"Last-Event-Id":        true,
	"Mcp-Session-Id":       true,
	"Mcp-Protocol-Version": true,
}

// Reserved reports whether a header name (in any case) is one the transports
// own.
func Reserved(name string) bool {
	canon := http.CanonicalHeaderKey(name)
	return reserved[canon] || strings.HasPrefix(canon, "Mcp-")
}

// CheckHeaders validates the configured headers and returns them in
// canonical form. Names are compared case-insensitively, so "x-api-key" and
// "X-Api-Key" are the same header (given both, it is an error rather than a
// silent pick). Messages name the header ("headers.X-Api-Key: ...") and
// never its value, which is usually a secret.
func CheckHeaders(cfg map[string]string) (http.Header, *transport.Error) {
	names := make([]string, 0, len(cfg))
	for name := range cfg {
		names = append(names, name)
	}
	sort.Strings(names) // stable errors
	h := make(http.Header, len(cfg))
	for _, name := range names {
		if !validName(name) {
			return nil, transport.Errorf(transport.CodeInvalidArgument, "headers: %q is not a valid header name", name)
		}
		canon := http.CanonicalHeaderKey(name)
		if Reserved(canon) {
			return nil, transport.Errorf(transport.CodeInvalidArgument, "headers.%s: is set by the transport and cannot be configured", name)
		}
		if _, dup := h[canon]; dup {
			return nil, transport.Errorf(transport.CodeInvalidArgument, "headers.%s: is given twice (header names are case-insensitive)", name)
		}
		if !validValue(cfg[name]) {
			return nil, transport.Errorf(transport.CodeInvalidArgument, "headers.%s: the value must not contain line breaks or other control characters", name)
		}
		h[canon] = []string{cfg[name]}
	}
	return h, nil
}

// validName checks an RFC 9110 token.
func validName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// validValue allows visible characters, spaces, tabs and bytes >= 0x80.
func validValue(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 0x20 && c != '\t') || c == 0x7F {
			return false
		}
	}
	return true
}
