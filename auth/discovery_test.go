package auth

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPRMDiscoveryOrder(t *testing.T) {
	tests := []struct {
		name      string
		prmPath   string
		inHeader  bool
		wantPaths []string // metadata GETs on the MCP server, in order
	}{
		{"challenge URL first", "/custom/prm.json", true, []string{"/custom/prm.json"}},
		{"path-aware before root", "/.well-known/oauth-protected-resource/mcp", false, []string{"/.well-known/oauth-protected-resource/mcp"}},
		{"root last", "/.well-known/oauth-protected-resource", false, []string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.set(func(e *env) {
				e.prmPath = tc.prmPath
				if tc.prmPath == "/.well-known/oauth-protected-resource" {
					e.prmDoc = func() map[string]any {
						return map[string]any{"resource": e.rs.URL, "authorization_servers": []string{e.issuer()}}
					}
				}
				e.wwwAuth = func() string {
					if tc.inHeader {
						return fmt.Sprintf(`Bearer resource_metadata="%s%s"`, e.rs.URL, tc.prmPath)
					}
					return `Bearer realm="mcp"`
				}
			})
			_, c := e.client(t, Config{}, &fakeHost{can: true})
			st, _, err := post(c, e.mcpURL(), `{}`)
			require.NoError(t, err)
			require.Equal(t, 200, st)
			var got []string
			for _, r := range e.seen().metaReqs {
				if !strings.Contains(r.path, "authorization-server") && !strings.Contains(r.path, "openid") {
					got = append(got, r.path)
				}
			}
			require.Equal(t, tc.wantPaths, got)
			if tc.prmPath == "/.well-known/oauth-protected-resource" {
				// The PRM resource is sent exactly as published.
				s := e.seen()
				require.Equal(t, e.rs.URL, s.authzReqs[0].query.Get("resource"))
				require.Equal(t, e.rs.URL, s.tokenReqs[0].form.Get("resource"))
			}
		})
	}
}

func TestPRMValidation(t *testing.T) {
	tests := []struct {
		name    string
		doc     func(e *env) map[string]any
		wantMsg string
	}{
		{"resource mismatch", func(e *env) map[string]any {
			return map[string]any{"resource": "https://evil.example.com/mcp", "authorization_servers": []string{e.issuer()}}
		}, "is for resource"},
		{"sibling path", func(e *env) map[string]any {
			return map[string]any{"resource": e.rs.URL + "/mcp2", "authorization_servers": []string{e.issuer()}}
		}, "is for resource"},
		{"no authorization servers", func(e *env) map[string]any {
			return map[string]any{"resource": e.rs.URL + "/mcp"}
		}, "lists no authorization_servers"},
		{"insecure authorization server", func(e *env) map[string]any {
			return map[string]any{"resource": e.rs.URL + "/mcp", "authorization_servers": []string{"http://as.example.com"}}
		}, "no usable authorization server"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.set(func(e *env) { e.prmDoc = func() map[string]any { return tc.doc(e) } })
			_, c := e.client(t, Config{}, &fakeHost{can: true})
			_, _, err := post(c, e.mcpURL(), `{}`)
			ae := authErr(t, err)
			require.Contains(t, ae.Message, tc.wantMsg)
			require.Equal(t, e.prmURL(), ae.Metadata["resource_metadata_url"])
			require.Empty(t, e.seen().authzReqs, "never proceeds to authorization")
		})
	}
}

func TestASMetadataOrder(t *testing.T) {
	tests := []struct {
		name     string
		prefix   string
		served   string
		wantReqs []string
	}{
		{"no path, RFC 8414", "", "/.well-known/oauth-authorization-server",
			[]string{"/.well-known/oauth-authorization-server"}},
		{"no path, OIDC", "", "/.well-known/openid-configuration",
			[]string{"/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"}},
		{"path, RFC 8414 inserted", "/tenant1", "/.well-known/oauth-authorization-server/tenant1",
			[]string{"/.well-known/oauth-authorization-server/tenant1"}},
		{"path, OIDC inserted", "/tenant1", "/.well-known/openid-configuration/tenant1",
			[]string{"/.well-known/oauth-authorization-server/tenant1", "/.well-known/openid-configuration/tenant1"}},
		{"path, OIDC appended", "/tenant1", "/tenant1/.well-known/openid-configuration",
			[]string{"/.well-known/oauth-authorization-server/tenant1", "/.well-known/openid-configuration/tenant1", "/tenant1/.well-known/openid-configuration"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.set(func(e *env) { e.asPrefix, e.asMetaPath = tc.prefix, tc.served })
			_, c := e.client(t, Config{}, &fakeHost{can: true})
			st, _, err := post(c, e.mcpURL(), `{}`)
			require.NoError(t, err)
			require.Equal(t, 200, st)
			var got []string
			for _, r := range e.seen().metaReqs {
				if !strings.Contains(r.path, "protected-resource") {
					got = append(got, r.path)
				}
			}
			require.Equal(t, tc.wantReqs, got)
		})
	}
}

func TestASMetadataIssuerMismatchNotUsed(t *testing.T) {
	e := newEnv(t)
	e.set(func(e *env) { e.asMeta = map[string]any{"issuer": "https://attacker.example.com"} })
	_, c := e.client(t, Config{}, &fakeHost{can: true})
	_, _, err := post(c, e.mcpURL(), `{}`)
	ae := authErr(t, err)
	require.Contains(t, ae.Message, "no usable authorization server metadata")
	s := e.seen()
	require.Empty(t, s.regReqs)
	require.Empty(t, s.authzReqs)
	require.Empty(t, s.tokenReqs)
	list := ae.Metadata["authorization_server_metadata"].([]any)
	require.NotEmpty(t, list)
	require.Equal(t, []string{e.issuer()}, ae.Metadata["authorization_servers"])
}

func TestLegacy20250326(t *testing.T) {
	t.Run("metadata at the MCP origin", func(t *testing.T) {
		e := newEnv(t)
		e.set(func(e *env) { e.prmPath = "-" })
		// The MCP server is its own authorization server here: route AS
		// paths of the MCP origin to the AS handler.
		e.rs.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/mcp" || strings.Contains(r.URL.Path, "protected-resource") {
				e.serveRS(w, r)
				return
			}
			e.serveAS(w, r)
		})
		e.set(func(e *env) {
			e.asMeta = map[string]any{"issuer": e.rs.URL, "authorization_endpoint": e.rs.URL + "/authorize",
				"token_endpoint": e.rs.URL + "/token", "registration_endpoint": e.rs.URL + "/register"}
			e.issMode = "omit"
			e.asMeta["authorization_response_iss_parameter_supported"] = nil
		})
		_, c := e.client(t, Config{}, &fakeHost{can: true})
		st, _, err := post(c, e.mcpURL(), `{}`)
		require.NoError(t, err)
		require.Equal(t, 200, st)
		s := e.seen()
		require.Len(t, s.tokenReqs, 1)
		require.Len(t, s.regReqs, 1)
	})
	t.Run("root metadata naming another issuer is accepted with a warning", func(t *testing.T) {
		// The 0.1.16 conformance scenario oauth-metadata-backcompat: the
		// root metadata's issuer is <base>/oauth.
		e := newEnv(t)
		e.set(func(e *env) { e.prmPath = "-" })
		e.rs.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/mcp" || strings.Contains(r.URL.Path, "protected-resource") {
				e.serveRS(w, r)
				return
			}
			e.serveAS(w, r)
		})
		e.set(func(e *env) {
			e.asMeta = map[string]any{"issuer": e.rs.URL + "/oauth", "authorization_endpoint": e.rs.URL + "/authorize",
				"token_endpoint": e.rs.URL + "/token", "registration_endpoint": e.rs.URL + "/register"}
			e.issMode = "omit"
			e.asMeta["authorization_response_iss_parameter_supported"] = nil
		})
		host := &fakeHost{can: true}
		_, c := e.client(t, Config{}, host)
		st, _, err := post(c, e.mcpURL(), `{}`)
		require.NoError(t, err)
		require.Equal(t, 200, st)
		require.Len(t, e.seen().tokenReqs, 1)
		logs := strings.Join(host.snapshot().logs, "\n")
		require.Contains(t, logs, "warning: auth: the authorization server metadata at "+e.rs.URL+"/.well-known/oauth-authorization-server names issuer "+e.rs.URL+"/oauth")
	})
	t.Run("root metadata naming a non-URL issuer is not used", func(t *testing.T) {
		e := newEnv(t)
		e.set(func(e *env) { e.prmPath = "-" })
		e.rs.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/mcp" || strings.Contains(r.URL.Path, "protected-resource") {
				e.serveRS(w, r)
				return
			}
			e.serveAS(w, r)
		})
		e.set(func(e *env) {
			e.asMeta = map[string]any{"issuer": "not a url", "authorization_endpoint": e.rs.URL + "/authorize",
				"token_endpoint": e.rs.URL + "/token", "registration_endpoint": e.rs.URL + "/register"}
		})
		_, c := e.client(t, Config{}, &fakeHost{can: true})
		_, _, err := post(c, e.mcpURL(), `{}`)
		ae := authErr(t, err)
		require.Contains(t, ae.Message, "no usable authorization server metadata")
		require.Empty(t, e.seen().tokenReqs)
	})
	t.Run("default endpoints when nothing is published", func(t *testing.T) {
		e := newEnv(t)
		e.set(func(e *env) { e.prmPath = "-"; e.issMode = "omit" })
		e.rs.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/authorize", "/token", "/register":
				e.serveAS(w, r) // asPrefix "" so these are the AS routes
			default:
				e.serveRS(w, r) // well-known URLs 404 here
			}
		})
		_, c := e.client(t, Config{}, &fakeHost{can: true})
		st, _, err := post(c, e.mcpURL(), `{}`)
		require.NoError(t, err)
		require.Equal(t, 200, st)
		s := e.seen()
		require.Len(t, s.regReqs, 1)
		require.Len(t, s.authzReqs, 1, "PKCE is used without metadata to check it")
		require.Equal(t, "S256", s.authzReqs[0].query.Get("code_challenge_method"))
		require.Len(t, s.tokenReqs, 1)
		require.Equal(t, e.mcpURL(), s.tokenReqs[0].form.Get("resource"))
	})
}

func TestPKCEGate(t *testing.T) {
	for _, methods := range []any{nil, []string{"plain"}} {
		t.Run(fmt.Sprint(methods), func(t *testing.T) {
			e := newEnv(t)
			e.set(func(e *env) {
				e.asMeta = map[string]any{"code_challenge_methods_supported": methods}
				if methods == nil {
					e.asMeta = map[string]any{"code_challenge_methods_supported": nil}
				}
			})
			_, c := e.client(t, Config{}, &fakeHost{can: true})
			_, _, err := post(c, e.mcpURL(), `{}`)
			ae := authErr(t, err)
			require.Contains(t, ae.Message, "PKCE S256")
			require.Empty(t, e.seen().authzReqs)
		})
	}
}

func TestMetadataFetchPolicy(t *testing.T) {
	t.Run("cross-origin redirect refused", func(t *testing.T) {
		e := newEnv(t)
		other := newEnv(t)
		e.rs.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasPrefix(r.URL.Path, "/.well-known/") {
				http.Redirect(w, r, other.rs.URL+r.URL.Path, http.StatusFound)
				return
			}
			e.serveRS(w, r)
		})
		_, c := e.client(t, Config{}, &fakeHost{can: true})
		_, _, err := post(c, e.mcpURL(), `{}`)
		ae := authErr(t, err)
		require.Empty(t, other.seen().metaReqs, "the other origin is never contacted")
		require.Contains(t, ae.Message, "redirect to another origin")
	})
	t.Run("same-origin redirect followed", func(t *testing.T) {
		e := newEnv(t)
		e.rs.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/.well-known/oauth-protected-resource/mcp" {
				http.Redirect(w, r, "/custom/prm.json", http.StatusFound)
				return
			}
			e.serveRS(w, r)
		})
		e.set(func(e *env) { e.prmPath = "/custom/prm.json"; e.wwwAuth = func() string { return "Bearer" } })
		_, c := e.client(t, Config{}, &fakeHost{can: true})
		st, _, err := post(c, e.mcpURL(), `{}`)
		require.NoError(t, err)
		require.Equal(t, 200, st)
	})
	t.Run("oversized document", func(t *testing.T) {
		e := newEnv(t)
		e.rs.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasPrefix(r.URL.Path, "/.well-known/") {
				w.WriteHeader(200)
				_, _ = w.Write([]byte(`{"x":"` + strings.Repeat("a", maxMetadataBytes) + `"}`))
				return
			}
			e.serveRS(w, r)
		})
		_, c := e.client(t, Config{}, &fakeHost{can: true})
		_, _, err := post(c, e.mcpURL(), `{}`)
		ae := authErr(t, err)
		require.Contains(t, ae.Message, "larger than")
	})
}
