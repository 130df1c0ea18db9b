package streamablehttp

import (
	"net/http"
	"net/url"
	"time"

	"github.com/lemonmcp/lemonmcp/transport"
	"github.com/lemonmcp/lemonmcp/transport/internal/httpclient"
)

// Defaults applied to zero Config fields.
const (
	DefaultMaxMessageBytes      = httpclient.DefaultMaxMessageBytes
	DefaultUserAgent            = httpclient.DefaultUserAgent
	DefaultDeleteTimeout        = 2 * time.Second
	DefaultReconnectDelay       = time.Second
	DefaultMaxReconnectDelay    = 30 * time.Second
	DefaultMaxReconnectAttempts = 10
)

// Config describes the server endpoint.
type Config struct {
	// URL is the MCP endpoint (http or https).
	URL string
	// Headers are sent with every request, e.g. Authorization. Names are
	// case-insensitive; the transport's own headers (Accept, Content-Type,
	// User-Agent, Last-Event-ID, Mcp-*) cannot be configured.
	Headers map[string]string
	// MaxMessageBytes bounds one JSON body or SSE event. Zero means
	// DefaultMaxMessageBytes.
	MaxMessageBytes int
	// UserAgent is the User-Agent header ("lemonmcp/1.2.3"). Empty means
	// DefaultUserAgent.
	UserAgent string
	// HTTPClient, when set, makes the requests; its Timeout must be zero
	// (streams are long-lived). By default the transport uses a client of
	// its own that follows redirects within the same origin only.
	HTTPClient *http.Client
	// WrapTransport, when set, wraps the client's RoundTripper: the OAuth
	// layer (auth.Manager.Wrap) adds bearer tokens and answers 401s there.
	WrapTransport func(http.RoundTripper) http.RoundTripper
	// DeleteTimeout bounds the DELETE that ends the session on Close.
	DeleteTimeout time.Duration
	// ReconnectDelay is the first delay before a broken stream is
	// reconnected when the server gave no retry field; each failed attempt
	// multiplies it by 1.5, up to MaxReconnectDelay. MaxReconnectAttempts
	// bounds consecutive attempts that bring no event.
	ReconnectDelay       time.Duration
	MaxReconnectDelay    time.Duration
	MaxReconnectAttempts int
	// InitializeRefused, when set, is offered every initialize request the
	// server answers with an HTTP error status, before the failure is
	// reported. When it returns true it has taken the request over and the
	// transport reports nothing for it. Detection (configuration type
	// "http") uses it to fall back to the legacy HTTP+SSE transport.
	InitializeRefused func(status int) bool
}

// settings is a normalized Config.
type settings struct {
	Config
	url     *url.URL
	rawURL  string
	headers http.Header
	// userAgentV is UserAgent as a header value, shared by every request.
	userAgentV []string
}

func (c Config) normalize() (*settings, *transport.Error) {
	common, err := httpclient.Common{URL: c.URL, Headers: c.Headers, MaxMessageBytes: c.MaxMessageBytes,
		UserAgent: c.UserAgent, HTTPClient: c.HTTPClient}.Check()
	if err != nil {
		return nil, err
	}
	c.Headers = nil // the canonical copy in settings is what is used
	c.MaxMessageBytes, c.UserAgent = common.MaxMessageBytes, common.UserAgent
	durations := []struct {
		name string
		d    *time.Duration
		def  time.Duration
	}{
		{"DeleteTimeout", &c.DeleteTimeout, DefaultDeleteTimeout},
		{"ReconnectDelay", &c.ReconnectDelay, DefaultReconnectDelay},
		{"MaxReconnectDelay", &c.MaxReconnectDelay, DefaultMaxReconnectDelay},
	}
	for _, d := range durations {
		switch {
		case *d.d == 0:
			*d.d = d.def
		case *d.d < 0:
			return nil, transport.Errorf(transport.CodeInvalidArgument, "%s must not be negative", d.name)
		}
	}
	switch {
	case c.MaxReconnectAttempts == 0:
		c.MaxReconnectAttempts = DefaultMaxReconnectAttempts
	case c.MaxReconnectAttempts < 0:
		return nil, transport.Errorf(transport.CodeInvalidArgument, "MaxReconnectAttempts must not be negative")
	}
	return &settings{Config: c, url: common.URL, rawURL: common.URL.String(), headers: common.Headers,
		userAgentV: []string{c.UserAgent}}, nil
}
