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
	hdr := http.Header{}
	method := m.authMethod(as, reg)
	if err := m.applyClientAuth(method, as, reg, form, hdr); err != nil {
		return nil, err
	}
	r, err := f.postForm(ctx, as.TokenEndpoint, form, hdr)
	if err != nil {
		return nil, err
	}
	secrets := []string{reg.secret}
	for _, k := range []string{"code", "code_verifier", "refresh_token", "client_secret", "client_assertion"} {
		secrets = append(secrets, form.Get(k))
	}
	if r.status != http.StatusOK {
		return nil, parseOAuthError(r, secrets)
	}
	return m.parseTokenResponse(r.body, secrets)
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
	if raw.TokenType != "" && !strings.EqualFold(raw.TokenType, "bearer") {
		return nil, fmt.Errorf("the token response has token_type %q; only Bearer is supported", sanitize(raw.TokenType, 32, secrets))
	}
	t := &tokenResult{access: raw.AccessToken, refresh: raw.RefreshToken, scope: raw.Scope}
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
