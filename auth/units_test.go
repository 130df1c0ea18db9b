package auth

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseBearer(t *testing.T) {
	tests := []struct {
		name   string
		values []string
		want   bearerChallenge
	}{
		{"simple", []string{`Bearer resource_metadata="https://x/prm", scope="a b"`},
			bearerChallenge{resourceMetadata: "https://x/prm", scope: []string{"a", "b"}}},
		{"case and tokens", []string{`bEaReR Error=insufficient_scope, SCOPE="s"`},
			bearerChallenge{err: "insufficient_scope", scope: []string{"s"}}},
		{"escapes", []string{`Bearer error_description="say \"hi\", \\ok", error="invalid_token"`},
			bearerChallenge{errorDescription: `say "hi", \ok`, err: "invalid_token"}},
		{"several challenges", []string{`Basic realm="r", Negotiate abc==, Bearer scope="x", DPoP algs="ES256"`},
			bearerChallenge{scope: []string{"x"}}},
		{"several headers", []string{`Basic realm="r"`, `Bearer resource_metadata="https://m"`},
			bearerChallenge{resourceMetadata: "https://m"}},
		{"token68 before", []string{`Negotiate dGVzdA==, Bearer error="e"`}, bearerChallenge{err: "e"}},
		{"other scheme carries resource_metadata", []string{`DPoP resource_metadata="https://d"`},
			bearerChallenge{resourceMetadata: "https://d"}},
		{"unterminated quote", []string{`Bearer scope="a b`}, bearerChallenge{scope: []string{"a", "b"}}},
		{"empty", nil, bearerChallenge{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := parseBearer(tc.values)
			got.raw = ""
			require.Equal(t, tc.want, *got)
		})
	}
}

func TestCanonicalAndCovers(t *testing.T) {
	canon := []struct{ in, want string }{
		{"HTTPS://Example.COM/MCP/", "https://example.com/MCP"},
		{"https://example.com/mcp#frag", "https://example.com/mcp"},
		{"https://example.com/", "https://example.com/"},
		{"https://example.com:8443/a?x=1", "https://example.com:8443/a?x=1"},
	}
	for _, tc := range canon {
		t.Run("canonical "+tc.in, func(t *testing.T) {
			got, err := canonicalResource(tc.in)
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
	covers := []struct {
		prm  string
		want bool
	}{
		{"https://example.com/mcp", true},
		{"https://EXAMPLE.com/mcp/", true},
		{"https://example.com", true},
		{"https://example.com/", true},
		{"https://example.com/mc", false},
		{"https://example.com/mcp/sub", false},
		{"https://evil.example.com/mcp", false},
		{"http://example.com/mcp", false},
		{"https://example.com:444/mcp", false},
	}
	for _, tc := range covers {
		t.Run("covers "+tc.prm, func(t *testing.T) {
			require.Equal(t, tc.want, resourceCovers(tc.prm, "https://example.com/mcp"))
		})
	}
}

func TestCheckAuthURL(t *testing.T) {
	tests := []struct {
		url      string
		insecure bool
		ok       bool
	}{
		{"https://as.example.com/authorize", false, true},
		{"http://localhost:8080/a", false, true},
		{"http://127.0.0.5/a", false, true},
		{"http://[::1]:9/a", false, true},
		{"http://as.example.com/a", false, false},
		{"http://as.example.com/a", true, true},
		{"javascript:alert(1)", true, false},
		{"data:text/html,hi", true, false},
		{"file:///etc/passwd", true, false},
		{"vbscript:x", true, false},
		{"https://user:pw@as.example.com/", false, false},
		{"/relative", false, false},
	}
	for _, tc := range tests {
		t.Run(tc.url, func(t *testing.T) {
			_, err := checkAuthURL(tc.url, tc.insecure)
			require.Equal(t, tc.ok, err == nil, "%v", err)
		})
	}
}

func TestNewValidation(t *testing.T) {
	tests := []struct {
		name  string
		cfg   Config
		url   string
		field string
	}{
		{"bad url", Config{}, "ftp://x", "MCP server URL"},
		{"flow", Config{Flow: "magic"}, "", "auth.flow"},
		{"method", Config{TokenAuthMethod: "tls"}, "", "auth.token_auth_method"},
		{"secret without id", Config{ClientSecret: "s"}, "", "auth.client_secret"},
		{"basic without secret", Config{ClientID: "c", TokenAuthMethod: MethodClientSecretBasic}, "", "auth.token_auth_method"},
		{"remote http redirect", Config{RedirectURI: "http://example.com/cb"}, "", "auth.redirect_uri"},
		{"code flow without redirect", Config{Flow: FlowAuthorizationCode}, "", "auth.redirect_uri"},
		{"cimd not https", Config{ClientMetadataURL: "http://x/c.json"}, "", "auth.client_metadata_url"},
		{"cimd without path", Config{ClientMetadataURL: "https://x"}, "", "auth.client_metadata_url"},
		{"bad key", Config{PrivateKey: &PrivateKeyJWT{KeyPEM: "nope"}}, "", "auth.private_key"},
		{"negative step-ups", Config{MaxStepUps: -1}, "", "auth.max_step_ups"},
		{"client credentials without id", Config{Flow: FlowClientCredentials}, "", "auth.client_id"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u := tc.url
			if u == "" {
				u = "https://mcp.example.com/mcp"
			}
			_, err := New(tc.cfg, u)
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.field)
		})
	}
	t.Run("valid", func(t *testing.T) {
		m, err := New(Config{RedirectURI: "http://127.0.0.1:3000/cb", Scopes: []string{"a", "a"}}, "https://MCP.example.com/mcp/")
		require.NoError(t, err)
		require.Equal(t, "https://mcp.example.com/mcp", m.canonical)
		require.Equal(t, []string{"a"}, m.cfg.Scopes)
	})
}

func TestScopeHelpers(t *testing.T) {
	prm := &discovery{prm: &prmDoc{ScopesSupported: []string{"p1", "p2"}}}
	tests := []struct {
		name string
		ch   *bearerChallenge
		cfg  []string
		d    *discovery
		want []string
	}{
		{"challenge wins", &bearerChallenge{scope: []string{"c"}}, []string{"k"}, prm, []string{"c"}},
		{"config next", &bearerChallenge{}, []string{"k"}, prm, []string{"k"}},
		{"prm scopes_supported", &bearerChallenge{}, nil, prm, []string{"p1", "p2"}},
		{"omitted", &bearerChallenge{}, nil, &discovery{prm: &prmDoc{}}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, selectScopes(tc.ch, tc.cfg, tc.d))
		})
	}
	t.Run("union", func(t *testing.T) {
		require.Equal(t, []string{"a", "b", "c"}, unionScopes([]string{"a", "b"}, []string{"b", "c"}))
	})
	t.Run("offline_access only when listed", func(t *testing.T) {
		require.Equal(t, []string{"a", "offline_access"}, withOfflineAccess([]string{"a"}, &asMeta{ScopesSupported: []string{"a", "offline_access"}}))
		require.Equal(t, []string{"a"}, withOfflineAccess([]string{"a"}, &asMeta{ScopesSupported: []string{"a"}}))
	})
}

// TestTokenResponseParsing drives x/oauth2 with one token endpoint answer
// each and checks what the library makes of it.
func TestTokenResponseParsing(t *testing.T) {
	m, err := New(Config{}, "https://mcp.example.com/mcp")
	require.NoError(t, err)
	tests := []struct {
		name    string
		status  int
		body    string
		wantErr string
		expiry  bool
	}{
		{"ok", 200, `{"access_token":"a","token_type":"bearer","expires_in":60}`, "", true},
		{"type absent", 200, `{"access_token":"a"}`, "", false},
		{"expires_in string", 200, `{"access_token":"a","token_type":"Bearer","expires_in":"60"}`, "", true},
		{"no token", 200, `{"token_type":"Bearer"}`, "no access_token", false},
		{"other type", 200, `{"access_token":"a","token_type":"mac"}`, "only Bearer", false},
		{"not json", 200, `<html>`, "not a JSON object", false},
		{"error bodies are sanitized", 400, `{"error":"invalid_grant\u0007","error_description":"token rt-SECRET-1 is bad"}`,
			"HTTP 400 invalid_grant: token [redacted] is bad", false},
		{"error answer without a body", 503, ``, "HTTP 503", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tc.status)
				_, _ = w.Write([]byte(tc.body))
			}))
			defer srv.Close()
			f := newFetcher(nil, &Config{AllowInsecureHTTP: true}, nil)
			form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"rt-SECRET-1"}}
			tr, err := m.tokenRequest(context.Background(), f, &asMeta{TokenEndpoint: srv.URL}, &registration{clientID: "c"},
				grantCall(srv.URL, form), []string{"rt-SECRET-1"})
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				require.NotContains(t, err.Error(), "rt-SECRET-1")
				if tc.status != 200 {
					var oe *oauthError
					require.ErrorAs(t, err, &oe)
					require.Equal(t, tc.status, oe.status)
				}
				return
			}
			require.NoError(t, err)
			require.Equal(t, "a", tr.access)
			require.Equal(t, tc.expiry, !tr.expiresAt.IsZero())
		})
	}
}
