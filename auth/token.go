package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/lemonmcp/lemonmcp/internal/jsonx"
)

// tokenResult is a parsed successful token response.
type tokenResult struct {
	access    string
	key       *dpopKey // token_type DPoP: the key it is bound to (the one the request's proofs were signed with)
	refresh   string
	scope     string
	expiresAt time.Time
}

// oauthError is an error answer of the token or registration endpoint.
// code and desc are sanitized: printable, short, and with any secret the
// request carried cut out.
type oauthError struct {
	status int
	code   string
	desc   string
}

func (e *oauthError) Error() string {
	s := fmt.Sprintf("HTTP %d", e.status)
	if e.code != "" {
		s += " " + e.code
	}
	if e.desc != "" {
		s += ": " + e.desc
	}
	return s
}

// tokenCall sends one token request through x/oauth2 with the given client
// authentication; ctx carries the HTTP client (oauth2.HTTPClient).
type tokenCall func(ctx context.Context, a clientAuth) (*oauth2.Token, error)

// grantCall is a token request of any grant but authorization_code: the
// clientcredentials package sends it, its grant_type overridden through
// EndpointParams (the package allows exactly that override). params holds
// grant_type, the grant's own parameters, scope and resource.
func grantCall(tokenURL string, params url.Values) tokenCall {
	return func(ctx context.Context, a clientAuth) (*oauth2.Token, error) {
		ep := url.Values{}
		for k, v := range params {
			ep[k] = v
		}
		for k, v := range a.params {
			ep[k] = v
		}
		cc := clientcredentials.Config{ClientID: a.id, ClientSecret: a.secret, TokenURL: tokenURL, AuthStyle: a.style, EndpointParams: ep}
		return cc.Token(ctx)
	}
}

// tokenRequest sends one grant to the authorization server's token
// endpoint with client authentication. secrets are values the answer must
// not echo.
func (m *Manager) tokenRequest(ctx context.Context, f *fetcher, as *asMeta, reg *registration, call tokenCall, secrets []string) (*tokenResult, error) {
	return m.tokenRequestWith(ctx, m.proofKey(), f, as, reg, call, secrets)
}

// tokenRequestWith is tokenRequest with the proofs of key (nil: none):
// a shared grant's refresh token is presented with the key it is bound
// to.
func (m *Manager) tokenRequestWith(ctx context.Context, key *dpopKey, f *fetcher, as *asMeta, reg *registration, call tokenCall, secrets []string) (*tokenResult, error) {
	secrets = append(secrets, reg.secret)
	if key != nil {
		if algs, ok := as.public["dpop_signing_alg_values_supported"].([]any); ok && len(algs) > 0 && !containsAny(algs, key.s.alg) {
			m.logf("warning", "the authorization server does not list DPoP alg %s in dpop_signing_alg_values_supported", key.s.alg)
		}
	}
	// At most two rounds: the second only answers an authorization
	// server's use_dpop_nonce (RFC 9449 §8).
	for round := 0; ; round++ {
		a, err := m.clientAuthFor(m.authMethod(as, reg), as, reg)
		if err != nil {
			return nil, err
		}
		secrets = append(secrets, a.params.Get("client_assertion"))
		var proofs *dpopTransport
		if key != nil {
			proofs = &dpopTransport{key: key, now: m.now}
		}
		tok, err := f.token(ctx, as.TokenEndpoint, proofs, func(ctx context.Context) (*oauth2.Token, error) { return call(ctx, a) }, secrets)
		if err == nil {
			return m.tokenResultOf(tok, key, secrets)
		}
		var oe *oauthError
		if proofs != nil && errors.As(err, &oe) && oe.code == "use_dpop_nonce" && round == 0 && proofs.fresh.Load() {
			continue
		}
		return nil, err
	}
}

// dpopTransport puts a DPoP proof (RFC 9449) on each token request x/oauth2
// sends, and remembers the nonce every answer carries. fresh says an
// answer brought a nonce the client did not hold: a use_dpop_nonce refusal
// is then worth one more round.
type dpopTransport struct {
	key   *dpopKey
	now   func() time.Time
	base  http.RoundTripper
	fresh atomic.Bool
}

func (t *dpopTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	p, err := t.key.proof(req.Method, req.URL, "", t.now())
	if err != nil {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, fmt.Errorf("signing the DPoP proof failed: %s", err)
	}
	req = req.Clone(req.Context())
	req.Header.Set("DPoP", p)
	resp, err := t.base.RoundTrip(req)
	if err == nil && t.key.learnNonce(req.URL, resp.Header) {
		t.fresh.Store(true)
	}
	return resp, err
}

func containsAny(list []any, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// tokenResultOf checks a token x/oauth2 parsed: its type, and its lifetime
// against the Manager's clock (x/oauth2's Expiry uses the wall clock).
// key is the DPoP key the request carried proofs of (nil: none).
func (m *Manager) tokenResultOf(tok *oauth2.Token, key *dpopKey, secrets []string) (*tokenResult, error) {
	t := &tokenResult{access: tok.AccessToken, refresh: tok.RefreshToken}
	if s, ok := tok.Extra("scope").(string); ok {
		t.scope = s
	}
	switch {
	case tok.TokenType == "" || strings.EqualFold(tok.TokenType, "bearer"):
		if key != nil {
			m.logf("info", "the authorization server issued a Bearer token despite the DPoP proof; it is used as a bearer token")
		}
	case strings.EqualFold(tok.TokenType, "dpop") && key != nil:
		t.key = key
	case strings.EqualFold(tok.TokenType, "dpop"):
		return nil, errors.New("the token response has token_type DPoP, but DPoP is not configured (auth.dpop)")
	default:
		return nil, fmt.Errorf("the token response has token_type %q; only Bearer and DPoP are supported", sanitize(tok.TokenType, 32, secrets))
	}
	if secs, ok := expiresIn(tok.Extra("expires_in")); ok && secs > 0 {
		t.expiresAt = m.now().Add(time.Duration(secs) * time.Second)
	}
	return t, nil
}

// expiresIn accepts a JSON number or a numeric string (some servers send
// one).
func expiresIn(v any) (int64, bool) {
	switch x := v.(type) {
	case jsonx.Number:
		f, err := x.Float64()
		return int64(f), err == nil
	case float64:
		return int64(x), true
	case string:
		n, err := strconv.ParseInt(x, 10, 64)
		return n, err == nil
	}
	return 0, false
}

// parseOAuthError reads an OAuth error answer the library fetched itself
// (dynamic registration).
func parseOAuthError(r *httpResult, secrets []string) *oauthError {
	var body struct {
		Error            string `json:"error"`
		ErrorDescription string `json:"error_description"`
	}
	_ = jsonx.Unmarshal(r.body, &body)
	return newOAuthError(r.status, body.Error, body.ErrorDescription, secrets)
}

func newOAuthError(status int, code, desc string, secrets []string) *oauthError {
	return &oauthError{status: status, code: sanitize(code, 64, secrets), desc: sanitize(desc, 200, secrets)}
}

// sanitize makes server text safe for a message: printable ASCII only,
// secrets cut out, bounded length.
func sanitize(s string, max int, secrets []string) string {
	for _, sec := range secrets {
		if len(sec) >= 4 {
			s = strings.ReplaceAll(s, sec, "[redacted]")
		}
	}
	var b strings.Builder
	for _, c := range s {
		if c >= 0x20 && c < 0x7f {
			b.WriteRune(c)
		}
		if b.Len() >= max {
			break
		}
	}
	return b.String()
}

func splitScope(s string) []string { return strings.Fields(s) }
