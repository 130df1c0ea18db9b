package httpclient

import (
	"net/url"
	"strings"

	"github.com/lemonmcp/lemonmcp/transport"
)

// CheckURL parses the server URL a transport is configured with. It must be
// absolute, http or https, and name a host. Messages start with the field
// name ("url: ...") and never echo the URL, whose query may hold a token.
func CheckURL(raw string) (*url.URL, *transport.Error) {
	if strings.TrimSpace(raw) == "" {
		return nil, transport.Errorf(transport.CodeInvalidArgument, "url: is empty")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, transport.Errorf(transport.CodeInvalidArgument, "url: is not a valid URL")
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		u.Scheme = strings.ToLower(u.Scheme)
	default:
		return nil, transport.Errorf(transport.CodeInvalidArgument, "url: must be an http:// or https:// URL")
	}
	if u.Hostname() == "" {
		return nil, transport.Errorf(transport.CodeInvalidArgument, "url: must name a host")
	}
	u.Fragment, u.RawFragment = "", "" // never sent; dropping it keeps comparisons simple
	return u, nil
}

// SameOrigin reports whether a and b share scheme, host and port (RFC 6454),
// with the scheme's default port filled in.
func SameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) &&
		strings.EqualFold(a.Hostname(), b.Hostname()) &&
		port(a) == port(b)
}

// Origin is scheme://host:port, for messages: it names where a URL points
// without its path or query.
func Origin(u *url.URL) string {
	host := u.Hostname()
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(host) + ":" + port(u)
}

func port(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		return "443"
	case "http":
		return "80"
	}
	return ""
}
