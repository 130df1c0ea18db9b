package auth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/lemonmcp/lemonmcp/internal/jsonx"
)

const (
	// maxMetadataBytes bounds every metadata, registration and token
	// response: they are small documents, and a hostile server must not
	// make the client buffer without limit.
	maxMetadataBytes = 1 << 20
	// requestTimeout caps one metadata, registration or token request on
	// top of the caller's context.
	requestTimeout = 30 * time.Second
	maxRedirects   = 5
)

// fetcher sends metadata, registration and token requests. It is its own
// http.Client over the base transport: the wrapper (and so the bearer and
// the configured MCP headers) is never in its path.
type fetcher struct {
	client        *http.Client
	userAgent     string
	protoVersion  string // MCP-Protocol-Version of the triggering request
	allowInsecure bool
}

func newFetcher(base http.RoundTripper, cfg *Config, trigger *http.Request) *fetcher {
	f := &fetcher{userAgent: cfg.UserAgent, allowInsecure: cfg.AllowInsecureHTTP}
	if f.userAgent == "" {
		f.userAgent = "lemonmcp"
	}
	if trigger != nil {
		f.protoVersion = trigger.Header.Get("Mcp-Protocol-Version")
	}
	f.client = &http.Client{
		Transport: base,
		// Redirects stay on the origin of the first request and each hop
		// is checked against the URL policy again: a metadata document
		// must not be fetchable from somewhere the client would refuse.
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= maxRedirects {
				return errors.New("too many redirects")
			}
			if !sameOrigin(req.URL, via[0].URL) {
				return fmt.Errorf("redirect to another origin (%s) refused", origin(req.URL))
			}
			if _, err := checkAuthURL(req.URL.String(), f.allowInsecure); err != nil {
				return fmt.Errorf("redirect target %s", err)
			}
			return nil
		},
	}
	return f
}

// httpResult is a bounded response.
type httpResult struct {
	status int
	header http.Header
	body   []byte
}

// do sends one request with metadata-only headers; body, when non-nil, is
// sent with contentType. extra headers (token endpoint Basic auth) are set
// last.
func (f *fetcher) do(ctx context.Context, method, rawURL, contentType string, body []byte, extra http.Header) (*httpResult, error) {
	if _, err := checkAuthURL(rawURL, f.allowInsecure); err != nil {
		return nil, fmt.Errorf("%s %s", safeURL(rawURL), err)
	}
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = strings.NewReader(string(body))
	}
	req, err := http.NewRequestWithContext(ctx, method, rawURL, rd)
	if err != nil {
		return nil, fmt.Errorf("%s: cannot build request", safeURL(rawURL))
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", f.userAgent)
	if f.protoVersion != "" {
		req.Header.Set("MCP-Protocol-Version", f.protoVersion)
	}
	if body != nil {
		req.Header.Set("Content-Type", contentType)
	}
	for k, v := range extra {
		req.Header[k] = v
	}
	resp, err := f.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s: %s", safeURL(rawURL), describeNetErr(err))
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxMetadataBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: reading the response failed", safeURL(rawURL))
	}
	if len(data) > maxMetadataBytes {
		return nil, fmt.Errorf("%s: response larger than %d bytes", safeURL(rawURL), maxMetadataBytes)
	}
	return &httpResult{status: resp.StatusCode, header: resp.Header, body: data}, nil
}

// getJSON fetches a JSON object document. ok is false with a nil error for
// a 404 or other non-200 answer (the caller tries the next location).
func (f *fetcher) getJSON(ctx context.Context, rawURL string, into any) (status int, err error) {
	r, err := f.do(ctx, http.MethodGet, rawURL, "", nil, nil)
	if err != nil {
		return 0, err
	}
	if r.status != http.StatusOK {
		return r.status, nil
	}
	if err := jsonx.Unmarshal(r.body, into); err != nil {
		return r.status, fmt.Errorf("%s: not a JSON object", safeURL(rawURL))
	}
	return r.status, nil
}

// postForm sends an application/x-www-form-urlencoded body.
func (f *fetcher) postForm(ctx context.Context, rawURL string, form url.Values, extra http.Header) (*httpResult, error) {
	return f.do(ctx, http.MethodPost, rawURL, "application/x-www-form-urlencoded", []byte(form.Encode()), extra)
}

// describeNetErr keeps transport errors short and free of URLs (which
// url.Error would repeat with their query).
func describeNetErr(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "timed out"
	}
	if errors.Is(err, context.Canceled) {
		return "canceled"
	}
	return err.Error()
}
