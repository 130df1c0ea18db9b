package config

import (
	"strings"
	"testing"

	"github.com/lemonmcp/lemonmcp/core"
	"github.com/stretchr/testify/require"
)

func TestParseHTTPTransports(t *testing.T) {
	cases := []struct {
		name, in, want string
	}{
		{"streamable http", `{"type":"streamable_http","url":"http://127.0.0.1:8080/mcp"}`, "streamable_http"},
		{"legacy sse", `{"type":"sse","url":"https://example.com/sse","headers":{"Authorization":"Bearer t"}}`, "sse"},
		{"detected, before detection", `{"type":"http","url":"http://localhost/mcp","headers":{"x-api-key":"k"}}`, "streamable_http"},
		{"upper-case scheme", `{"type":"streamable_http","url":"HTTPS://example.com/mcp"}`, "streamable_http"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Parse([]byte(`{"transport":`+tc.in+`}`), "1.2.3")
			require.Nil(t, errOrNil(err))
			require.Equal(t, tc.want, p.Transport.Name())
		})
	}
	require.Subset(t, Transports, []string{"stdio", "streamable_http", "sse", "http"}, "lmcp_features reports them")
}

func TestParseHTTPErrorsNameTheField(t *testing.T) {
	cases := []struct {
		name   string
		in     string
		status core.Status
		want   string
	}{
		{"no url", `{"type":"streamable_http"}`, core.StatusInvalidArgument, "config.transport.url: is required"},
		{"empty url", `{"type":"sse","url":"  "}`, core.StatusInvalidArgument, "config.transport.url: is required"},
		{"url not a string", `{"type":"http","url":7}`, core.StatusInvalidArgument, "config.transport.url: must be a string"},
		{"not http", `{"type":"streamable_http","url":"ftp://example.com/"}`, core.StatusInvalidArgument, "config.transport.url: must be an http:// or https:// URL"},
		{"relative url", `{"type":"streamable_http","url":"/mcp"}`, core.StatusInvalidArgument, "config.transport.url: must be an http:// or https:// URL"},
		{"no host", `{"type":"sse","url":"http:///sse"}`, core.StatusInvalidArgument, "config.transport.url: must name a host"},
		{"unparsable url", `{"type":"http","url":"http://[::1"}`, core.StatusInvalidArgument, "config.transport.url: is not a valid URL"},
		{"headers not an object", `{"type":"streamable_http","url":"http://h/","headers":["a"]}`, core.StatusInvalidArgument, "config.transport.headers: must be a JSON object of strings"},
		{"header not a string", `{"type":"streamable_http","url":"http://h/","headers":{"X-Key":1}}`, core.StatusInvalidArgument, "config.transport.headers.X-Key: must be a string"},
		{"reserved header", `{"type":"streamable_http","url":"http://h/","headers":{"accept":"text/html"}}`, core.StatusInvalidArgument, "config.transport.headers.accept: is set by the transport"},
		{"reserved session header", `{"type":"sse","url":"http://h/","headers":{"MCP-SESSION-ID":"x"}}`, core.StatusInvalidArgument, "config.transport.headers.MCP-SESSION-ID: is set by the transport"},
		{"reserved user agent", `{"type":"http","url":"http://h/","headers":{"User-Agent":"me"}}`, core.StatusInvalidArgument, "config.transport.headers.User-Agent: is set by the transport"},
		{"same header twice", `{"type":"streamable_http","url":"http://h/","headers":{"X-Key":"a","x-key":"b"}}`, core.StatusInvalidArgument, "is given twice"},
		{"bad header name", `{"type":"streamable_http","url":"http://h/","headers":{"Bad Name":"v"}}`, core.StatusInvalidArgument, `config.transport.headers: "Bad Name" is not a valid header name`},
		{"line break in value", `{"type":"streamable_http","url":"http://h/","headers":{"X-Key":"a\r\nInjected: 1"}}`, core.StatusInvalidArgument, "config.transport.headers.X-Key: the value must not contain line breaks"},
		{"typo of url", `{"type":"streamable_http","ulr":"http://h/"}`, core.StatusInvalidArgument, "config.transport.ulr: is not a known field"},
		{"stdio field on http", `{"type":"streamable_http","url":"http://h/","command":"x"}`, core.StatusInvalidArgument, "config.transport.command: is not a known field"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(`{"transport":`+tc.in+`}`), "1")
			require.NotNil(t, err)
			require.Equal(t, tc.status, err.Status, err.Message)
			require.Contains(t, err.Message, tc.want)
		})
	}
}

func TestHTTPErrorsNeverEchoValues(t *testing.T) {
	secret := "sk-live-do-not-print"
	for _, in := range []string{
		`{"type":"streamable_http","url":"ftp://example.com/?token=` + secret + `"}`,
		`{"type":"sse","url":"http://[::1/?token=` + secret + `"}`,
		`{"type":"http","url":"http://h/","headers":{"Authorization":"Bearer ` + secret + `\n"}}`,
		`{"type":"http","url":"http://h/","headers":{"Accept":"` + secret + `"}}`,
	} {
		_, err := Parse([]byte(`{"transport":`+in+`}`), "1")
		require.NotNil(t, err)
		require.False(t, strings.Contains(err.Message, secret), err.Message)
	}
}
