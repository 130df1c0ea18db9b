package config

import (
	"net/http"
	"strings"

	"github.com/lemonmcp/lemonmcp/core"
	"github.com/lemonmcp/lemonmcp/transport"
	"github.com/lemonmcp/lemonmcp/transport/httpdetect"
	"github.com/lemonmcp/lemonmcp/transport/legacysse"
	"github.com/lemonmcp/lemonmcp/transport/streamablehttp"
)

// httpFields are the fields of an HTTP transport object.
var httpFields = []string{"type", "url", "headers"}

// parseHTTP builds the transport of the HTTP types: "streamable_http",
// "sse" (legacy HTTP+SSE) and "http" (detect which of the two the server
// speaks). Fields: url (required) and headers. Header values are never
// echoed: they usually hold credentials.
func parseHTTP(kind string, o *object, p *Parsed, libraryVersion string) (transport.Transport, *core.Error) {
	// A typo ("ulr") is reported as the unknown field it is, before "url"
	// is found missing.
	if err := o.onlyKnown(httpFields...); err != nil {
		return nil, err
	}
	url, err := o.requiredStr("url")
	if err != nil {
		return nil, err
	}
	headers, err := o.strMap("headers")
	if err != nil {
		return nil, err
	}
	userAgent := "lemonmcp/" + libraryVersion
	// A bad URL is reported as the transport sees it, before the OAuth
	// layer's view of the same problem: build that layer only if the
	// transport accepts the rest.
	am, authErr := newAuthManager(o, p, url, userAgent)
	var wrap func(http.RoundTripper) http.RoundTripper
	if am != nil {
		wrap = am.Wrap
		p.Options.Auth = am
	}
	p.Options.AuthContext = core.AuthContextFor(headers, am)
	streamable := streamablehttp.Config{
		URL:             url,
		Headers:         headers,
		MaxMessageBytes: p.Options.MaxMessageBytes,
		UserAgent:       userAgent,
		DeleteTimeout:   p.Options.Timeouts.CloseGrace, // zero selects the default
		WrapTransport:   wrap,
	}
	legacy := legacysse.Config{
		URL:             url,
		Headers:         headers,
		MaxMessageBytes: p.Options.MaxMessageBytes,
		UserAgent:       userAgent,
		EndpointTimeout: p.Options.Timeouts.Ready,
		WrapTransport:   wrap,
	}
	build := func() (transport.Transport, error) {
		switch kind {
		case "streamable_http":
			return streamablehttp.New(streamable)
		case "sse":
			return legacysse.New(legacy)
		default: // "http"
			return httpdetect.New(streamable, legacy)
		}
	}
	tr, terr := build()
	if p.Options.Restart != nil {
		p.Options.NewTransport = build
	}
	if terr != nil {
		return nil, transportError(o, terr)
	}
	if authErr != nil {
		return nil, authErr
	}
	return tr, nil
}

// transportError places a transport's configuration error under the
// transport's path: "url: ..." becomes "config.transport.url: ...".
func transportError(o *object, err error) *core.Error {
	e := core.AsError(err)
	for _, field := range []string{"url", "headers"} {
		if strings.HasPrefix(e.Message, field+":") || strings.HasPrefix(e.Message, field+".") {
			return core.Errorf(e.Status, "%s.%s", o.path, e.Message)
		}
	}
	return core.Errorf(e.Status, "%s: %s", o.path, e.Message)
}
