package httpclient

import (
	"net/http"
	"net/url"

	"github.com/lemonmcp/lemonmcp/transport"
)

// Limits and defaults both HTTP transports apply to their configuration.
const (
	DefaultMaxMessageBytes = 16 << 20
	DefaultUserAgent       = "lemonmcp"
	maxMaxMessageBytes     = 1 << 30
)

// Common is the part of an HTTP transport's configuration both transports
// check and default the same way.
type Common struct {
	URL             string
	Headers         map[string]string
	MaxMessageBytes int
	UserAgent       string
	HTTPClient      *http.Client
}

// Checked is a validated Common: the parsed URL, the canonical headers, and
// the size bound and User-Agent with their defaults applied.
type Checked struct {
	URL             *url.URL
	Headers         http.Header
	MaxMessageBytes int
	UserAgent       string
}

// Check validates c. The messages name the field ("url: ...",
// "headers.X: ...", "MaxMessageBytes ...") and never a header's value.
func (c Common) Check() (*Checked, *transport.Error) {
	u, err := CheckURL(c.URL)
	if err != nil {
		return nil, err
	}
	h, err := CheckHeaders(c.Headers)
	if err != nil {
		return nil, err
	}
	out := &Checked{URL: u, Headers: h, MaxMessageBytes: c.MaxMessageBytes, UserAgent: c.UserAgent}
	switch {
	case out.MaxMessageBytes == 0:
		out.MaxMessageBytes = DefaultMaxMessageBytes
	case out.MaxMessageBytes < 0 || out.MaxMessageBytes > maxMaxMessageBytes:
		return nil, transport.Errorf(transport.CodeInvalidArgument,
			"MaxMessageBytes must be between 1 and %d, not %d", maxMaxMessageBytes, out.MaxMessageBytes)
	}
	if out.UserAgent == "" {
		out.UserAgent = DefaultUserAgent
	}
	if c.HTTPClient != nil && c.HTTPClient.Timeout != 0 {
		return nil, transport.Errorf(transport.CodeInvalidArgument, "HTTPClient.Timeout must be zero: SSE streams outlive any fixed timeout")
	}
	return out, nil
}
