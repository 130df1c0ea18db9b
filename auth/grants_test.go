package auth

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"math/big"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/lemonmcp/lemonmcp/auth/tokenstore"
	"github.com/lemonmcp/lemonmcp/internal/jsonx"
	"github.com/lemonmcp/lemonmcp/store"
	"github.com/stretchr/testify/require"
)

func TestClientIdentity(t *testing.T) {
	t.Run("pre-registered with basic", func(t *testing.T) {
		e := newEnv(t)
		e.set(func(e *env) {
			e.noDCR = true
			e.asMeta = map[string]any{"token_endpoint_auth_methods_supported": []string{"client_secret_basic"}}
		})
		_, c := e.client(t, Config{ClientID: "pre client", ClientSecret: "p:w&d"}, &fakeHost{can: true})
		st, _, err := post(c, e.mcpURL(), `{}`)
		require.NoError(t, err)
		require.Equal(t, 200, st)
		s := e.seen()
		require.Empty(t, s.regReqs)
		raw, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(s.tokenReqs[0].header.Get("Authorization"), "Basic "))
		require.Equal(t, "pre+client:p%3Aw%26d", string(raw), "RFC 6749 §2.3.1 form-encodes both parts")
		require.False(t, s.tokenReqs[0].form.Has("client_id"), "no client_id in the body with basic")
	})
	t.Run("pre-registered bound to another issuer", func(t *testing.T) {
		e := newEnv(t)
		_, c := e.client(t, Config{ClientID: "c", ClientIssuer: "https://old-as.example.com"}, &fakeHost{can: true})
		_, _, err := post(c, e.mcpURL(), `{}`)
		ae := authErr(t, err)
		require.Contains(t, ae.Message, "registered with")
		require.Empty(t, e.seen().authzReqs)
	})
	t.Run("CIMD when supported", func(t *testing.T) {
		e := newEnv(t)
		e.set(func(e *env) { e.asMeta = map[string]any{"client_id_metadata_document_supported": true} })
		cimd := "https://client.example.com/meta.json"
		_, c := e.client(t, Config{ClientMetadataURL: cimd}, &fakeHost{can: true})
		st, _, err := post(c, e.mcpURL(), `{}`)
		require.NoError(t, err)
		require.Equal(t, 200, st)
		s := e.seen()
		require.Empty(t, s.regReqs)
		require.Equal(t, cimd, s.authzReqs[0].query.Get("client_id"))
		require.Equal(t, cimd, s.tokenReqs[0].form.Get("client_id"))
		require.Empty(t, s.tokenReqs[0].header.Get("Authorization"))
	})
	t.Run("CIMD not supported falls back to DCR", func(t *testing.T) {
		e := newEnv(t)
		_, c := e.client(t, Config{ClientMetadataURL: "https://client.example.com/meta.json"}, &fakeHost{can: true})
		_, _, err := post(c, e.mcpURL(), `{}`)
		require.NoError(t, err)
		require.Len(t, e.seen().regReqs, 1)
	})
	t.Run("nothing available", func(t *testing.T) {
		e := newEnv(t)
		e.set(func(e *env) { e.noDCR = true })
		_, c := e.client(t, Config{}, &fakeHost{can: true})
		_, _, err := post(c, e.mcpURL(), `{}`)
		ae := authErr(t, err)
		require.Contains(t, ae.Message, "auth.client_id")
	})
	t.Run("registration refused", func(t *testing.T) {
		e := newEnv(t)
		e.set(func(e *env) {
			e.regFn = func(map[string]any) (int, map[string]any) {
				return 400, map[string]any{"error": "invalid_redirect_uri"}
			}
		})
		_, c := e.client(t, Config{RedirectURI: "https://app.example.com/cb"}, &fakeHost{can: true})
		_, _, err := post(c, e.mcpURL(), `{}`)
		ae := authErr(t, err)
		require.Contains(t, ae.Message, "invalid_redirect_uri")
		require.Equal(t, "web", e.seen().regReqs[0].json["application_type"])
	})
}

func TestTokenEndpointAuthMethod(t *testing.T) {
	tests := []struct {
		name   string
		listed []string
		dcr    map[string]any
		cfg    Config
		want   string
	}{
		{"basic listed", []string{"client_secret_basic"}, map[string]any{"client_id": "c", "client_secret": "s", "token_endpoint_auth_method": "client_secret_basic"}, Config{}, MethodClientSecretBasic},
		{"post listed", []string{"client_secret_post"}, map[string]any{"client_id": "c", "client_secret": "s", "token_endpoint_auth_method": "client_secret_post"}, Config{}, MethodClientSecretPost},
		{"none listed", []string{"none"}, map[string]any{"client_id": "c", "token_endpoint_auth_method": "none"}, Config{}, MethodNone},
		{"none listed, secret issued anyway", []string{"none"}, map[string]any{"client_id": "c", "client_secret": "s"}, Config{}, MethodNone},
		{"nothing listed, secret", nil, map[string]any{"client_id": "c", "client_secret": "s"}, Config{}, MethodClientSecretBasic},
		{"nothing listed, no secret", nil, map[string]any{"client_id": "c"}, Config{}, MethodNone},
		{"preference basic over post", []string{"client_secret_post", "client_secret_basic"}, map[string]any{"client_id": "c", "client_secret": "s"}, Config{}, MethodClientSecretBasic},
		{"DCR answer wins when listed", []string{"client_secret_basic", "client_secret_post"}, map[string]any{"client_id": "c", "client_secret": "s", "token_endpoint_auth_method": "client_secret_post"}, Config{}, MethodClientSecretPost},
		{"configured", []string{"client_secret_basic", "client_secret_post"}, nil, Config{ClientID: "c", ClientSecret: "s", TokenAuthMethod: MethodClientSecretPost}, MethodClientSecretPost},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.set(func(e *env) {
				e.asMeta = map[string]any{"token_endpoint_auth_methods_supported": tc.listed}
				if tc.listed == nil {
					e.asMeta["token_endpoint_auth_methods_supported"] = nil
				}
				e.regFn = func(map[string]any) (int, map[string]any) { return 201, tc.dcr }
			})
			_, c := e.client(t, tc.cfg, &fakeHost{can: true})
			_, _, err := post(c, e.mcpURL(), `{}`)
			require.NoError(t, err)
			tr := e.seen().tokenReqs[0]
			got := MethodNone
			if strings.HasPrefix(tr.header.Get("Authorization"), "Basic ") {
				got = MethodClientSecretBasic
			} else if tr.form.Has("client_secret") {
				got = MethodClientSecretPost
			}
			require.Equal(t, tc.want, got)
			if got != MethodClientSecretBasic {
				require.Equal(t, "c", tr.form.Get("client_id"))
			}
		})
	}
}

func pemOf(t *testing.T, key any) string {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	require.NoError(t, err)
	return string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
}

// verifyJWS checks a compact JWS with the standard library.
func verifyJWS(t *testing.T, tok string, pub crypto.PublicKey) (map[string]any, map[string]any) {
	parts := strings.Split(tok, ".")
	require.Len(t, parts, 3)
	hb, _ := base64.RawURLEncoding.DecodeString(parts[0])
	cb, _ := base64.RawURLEncoding.DecodeString(parts[1])
	sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
	var hdr, claims map[string]any
	require.NoError(t, jsonx.Unmarshal(hb, &hdr))
	require.NoError(t, jsonx.Unmarshal(cb, &claims))
	input := []byte(parts[0] + "." + parts[1])
	digest := sha256.Sum256(input)
	switch k := pub.(type) {
	case *ecdsa.PublicKey:
		n := len(sig) / 2
		require.True(t, ecdsa.Verify(k, digest[:], new(big.Int).SetBytes(sig[:n]), new(big.Int).SetBytes(sig[n:])))
	case *rsa.PublicKey:
		if hdr["alg"] == "PS256" {
			require.NoError(t, rsa.VerifyPSS(k, crypto.SHA256, digest[:], sig, nil))
		} else {
			require.NoError(t, rsa.VerifyPKCS1v15(k, crypto.SHA256, digest[:], sig))
		}
	case ed25519.PublicKey:
		require.True(t, ed25519.Verify(k, input, sig))
	}
	return hdr, claims
}

func TestClientCredentialsPrivateKeyJWT(t *testing.T) {
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	rk, _ := rsa.GenerateKey(rand.Reader, 2048)
	_, ed, _ := ed25519.GenerateKey(rand.Reader)
	tests := []struct {
		name string
		key  crypto.Signer
		alg  string
		want string
	}{
		{"ES256", ec, "", "ES256"},
		{"RS256", rk, "", "RS256"},
		{"PS256", rk, "PS256", "PS256"},
		{"EdDSA", ed, "", "EdDSA"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.set(func(e *env) {
				e.asMeta = map[string]any{"token_endpoint_auth_methods_supported": []string{"private_key_jwt"}, "grant_types_supported": []string{"client_credentials"}}
			})
			cfg := Config{ClientID: "cc-client", PrivateKey: &PrivateKeyJWT{KeyPEM: pemOf(t, tc.key), Alg: tc.alg, KeyID: "k1"}, Scopes: []string{"s1"}}
			_, c := e.client(t, cfg, &fakeHost{can: false})
			st, _, err := post(c, e.mcpURL(), `{}`)
			require.NoError(t, err)
			require.Equal(t, 200, st)
			tr := e.seen().tokenReqs[0].form
			require.Equal(t, "client_credentials", tr.Get("grant_type"))
			require.Equal(t, "s1", tr.Get("scope"))
			require.Equal(t, e.mcpURL(), tr.Get("resource"))
			require.Equal(t, "urn:ietf:params:oauth:client-assertion-type:jwt-bearer", tr.Get("client_assertion_type"))
			hdr, claims := verifyJWS(t, tr.Get("client_assertion"), tc.key.Public())
			require.Equal(t, tc.want, hdr["alg"])
			require.Equal(t, "k1", hdr["kid"])
			require.Equal(t, "cc-client", claims["iss"])
			require.Equal(t, "cc-client", claims["sub"])
			require.Equal(t, e.issuer(), claims["aud"])
			require.NotEmpty(t, claims["jti"])
			require.NotNil(t, claims["iat"])
			require.NotNil(t, claims["exp"])
		})
	}
}

func TestFlowAuto(t *testing.T) {
	t.Run("client credentials with a secret", func(t *testing.T) {
		e := newEnv(t)
		e.set(func(e *env) {
			e.asMeta = map[string]any{"token_endpoint_auth_methods_supported": []string{"client_secret_basic"}}
		})
		_, c := e.client(t, Config{ClientID: "c", ClientSecret: "s"}, &fakeHost{can: false})
		st, _, err := post(c, e.mcpURL(), `{}`)
		require.NoError(t, err)
		require.Equal(t, 200, st)
		require.Equal(t, "client_credentials", e.seen().tokenReqs[0].form.Get("grant_type"))
	})
	t.Run("nothing configured", func(t *testing.T) {
		e := newEnv(t)
		_, c := e.client(t, Config{}, nil)
		_, _, err := post(c, e.mcpURL(), `{}`)
		ae := authErr(t, err)
		require.Contains(t, ae.Message, "auth.client_secret")
		require.Equal(t, e.mcpURL(), ae.Metadata["resource"])
		require.Equal(t, []string{e.issuer()}, ae.Metadata["authorization_servers"])
		require.Equal(t, e.prmURL(), ae.Metadata["resource_metadata_url"])
		require.Contains(t, ae.Metadata["www_authenticate"], "resource_metadata")
		list := ae.Metadata["authorization_server_metadata"].([]any)
		md := list[0].(map[string]any)
		require.Equal(t, e.issuer(), md["issuer"])
		require.Equal(t, e.issuer()+"/token", md["token_endpoint"])
		require.Equal(t, e.as.URL+"/.well-known/oauth-authorization-server", md["metadata_url"])
		require.Empty(t, e.seen().tokenReqs)
	})
}

func TestIssuerInAuthorizationResponse(t *testing.T) {
	tests := []struct {
		mode       string
		advertised any // true, false or nil (absent)
		ok         bool
	}{
		{"correct", true, true},
		{"omit", nil, true},
		{"omit", false, true},
		{"omit", true, false},
		{"wrong", true, false},
		{"wrong", nil, false},
		{"normalized", true, false},
		{"correct", nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.mode+"/"+jsonxString(tc.advertised), func(t *testing.T) {
			e := newEnv(t)
			e.set(func(e *env) {
				e.issMode = tc.mode
				e.asMeta = map[string]any{"authorization_response_iss_parameter_supported": tc.advertised}
			})
			_, c := e.client(t, Config{}, &fakeHost{can: true})
			st, _, err := post(c, e.mcpURL(), `{}`)
			if tc.ok {
				require.NoError(t, err)
				require.Equal(t, 200, st)
				return
			}
			ae := authErr(t, err)
			require.Contains(t, ae.Message, "iss")
			require.Empty(t, e.seen().tokenReqs, "the code never reaches the token endpoint")
		})
	}
}

func jsonxString(v any) string { return string(jsonx.MustMarshal(v)) }

func TestAuthorizationReply(t *testing.T) {
	tests := []struct {
		name    string
		reply   func(req *AuthorizationRequest, loc string) *AuthorizationReply
		wantErr string
	}{
		{"fields form", func(req *AuthorizationRequest, loc string) *AuthorizationReply {
			u, _ := url.Parse(loc)
			return &AuthorizationReply{Code: u.Query().Get("code"), State: req.State, Iss: req.Issuer}
		}, ""},
		{"state missing", func(req *AuthorizationRequest, loc string) *AuthorizationReply {
			return &AuthorizationReply{Code: "x", Iss: req.Issuer}
		}, "state"},
		{"state wrong in redirect", func(req *AuthorizationRequest, loc string) *AuthorizationReply {
			return &AuthorizationReply{RedirectURL: strings.Replace(loc, "state=", "state=x", 1)}
		}, "state"},
		{"error reply", func(req *AuthorizationRequest, loc string) *AuthorizationReply {
			return &AuthorizationReply{State: req.State, Iss: req.Issuer, Error: "access_denied", ErrorDescription: "user said no"}
		}, "access_denied: user said no"},
		{"error from another issuer is not shown", func(req *AuthorizationRequest, loc string) *AuthorizationReply {
			return &AuthorizationReply{State: req.State, Iss: "https://evil.example.com", Error: "access_denied", ErrorDescription: "visit evil"}
		}, "iss does not match"},
		{"no code", func(req *AuthorizationRequest, loc string) *AuthorizationReply {
			return &AuthorizationReply{State: req.State, Iss: req.Issuer}
		}, "no code"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			_, c := e.client(t, Config{}, &fakeHost{can: true, reply: tc.reply})
			st, _, err := post(c, e.mcpURL(), `{}`)
			if tc.wantErr == "" {
				require.NoError(t, err)
				require.Equal(t, 200, st)
				return
			}
			ae := authErr(t, err)
			require.Contains(t, ae.Message, tc.wantErr)
			require.NotContains(t, ae.Message, "visit evil")
			require.Empty(t, e.seen().tokenReqs)
		})
	}
	t.Run("host failure", func(t *testing.T) {
		e := newEnv(t)
		_, c := e.client(t, Config{}, &fakeHost{can: true, authErr: errors.New("user closed the browser")})
		_, _, err := post(c, e.mcpURL(), `{}`)
		ae := authErr(t, err)
		require.Contains(t, ae.Message, "user closed the browser")
	})
}

func TestScopesEndToEnd(t *testing.T) {
	tests := []struct {
		name      string
		challenge string
		prmScopes []string
		asScopes  []string
		cfg       []string
		want      string
	}{
		{"from challenge", `scope="mcp:basic"`, []string{"x"}, nil, []string{"k"}, "mcp:basic"},
		{"from config", ``, []string{"x"}, nil, []string{"k"}, "k"},
		{"from PRM", ``, []string{"mcp:basic", "mcp:read"}, nil, nil, "mcp:basic mcp:read"},
		{"omitted", ``, nil, nil, nil, ""},
		{"offline_access added", ``, []string{"mcp:basic"}, []string{"mcp:basic", "offline_access"}, nil, "mcp:basic offline_access"},
		{"offline_access not listed", ``, []string{"mcp:basic"}, []string{"mcp:basic", "mcp:read"}, nil, "mcp:basic"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.set(func(e *env) {
				e.wwwAuth = func() string { return `Bearer resource_metadata="` + e.prmURL() + `", ` + tc.challenge }
				e.prmDoc = func() map[string]any {
					d := map[string]any{"resource": e.mcpURL(), "authorization_servers": []string{e.issuer()}}
					if tc.prmScopes != nil {
						d["scopes_supported"] = tc.prmScopes
					}
					return d
				}
				if tc.asScopes != nil {
					e.asMeta = map[string]any{"scopes_supported": tc.asScopes}
				}
			})
			_, c := e.client(t, Config{Scopes: tc.cfg}, &fakeHost{can: true})
			_, _, err := post(c, e.mcpURL(), `{}`)
			require.NoError(t, err)
			s := e.seen()
			require.Equal(t, tc.want, s.authzReqs[0].query.Get("scope"))
			require.Equal(t, tc.want != "", s.authzReqs[0].query.Has("scope"))
		})
	}
}

func TestStepUp(t *testing.T) {
	t.Run("union of scopes, then success", func(t *testing.T) {
		e := newEnv(t)
		e.set(func(e *env) {
			e.wwwAuth = func() string { return `Bearer scope="mcp:basic", resource_metadata="` + e.prmURL() + `"` }
			e.rsFn = func(r *http.Request, scopes []string, ok bool) (int, string) {
				if !ok {
					return 401, ""
				}
				if r.Header.Get("X-Op") == "write" && !contains(scopes, "mcp:write") {
					return 403, `Bearer error="insufficient_scope", scope="mcp:write", resource_metadata="` + e.prmURL() + `"`
				}
				return 200, ""
			}
		})
		_, c := e.client(t, Config{}, &fakeHost{can: true})
		st, _, err := post(c, e.mcpURL(), `{}`)
		require.NoError(t, err)
		require.Equal(t, 200, st)
		st, body, err := post(c, e.mcpURL(), `{"w":1}`, "X-Op", "write")
		require.NoError(t, err)
		require.Equal(t, 200, st)
		require.Equal(t, `echo:{"w":1}`, body)
		s := e.seen()
		require.Len(t, s.authzReqs, 2)
		require.Equal(t, "mcp:basic", s.authzReqs[0].query.Get("scope"))
		require.Equal(t, "mcp:basic mcp:write", s.authzReqs[1].query.Get("scope"))
	})
	t.Run("retry limit", func(t *testing.T) {
		e := newEnv(t)
		e.set(func(e *env) {
			e.wwwAuth = func() string { return `Bearer scope="mcp:admin", resource_metadata="` + e.prmURL() + `"` }
			e.rsFn = func(r *http.Request, scopes []string, ok bool) (int, string) {
				if !ok {
					return 401, ""
				}
				return 403, `Bearer error="insufficient_scope", scope="mcp:admin", error_description="never"`
			}
		})
		_, c := e.client(t, Config{}, &fakeHost{can: true})
		_, _, err := post(c, e.mcpURL(), `{}`)
		ae := authErr(t, err)
		require.Contains(t, ae.Message, "insufficient_scope")
		require.Equal(t, "insufficient_scope", ae.Metadata["error"])
		require.Len(t, e.seen().authzReqs, 3, "the first authorization plus MaxStepUps (2)")
		_, _, err = post(c, e.mcpURL(), `{}`)
		authErr(t, err)
		require.Len(t, e.seen().authzReqs, 3, "a scope set that failed is not retried by later requests")
	})
	t.Run("client credentials step up", func(t *testing.T) {
		e := newEnv(t)
		e.set(func(e *env) { e.required = []string{"a", "b"} })
		_, c := e.client(t, Config{ClientID: "c", ClientSecret: "s", Scopes: []string{"a"}}, nil)
		st, _, err := post(c, e.mcpURL(), `{}`)
		require.NoError(t, err)
		require.Equal(t, 200, st)
		s := e.seen()
		require.Len(t, s.tokenReqs, 2)
		require.Equal(t, "a", s.tokenReqs[0].form.Get("scope"))
		require.Equal(t, "a b", s.tokenReqs[1].form.Get("scope"))
	})
}

func TestRefresh(t *testing.T) {
	t.Run("on 401 refresh first, rotation kept", func(t *testing.T) {
		e := newEnv(t)
		h := &fakeHost{can: true}
		_, c := e.client(t, Config{}, h)
		_, _, err := post(c, e.mcpURL(), `{}`)
		require.NoError(t, err)
		e.set(func(e *env) { e.tokens = map[string][]string{} }) // the server forgets tok-1
		st, _, err := post(c, e.mcpURL(), `{}`)
		require.NoError(t, err)
		require.Equal(t, 200, st)
		s := e.seen()
		require.Len(t, s.tokenReqs, 2)
		require.Equal(t, "refresh_token", s.tokenReqs[1].form.Get("grant_type"))
		require.Equal(t, "rt-1", s.tokenReqs[1].form.Get("refresh_token"))
		require.Equal(t, e.mcpURL(), s.tokenReqs[1].form.Get("resource"))
		require.Len(t, h.snapshot().authReqs, 1, "no new authorization")
		// rt-2 (rotated) is used next.
		e.set(func(e *env) { e.tokens = map[string][]string{} })
		_, _, err = post(c, e.mcpURL(), `{}`)
		require.NoError(t, err)
		require.Equal(t, "rt-2", e.seen().tokenReqs[2].form.Get("refresh_token"))
	})
	t.Run("failed refresh falls back to the flow", func(t *testing.T) {
		e := newEnv(t)
		h := &fakeHost{can: true}
		_, c := e.client(t, Config{ClientID: "c", RefreshToken: "stale"}, h)
		st, _, err := post(c, e.mcpURL(), `{}`)
		require.NoError(t, err)
		require.Equal(t, 200, st)
		s := e.seen()
		require.Equal(t, "refresh_token", s.tokenReqs[0].form.Get("grant_type"))
		require.Equal(t, "authorization_code", s.tokenReqs[1].form.Get("grant_type"))
	})
	t.Run("absent refresh token keeps the old one", func(t *testing.T) {
		e := newEnv(t)
		n := 0
		e.set(func(e *env) {
			e.tokenFn = func(form url.Values, _ http.Header) (int, map[string]any) {
				n++
				if form.Get("grant_type") == "refresh_token" {
					return 200, map[string]any{"access_token": "refreshed-" + form.Get("refresh_token") + "-" + string(rune('0'+n))}
				}
				return 200, map[string]any{"access_token": "first", "refresh_token": "keep-me"}
			}
		})
		_, c := e.client(t, Config{}, &fakeHost{can: true})
		for i := 0; i < 3; i++ {
			_, _, err := post(c, e.mcpURL(), `{}`)
			require.NoError(t, err)
			e.set(func(e *env) { e.tokens = map[string][]string{} })
		}
		s := e.seen()
		require.Equal(t, "keep-me", s.tokenReqs[1].form.Get("refresh_token"))
		require.Equal(t, "keep-me", s.tokenReqs[2].form.Get("refresh_token"))
	})
	t.Run("proactive refresh of an expired token", func(t *testing.T) {
		e := newEnv(t)
		m, c := e.client(t, Config{}, &fakeHost{can: true})
		_, _, err := post(c, e.mcpURL(), `{}`)
		require.NoError(t, err)
		m.mu.Lock()
		m.now = func() time.Time { return time.Now().Add(3600*time.Second - 10*time.Second) }
		m.mu.Unlock()
		_, _, err = post(c, e.mcpURL(), `{}`)
		require.NoError(t, err)
		s := e.seen()
		require.Len(t, s.tokenReqs, 2)
		require.Equal(t, "refresh_token", s.tokenReqs[1].form.Get("grant_type"))
		last := s.mcpReqs[len(s.mcpReqs)-1]
		require.Equal(t, "Bearer tok-2", last.header.Get("Authorization"))
		require.Len(t, s.mcpReqs, 3, "no 401 round trip: refreshed before sending")
	})
}

// appGrants are the grants of the host's application store, as the
// library keeps them there (store_load / store_save).
func appGrants(h *fakeHost) tokenstore.Grants {
	return tokenstore.Grants{Store: store.NewApp(h.application(false).Ask)}
}

func appStoreConfig(cfg Config) Config {
	cfg.TokenStoreSpec = &store.Spec{Type: "app"}
	return cfg
}

// TestAppTokenStore: auth.token_store {"type": "app"} keeps the grant in
// the application's store through store_load / store_save.
func TestAppTokenStore(t *testing.T) {
	t.Run("loaded token goes on the first request", func(t *testing.T) {
		e := newEnv(t)
		e.set(func(e *env) { e.tokens["stored"] = nil })
		h := &fakeHost{can: true}
		_, _, err := appGrants(h).CompareAndSave(context.Background(), defaultStoreKey(e.mcpURL(), ""), 0,
			&tokenstore.Record{AccessToken: "stored", Generation: 1, State: tokenstore.StateOK, Issuer: "x"})
		require.NoError(t, err)
		_, c := e.client(t, appStoreConfig(Config{}), h)
		st, _, err := post(c, e.mcpURL(), `{"method":"initialize"}`)
		require.NoError(t, err)
		require.Equal(t, 200, st)
		_, _, err = post(c, e.mcpURL(), `{}`)
		require.NoError(t, err)
		s := e.seen()
		require.Equal(t, "Bearer stored", s.mcpReqs[0].header.Get("Authorization"))
		require.Empty(t, s.tokenReqs)
		require.Empty(t, s.metaReqs)
		require.Equal(t, 1, h.snapshot().loads)
	})
	t.Run("saved after every grant", func(t *testing.T) {
		e := newEnv(t)
		h := &fakeHost{can: true}
		_, c := e.client(t, appStoreConfig(Config{}), h)
		_, _, err := post(c, e.mcpURL(), `{}`)
		require.NoError(t, err)
		rec, _, err := appGrants(h).Load(context.Background(), defaultStoreKey(e.mcpURL(), ""))
		require.NoError(t, err)
		require.Equal(t, "tok-1", rec.AccessToken)
		require.Equal(t, "rt-1", rec.RefreshToken)
		require.Equal(t, e.issuer(), rec.Issuer)
		require.Equal(t, e.mcpURL(), rec.Resource)
		require.Equal(t, "dcr-client-1", rec.ClientID)
		require.Equal(t, "dcr-secret", rec.ClientSecret)
		require.InDelta(t, time.Now().Add(time.Hour).UnixMilli(), rec.ExpiresAt, 60000)
	})
	t.Run("pre-registered secrets are not saved", func(t *testing.T) {
		e := newEnv(t)
		h := &fakeHost{}
		_, c := e.client(t, appStoreConfig(Config{ClientID: "c", ClientSecret: "s"}), h)
		_, _, err := post(c, e.mcpURL(), `{}`)
		require.NoError(t, err)
		rec, _, err := appGrants(h).Load(context.Background(), defaultStoreKey(e.mcpURL(), "c"))
		require.NoError(t, err)
		require.NotEmpty(t, rec.AccessToken)
		require.Empty(t, rec.ClientID)
		require.Empty(t, rec.ClientSecret)
	})
	t.Run("record of another issuer is not reused", func(t *testing.T) {
		e := newEnv(t)
		h := &fakeHost{can: true}
		_, _, err := appGrants(h).CompareAndSave(context.Background(), defaultStoreKey(e.mcpURL(), ""), 0,
			&tokenstore.Record{AccessToken: "old", RefreshToken: "old-rt", Generation: 1, Issuer: "https://old.example.com", ClientID: "old-client"})
		require.NoError(t, err)
		_, c := e.client(t, appStoreConfig(Config{}), h)
		st, _, err := post(c, e.mcpURL(), `{}`)
		require.NoError(t, err)
		require.Equal(t, 200, st)
		s := e.seen()
		require.Len(t, s.regReqs, 1)
		for _, r := range s.tokenReqs {
			require.NotEqual(t, "old-rt", r.form.Get("refresh_token"))
			require.NotEqual(t, "old-client", r.form.Get("client_id"))
		}
	})
	t.Run("without a store nothing is loaded or saved", func(t *testing.T) {
		e := newEnv(t)
		h := &fakeHost{can: true}
		_, c := e.client(t, Config{}, h)
		_, _, err := post(c, e.mcpURL(), `{}`)
		require.NoError(t, err)
		require.Zero(t, h.snapshot().loads)
		require.Nil(t, h.snapshot().app)
	})
}

func TestAuthorizationServerMigration(t *testing.T) {
	e := newEnv(t)
	as2 := newEnv(t)
	var moved bool
	e.set(func(e *env) {
		e.prmDoc = func() map[string]any {
			iss := e.issuer()
			if moved {
				iss = as2.issuer()
			}
			return map[string]any{"resource": e.mcpURL(), "authorization_servers": []string{iss}}
		}
		e.tokenFn = func(form url.Values, _ http.Header) (int, map[string]any) {
			return 200, map[string]any{"access_token": "as1-token"}
		}
	})
	_, c := e.client(t, Config{}, &fakeHost{can: true})
	_, _, err := post(c, e.mcpURL(), `{}`)
	require.NoError(t, err)
	// The server moves to AS2: AS1 tokens are rejected from now on, and
	// tokens of AS2 are accepted by the MCP server.
	as2.set(func(a *env) {
		a.regFn = func(map[string]any) (int, map[string]any) { return 201, map[string]any{"client_id": "as2-client"} }
		a.tokenFn = func(form url.Values, _ http.Header) (int, map[string]any) {
			e.set(func(e *env) { e.tokens["as2-token"] = nil })
			return 200, map[string]any{"access_token": "as2-token"}
		}
	})
	e.set(func(e *env) { moved = true; e.tokens = map[string][]string{} })
	st, _, err := post(c, e.mcpURL(), `{}`)
	require.NoError(t, err)
	require.Equal(t, 200, st)
	s2 := as2.seen()
	require.Len(t, s2.regReqs, 1, "registered again with the new server")
	require.Equal(t, "as2-client", s2.authzReqs[0].query.Get("client_id"), "the AS1 client_id is never presented to AS2")
	require.Equal(t, "as2-client", s2.tokenReqs[0].form.Get("client_id"))
}
