package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/lemonmcp/lemonmcp/internal/jsonx"
)

// tokenResult is a parsed successful token response.
type tokenResult struct {
	access    string
	dpop      bool // token_type DPoP
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

// tokenRequest sends one grant to the token endpoint with client
// authentication. secrets are values the answer must not echo.
func (m *Manager) tokenRequest(ctx context.Context, f *fetcher, as *asMeta, reg *registration, form url.Values) (*tokenResult, error) {
	secrets := []string{reg.secret}
	for _, k := range []string{"code", "code_verifier", "refresh_token", "client_secret", "client_assertion", "assertion"} {
		secrets = append(secrets, form.Get(k))
	}
	var endpoint *url.URL
	if m.dpop != nil {
		var err error
		if endpoint, err = url.Parse(as.TokenEndpoint); err != nil {
			return nil, errors.New("the token endpoint is not a URL")
		}
		if algs, ok := as.public["dpop_signing_alg_values_supported"].([]any); ok && len(algs) > 0 && !containsAny(algs, m.dpop.s.alg) {
			m.logf("warning", "the authorization server does not list DPoP alg %s in dpop_signing_alg_values_supported", m.dpop.s.alg)
		}
	}
	// At most two rounds: the second only answers an authorization
	// server's use_dpop_nonce (RFC 9449 §8).
	for round := 0; ; round++ {
		hdr := http.Header{}
		method := m.authMethod(as, reg)
		// Client authentication is rebuilt each round: a client
		// assertion's jti must not repeat.
		if err := m.applyClientAuth(method, as, reg, form, hdr); err != nil {
			return nil, err
		}
		secrets = append(secrets, form.Get("client_assertion"))
		if m.dpop != nil {
			p, err := m.dpop.proof(http.MethodPost, endpoint, "", m.now())
			if err != nil {
				return nil, fmt.Errorf("signing the DPoP proof failed: %s", err)
			}
			hdr.Set("DPoP", p)
		}
		r, err := f.postForm(ctx, as.TokenEndpoint, form, hdr)
		if err != nil {
			return nil, err
		}
		if r.status == http.StatusOK {
			if m.dpop != nil {
				m.dpop.learnNonce(endpoint, r.header)
			}
			return m.parseTokenResponse(r.body, secrets)
		}
		oe := parseOAuthError(r, secrets)
		if m.dpop != nil && oe.code == "use_dpop_nonce" && round == 0 && m.dpop.learnNonce(endpoint, r.header) {
			continue
		}
		return nil, oe
	}
}

func containsAny(list []any, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func (m *Manager) parseTokenResponse(body []byte, secrets []string) (*tokenResult, error) {
	var raw struct {
		AccessToken  string `json:"access_token"`
		TokenType    string `json:"token_type"`
		RefreshToken string `json:"refresh_token"`
		Scope        string `json:"scope"`
		ExpiresIn    any    `json:"expires_in"`
	}
	if err := jsonx.Unmarshal(body, &raw); err != nil {
		return nil, errors.New("the token response is not a JSON object")
	}
	if raw.AccessToken == "" {
		return nil, errors.New("the token response has no access_token")
	}
	t := &tokenResult{access: raw.AccessToken, refresh: raw.RefreshToken, scope: raw.Scope}
	switch {
	case raw.TokenType == "" || strings.EqualFold(raw.TokenType, "bearer"):
		if m.dpop != nil {
			m.logf("info", "the authorization server issued a Bearer token despite the DPoP proof; it is used as a bearer token")
		}
	case strings.EqualFold(raw.TokenType, "dpop") && m.dpop != nil:
		t.dpop = true
	case strings.EqualFold(raw.TokenType, "dpop"):
		return nil, errors.New("the token response has token_type DPoP, but DPoP is not configured (auth.dpop)")
	default:
		return nil, fmt.Errorf("the token response has token_type %q; only Bearer and DPoP are supported", sanitize(raw.TokenType, 32, secrets))
	}
	if secs, ok := expiresIn(raw.ExpiresIn); ok && secs > 0 {
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

func parseOAuthError(r *httpResult, secrets []string) *oauthError {
	e := &oauthError{status: r.status}
	var body struct {
		Error            string `json:"error"`
		ErrorDescription string `json:"error_description"`
	}
	if jsonx.Unmarshal(r.body, &body) == nil {
		e.code = sanitize(body.Error, 64, secrets)
		e.desc = sanitize(body.ErrorDescription, 200, secrets)
	}
	return e
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
