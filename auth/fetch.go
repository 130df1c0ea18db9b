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

	"golang.org/x/oauth2"

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
	if base == nil {
		base = http.DefaultTransport
	}
	f.client = &http.Client{
		Transport: &metadataHeaders{f: f, base: base},
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

// metadataHeaders puts the only headers metadata, registration and token
// requests carry on each of them, x/oauth2's token requests included.
type metadataHeaders struct {
	f    *fetcher
	base http.RoundTripper
}

func (t *metadataHeaders) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", t.f.userAgent)
	if t.f.protoVersion != "" {
		req.Header.Set("MCP-Protocol-Version", t.f.protoVersion)
	}
	return t.base.RoundTrip(req)
}

// do sends one request; body, when non-nil, is sent with contentType.
func (f *fetcher) do(ctx context.Context, method, rawURL, contentType string, body []byte) (*httpResult, error) {
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
	if body != nil {
		req.Header.Set("Content-Type", contentType)
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
	r, err := f.do(ctx, http.MethodGet, rawURL, "", nil)
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

// token runs one x/oauth2 token request (call) against endpoint over the
// fetcher's client, with the URL policy and time cap of every request;
// proofs, when non-nil, adds DPoP. x/oauth2's errors become messages
// without URLs or secrets: an OAuth error answer is an *oauthError.
func (f *fetcher) token(ctx context.Context, endpoint string, proofs *dpopTransport, call func(context.Context) (*oauth2.Token, error), secrets []string) (*oauth2.Token, error) {
	if _, err := checkAuthURL(endpoint, f.allowInsecure); err != nil {
		return nil, fmt.Errorf("%s %s", safeURL(endpoint), err)
	}
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	hc := f.client
	if proofs != nil {
		proofs.base = f.client.Transport
		hc = &http.Client{Transport: proofs, CheckRedirect: f.client.CheckRedirect}
	}
	tok, err := call(context.WithValue(ctx, oauth2.HTTPClient, hc))
	if err == nil {
		return tok, nil
	}
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		status := 0
		if re.Response != nil {
			status = re.Response.StatusCode
		}
		return nil, newOAuthError(status, re.ErrorCode, re.ErrorDescription, secrets)
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("%s: %s", safeURL(endpoint), describeNetErr(ctx.Err()))
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return nil, fmt.Errorf("%s: %s", safeURL(endpoint), describeNetErr(err))
	}
	// x/oauth2 has no error types for an unusable success answer; its
	// messages are matched here and never shown.
	switch msg := err.Error(); {
	case strings.Contains(msg, "missing access_token"):
		return nil, errors.New("the token response has no access_token")
	case strings.Contains(msg, "cannot fetch token"):
		return nil, fmt.Errorf("%s: reading the response failed", safeURL(endpoint))
	}
	return nil, errors.New("the token response is not a JSON object")
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
