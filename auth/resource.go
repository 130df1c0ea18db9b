package auth

import (
	"errors"
	"net"
	"net/url"
	"strings"
)

// canonicalResource is the MCP server's canonical URI (MCP authorization
// §Canonical Server URI): lowercase scheme and host, no fragment, no
// trailing slash unless the path is just "/". The query is kept: it can be
// part of what identifies the server.
func canonicalResource(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", errors.New("not a URL")
	}
	if u.Scheme == "" || u.Host == "" {
		return "", errors.New("not an absolute URL")
	}
	u.Scheme = strings.ToLower(u.Scheme)
	u.Host = strings.ToLower(u.Host)
	u.Fragment, u.RawFragment = "", ""
	u.User = nil
	if u.Path != "/" {
		u.Path = strings.TrimSuffix(u.Path, "/")
		u.RawPath = strings.TrimSuffix(u.RawPath, "/")
	}
	return u.String(), nil
}

// resourceCovers reports whether a PRM "resource" identifies the MCP server
// at canonical URI mcp: the same URI, or a parent of it on a path-segment
// boundary (a root PRM describes the whole origin, RFC 9728 §3.1). The
// origin must match exactly: a PRM for another host is an attack
// (conformance auth/resource-mismatch).
func resourceCovers(prmResource, mcp string) bool {
	pr, err := canonicalResource(prmResource)
	if err != nil {
		return false
	}
	if pr == mcp {
		return true
	}
	pu, err1 := url.Parse(pr)
	mu, err2 := url.Parse(mcp)
	if err1 != nil || err2 != nil || pu.Scheme != mu.Scheme || pu.Host != mu.Host || pu.RawQuery != "" {
		return false
	}
	pp := strings.TrimSuffix(pu.Path, "/")
	return pp == "" || strings.HasPrefix(mu.Path, pp+"/")
}

// isLoopbackHost reports localhost, 127.0.0.0/8 and ::1.
func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// checkAuthURL enforces the URL policy of every authorization URL the
// library fetches or hands to the host: absolute https, or http on a
// loopback host (or anywhere with AllowInsecureHTTP). Any other scheme —
// javascript:, data:, file:, vbscript: — is refused.
func checkAuthURL(raw string, allowInsecure bool) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, errors.New("is not a valid URL")
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
	case "http":
		if !allowInsecure && !isLoopbackHost(u.Hostname()) {
			return nil, errors.New("must use https (http is allowed only on loopback hosts)")
		}
	default:
		return nil, errors.New("must be an https URL")
	}
	if u.Host == "" {
		return nil, errors.New("has no host")
	}
	if u.User != nil {
		return nil, errors.New("must not carry user information")
	}
	return u, nil
}

// safeURL is a URL for messages and metadata: scheme, host and path only,
// never the query (which may carry a code or state) or user information.
func safeURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "(invalid URL)"
	}
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
}

// sameOrigin compares scheme and host:port.
func sameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Host, b.Host)
}

// origin is scheme://host of u.
func origin(u *url.URL) string {
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Host)
}
