package legacysse

import (
	"net/http"
	"net/url"
	"time"

	"github.com/lemonmcp/lemonmcp/transport"
	"github.com/lemonmcp/lemonmcp/transport/internal/httpclient"
)

// Defaults applied to zero Config fields.
const (
	DefaultMaxMessageBytes = httpclient.DefaultMaxMessageBytes
	DefaultUserAgent       = httpclient.DefaultUserAgent
	DefaultEndpointTimeout = 30 * time.Second
)

// Config describes the server's SSE endpoint.
type Config struct {
	// URL is the SSE stream's URL (http or https).
	URL string
	// Headers are sent with the GET and every POST. Names are
	// case-insensitive; the transport's own headers cannot be configured.
	Headers map[string]string
	// MaxMessageBytes bounds one SSE event. Zero means
	// DefaultMaxMessageBytes.
	MaxMessageBytes int
	// UserAgent is the User-Agent header. Empty means DefaultUserAgent.
	UserAgent string
	// HTTPClient, when set, makes the requests; its Timeout must be zero.
	// By default the transport uses a client of its own that follows
	// redirects within the same origin only.
	HTTPClient *http.Client
	// WrapTransport, when set, wraps the client's RoundTripper: the OAuth
	// layer (auth.Manager.Wrap) adds bearer tokens and answers 401s there.
	WrapTransport func(http.RoundTripper) http.RoundTripper
	// EndpointTimeout bounds the wait for the endpoint event. Zero means
	// DefaultEndpointTimeout.
	EndpointTimeout time.Duration
}

type settings struct {
	Config
	url     *url.URL
	headers http.Header
}

func (c Config) normalize() (*settings, *transport.Error) {
	common, err := httpclient.Common{URL: c.URL, Headers: c.Headers, MaxMessageBytes: c.MaxMessageBytes,
		UserAgent: c.UserAgent, HTTPClient: c.HTTPClient}.Check()
	if err != nil {
		return nil, err
	}
	c.Headers = nil // the canonical copy in settings is what is used
	c.MaxMessageBytes, c.UserAgent = common.MaxMessageBytes, common.UserAgent
	switch {
	case c.EndpointTimeout == 0:
		c.EndpointTimeout = DefaultEndpointTimeout
	case c.EndpointTimeout < 0:
		return nil, transport.Errorf(transport.CodeInvalidArgument, "EndpointTimeout must not be negative")
	}
	return &settings{Config: c, url: common.URL, headers: common.Headers}, nil
}
