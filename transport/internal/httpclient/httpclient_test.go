package httpclient

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCheckURL(t *testing.T) {
	tests := []struct {
		in, err, out string
	}{
		{in: "http://h/mcp", out: "http://h/mcp"},
		{in: "HTTPS://H:8443/mcp?x=1#frag", out: "https://H:8443/mcp?x=1"},
		{in: "", err: "url: is empty"},
		{in: "h/mcp", err: "url: must be an http:// or https:// URL"},
		{in: "file:///etc/passwd", err: "url: must be an http:// or https:// URL"},
		{in: "http://:80/", err: "url: must name a host"},
		{in: "http://h/%zz?token=secret", err: "url: is not a valid URL"},
	}
	for _, tt := range tests {
		u, err := CheckURL(tt.in)
		if tt.err != "" {
			require.Error(t, err, tt.in)
			require.Equal(t, tt.err, err.Message)
			continue
		}
		require.Nil(t, err, tt.in)
		require.Equal(t, tt.out, u.String())
	}
}

func TestSameOrigin(t *testing.T) {
	base, _ := url.Parse("http://example.com/sse")
	for in, same := range map[string]bool{
		"http://example.com/m":      true,
		"http://EXAMPLE.com:80/m":   true,
		"https://example.com/m":     false,
		"http://example.com:8080/m": false,
		"http://other.com/m":        false,
	} {
		u, _ := url.Parse(in)
		require.Equal(t, same, SameOrigin(base, u), in)
	}
	v6, _ := url.Parse("https://[::1]/x")
	require.Equal(t, "https://[::1]:443", Origin(v6))
}

func TestDescribe(t *testing.T) {
	wrap := func(err error) error { return &url.Error{Op: "Post", URL: "http://h/?token=secret", Err: err} }
	tests := []struct {
		err  error
		want string
	}{
		{wrap(&net.OpError{Op: "dial", Err: &osSyscallError{syscall.ECONNREFUSED}}), "connection refused"},
		{wrap(syscall.ECONNRESET), "the connection was reset"},
		{wrap(io.ErrUnexpectedEOF), "the server closed the connection"},
		{wrap(context.DeadlineExceeded), "timed out"},
		{wrap(&net.DNSError{Err: "no such host", Name: "h", IsNotFound: true}), "cannot resolve the server's host name"},
		{wrap(errors.New("refused a redirect to another origin")), "refused a redirect to another origin"},
	}
	for _, tt := range tests {
		got := Describe(tt.err)
		require.Equal(t, tt.want, got)
		require.NotContains(t, got, "secret")
	}
}

type osSyscallError struct{ errno syscall.Errno }

func (e *osSyscallError) Error() string { return "connect: " + e.errno.Error() }
func (e *osSyscallError) Unwrap() error { return e.errno }

func TestStatusError(t *testing.T) {
	resp := func(code int, ctype, body string) *http.Response {
		h := http.Header{}
		if ctype != "" {
			h.Set("Content-Type", ctype)
		}
		return &http.Response{StatusCode: code, Header: h, Body: io.NopCloser(strings.NewReader(body))}
	}
	require.Equal(t, "HTTP 599", Status(599))
	require.Equal(t, "HTTP 418 I'm a teapot: short and stout", StatusError(resp(418, "text/plain; charset=utf-8", "short and stout\n")).Message)
	require.Equal(t, "HTTP 400 Bad Request: bad id", StatusError(resp(400, "", `{"error":{"message":"bad id"}}`)).Message)
	require.Equal(t, "HTTP 400 Bad Request", StatusError(resp(400, "application/octet-stream", "\x00\x01")).Message)
	long := StatusError(resp(500, "text/plain", strings.Repeat("é", 300))).Message
	require.LessOrEqual(t, len(long), len("HTTP 500 Internal Server Error: ")+excerptBytes+len("…"))
	require.True(t, strings.HasSuffix(long, "…"))
	require.Equal(t, "HTTP 500 Internal Server Error: a b", StatusError(resp(500, "text/plain", "a\x1bb")).Message)
}

// A server that echoes the request's headers in its error body must not
// get a secret header value into the message.
func TestStatusErrorScrubsEchoedHeaders(t *testing.T) {
	req, _ := http.NewRequest("POST", "http://h/mcp", nil)
	req.Header.Set("Authorization", "Bearer sk-live-0123456789abcdef")
	req.Header.Set("X-Api-Key", "k3y!")
	req.Header.Set("Mcp-Session-Id", "sess-42424242")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for _, tc := range []struct {
		name, ctype, body string
	}{
		{"plain text echo", "text/plain", "bad request; you sent Authorization: Bearer sk-live-0123456789abcdef, X-Api-Key: k3y!, session sess-42424242"},
		{"token alone", "text/plain", "token sk-live-0123456789abcdef is revoked"},
		{"json error echo", "application/json", `{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"headers: Bearer sk-live-0123456789abcdef k3y!"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := &http.Response{StatusCode: 400, Header: http.Header{"Content-Type": {tc.ctype}},
				Body: io.NopCloser(strings.NewReader(tc.body)), Request: req}
			e := StatusError(resp)
			for _, secret := range []string{"sk-live", "0123456789abcdef", "k3y!", "sess-42424242"} {
				require.NotContains(t, e.Message, secret)
			}
			require.Contains(t, e.Message, "[redacted]")
		})
	}
	obj := Secrets(req).ScrubJSON([]byte(`{"code":-32022,"message":"echo Bearer sk-live-0123456789abcdef","data":{"h":"k3y!"}}`))
	require.NotContains(t, string(obj), "0123456789abcdef")
	require.NotContains(t, string(obj), "k3y!")
	require.Contains(t, string(obj), `"code":-32022`)
}
