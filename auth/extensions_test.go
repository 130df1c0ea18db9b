package auth

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lemonmcp/lemonmcp/auth/tokenstore"
	"github.com/lemonmcp/lemonmcp/internal/jsonx"
	"github.com/stretchr/testify/require"
)

// unverifiedClaims reads a JWT's payload (fake servers decide on nonces
// with it; the tests verify signatures separately).
func unverifiedClaims(tok string) map[string]any {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return nil
	}
	b, _ := base64.RawURLEncoding.DecodeString(parts[1])
	var c map[string]any
	_ = jsonx.Unmarshal(b, &c)
	return c
}

// verifyProof checks a DPoP proof the way a server does (RFC 9449 §4.3):
// typ, the embedded public JWK (no private part), the signature with that
// key, and returns the claims and the key's RFC 7638 thumbprint, computed
// here independently.
func verifyProof(t *testing.T, proof string) (map[string]any, string) {
	t.Helper()
	parts := strings.Split(proof, ".")
	require.Len(t, parts, 3)
	hb, err := base64.RawURLEncoding.DecodeString(parts[0])
	require.NoError(t, err)
	var hdr struct {
		Typ string            `json:"typ"`
		Alg string            `json:"alg"`
		JWK map[string]string `json:"jwk"`
	}
	require.NoError(t, jsonx.Unmarshal(hb, &hdr))
	require.Equal(t, "dpop+jwt", hdr.Typ)
	require.Equal(t, "ES256", hdr.Alg)
	require.Equal(t, "EC", hdr.JWK["kty"])
	require.Equal(t, "P-256", hdr.JWK["crv"])
	require.NotContains(t, hdr.JWK, "d", "the proof never carries the private key")
	x, err := base64.RawURLEncoding.DecodeString(hdr.JWK["x"])
	require.NoError(t, err)
	y, err := base64.RawURLEncoding.DecodeString(hdr.JWK["y"])
	require.NoError(t, err)
	pub := &ecdsa.PublicKey{Curve: elliptic.P256(), X: new(big.Int).SetBytes(x), Y: new(big.Int).SetBytes(y)}
	_, claims := verifyJWS(t, proof, pub)
	canon := fmt.Sprintf(`{"crv":"P-256","kty":"EC","x":%q,"y":%q}`, hdr.JWK["x"], hdr.JWK["y"])
	sum := sha256.Sum256([]byte(canon))
	return claims, base64.RawURLEncoding.EncodeToString(sum[:])
}

func ath(tok string) string {
	sum := sha256.Sum256([]byte(tok))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

func TestDPoP(t *testing.T) {
	tests := []struct {
		name          string
		tokenType     string // what the authorization server issues
		asNonce       string // "": none; "once": demands a nonce once; "always": a new one every time
		rsNonce       string // same, for the MCP server
		wantErr       string
		wantTokenReqs int
		wantMCPReqs   int // for two requests
	}{
		{name: "bound token", tokenType: "DPoP", wantTokenReqs: 1, wantMCPReqs: 3},
		{name: "authorization server nonce", tokenType: "DPoP", asNonce: "once", wantTokenReqs: 2, wantMCPReqs: 3},
		{name: "authorization server nonce is retried once", tokenType: "DPoP", asNonce: "always", wantTokenReqs: 2, wantMCPReqs: 1, wantErr: "use_dpop_nonce"},
		{name: "resource server nonce", tokenType: "DPoP", rsNonce: "once", wantTokenReqs: 1, wantMCPReqs: 4},
		{name: "resource server nonce is retried once", tokenType: "DPoP", rsNonce: "always", wantTokenReqs: 1, wantMCPReqs: 3, wantErr: "rejected the newly obtained token"},
		{name: "both nonces", tokenType: "DPoP", asNonce: "once", rsNonce: "once", wantTokenReqs: 2, wantMCPReqs: 4},
		{name: "server ignores DPoP", tokenType: "Bearer", wantTokenReqs: 1, wantMCPReqs: 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			asN, rsN := 0, 0
			e.set(func(e *env) {
				e.asMeta = map[string]any{"dpop_signing_alg_values_supported": []string{"ES256"}}
				e.tokenFn = func(form url.Values, h http.Header) (int, map[string]any) {
					nonce, _ := unverifiedClaims(h.Get("DPoP"))["nonce"].(string)
					if tc.asNonce == "always" || (tc.asNonce == "once" && nonce != "as-nonce-1") {
						asN++
						e.tokenHdr = http.Header{"Dpop-Nonce": {fmt.Sprintf("as-nonce-%d", asN)}}
						return 400, map[string]any{"error": "use_dpop_nonce"}
					}
					e.seq++
					return 200, map[string]any{"access_token": fmt.Sprintf("dpop-tok-%d", e.seq), "token_type": tc.tokenType, "expires_in": 3600}
				}
				e.rsFn = func(r *http.Request, _ []string, _ bool) (int, string) {
					scheme, tok, _ := strings.Cut(r.Header.Get("Authorization"), " ")
					if _, ok := e.tokens[tok]; !ok || !strings.EqualFold(scheme, tc.tokenType) {
						return 401, fmt.Sprintf(`DPoP algs="ES256", resource_metadata=%q`, e.prmURL())
					}
					nonce, _ := unverifiedClaims(r.Header.Get("DPoP"))["nonce"].(string)
					if tc.tokenType == "DPoP" && (tc.rsNonce == "always" || (tc.rsNonce == "once" && nonce != "rs-nonce-1")) {
						rsN++
						e.rsHdr = http.Header{"Dpop-Nonce": {fmt.Sprintf("rs-nonce-%d", rsN)}}
						return 401, `DPoP error="use_dpop_nonce", error_description="Resource server requires nonce in DPoP proof"`
					}
					return 200, ""
				}
			})
			m, c := e.client(t, Config{ClientID: "c", ClientSecret: "s", DPoP: &DPoPConfig{}}, &fakeHost{})
			var errs []error
			for i := 0; i < 2; i++ {
				st, _, err := post(c, e.mcpURL()+"?q=1#frag", `{}`)
				errs = append(errs, err)
				if err != nil {
					break
				}
				require.Equal(t, 200, st)
			}
			seen := e.seen()
			require.Len(t, seen.tokenReqs, tc.wantTokenReqs)
			require.Len(t, seen.mcpReqs, tc.wantMCPReqs)
			if tc.wantErr != "" {
				require.Contains(t, authErr(t, errs[0]).Message, tc.wantErr)
			} else {
				for _, err := range errs {
					require.NoError(t, err)
				}
			}

			// Token requests: a proof for POST at the token endpoint, no
			// ath, the nonce once the server named one.
			for i, tr := range seen.tokenReqs {
				claims, jkt := verifyProof(t, tr.header.Get("DPoP"))
				require.Equal(t, m.proofKey().jkt, jkt)
				require.Equal(t, "POST", claims["htm"])
				require.Equal(t, e.issuer()+"/token", claims["htu"])
				require.NotContains(t, claims, "ath")
				iat, err := strconv.ParseInt(fmt.Sprint(claims["iat"]), 10, 64)
				require.NoError(t, err)
				require.InDelta(t, time.Now().Unix(), iat, 60)
				if tc.asNonce != "" && i > 0 {
					require.Equal(t, fmt.Sprintf("as-nonce-%d", i), claims["nonce"])
				} else {
					require.NotContains(t, claims, "nonce")
				}
			}
			// MCP requests: a fresh proof on each one carrying a token.
			jtis := map[string]bool{}
			for i, r := range seen.mcpReqs {
				authz := r.header.Get("Authorization")
				if authz == "" {
					require.Empty(t, r.header.Get("DPoP"), "no proof without a token")
					continue
				}
				scheme, tok, _ := strings.Cut(authz, " ")
				if tc.tokenType == "Bearer" {
					require.Equal(t, "Bearer", scheme)
					require.Empty(t, r.header.Get("DPoP"), "a bearer token goes out as before")
					continue
				}
				require.Equal(t, "DPoP", scheme)
				claims, _ := verifyProof(t, r.header.Get("DPoP"))
				require.Equal(t, "POST", claims["htm"])
				require.Equal(t, e.mcpURL(), claims["htu"], "htu has no query or fragment")
				require.Equal(t, ath(tok), claims["ath"])
				jti := claims["jti"].(string)
				require.False(t, jtis[jti], "request %d reuses a jti", i)
				jtis[jti] = true
				if tc.rsNonce == "once" && i >= 2 {
					require.Equal(t, "rs-nonce-1", claims["nonce"], "the nonce is answered and then remembered")
				}
			}
		})
	}
}

func TestDPoPConfiguredKeyAndStore(t *testing.T) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	t.Run("a stored DPoP token is reused with a configured key", func(t *testing.T) {
		m, err := New(Config{DPoP: &DPoPConfig{KeyPEM: pemOf(t, key)}}, "https://mcp.example/mcp")
		require.NoError(t, err)
		require.False(t, m.proofKey().ephemeral)
		m.adopt(&tokenstore.Record{AccessToken: "at", TokenType: "DPoP", RefreshToken: "rt"}, m.proofKey())
		tok, bound, _ := m.current()
		require.Equal(t, "at", tok)
		require.NotNil(t, bound)
	})
	t.Run("not without the key it is bound to", func(t *testing.T) {
		m, err := New(Config{DPoP: &DPoPConfig{}}, "https://mcp.example/mcp")
		require.NoError(t, err)
		m.adopt(&tokenstore.Record{AccessToken: "at", TokenType: "DPoP", RefreshToken: "rt"}, nil)
		tok, _, _ := m.current()
		require.Empty(t, tok, "bound to a key that died with its process")
		require.Equal(t, "rt", m.tok.refresh, "the refresh token is still tried")
	})
	t.Run("bad configurations", func(t *testing.T) {
		for _, cfg := range []DPoPConfig{{Alg: "none"}, {KeyPEM: "hunter2"}, {KeyPEM: pemOf(t, key), Alg: "ES384"}} {
			_, err := New(Config{DPoP: &cfg}, "https://mcp.example/mcp")
			require.Error(t, err)
			require.Contains(t, err.Error(), "auth.dpop: ")
			require.NotContains(t, err.Error(), "hunter2")
		}
	})
	t.Run("a DPoP token without DPoP configured is refused", func(t *testing.T) {
		e := newEnv(t)
		e.set(func(e *env) {
			e.tokenFn = func(url.Values, http.Header) (int, map[string]any) {
				return 200, map[string]any{"access_token": "x", "token_type": "DPoP"}
			}
		})
		_, c := e.client(t, Config{ClientID: "c", ClientSecret: "s"}, &fakeHost{})
		_, _, err := post(c, e.mcpURL(), `{}`)
		require.Contains(t, authErr(t, err).Message, "auth.dpop")
		require.Empty(t, e.seen().tokenReqs[0].header.Get("DPoP"), "no proof without DPoP")
	})
}

func TestDPoPChallenge(t *testing.T) {
	bc := parseBearer([]string{`DPoP error="use_dpop_nonce", algs="ES256"`})
	require.Equal(t, "use_dpop_nonce", bc.dpopErr)
	bc = parseBearer([]string{`Bearer realm="x", DPoP error="insufficient_scope", scope="a b", resource_metadata="https://r/prm"`})
	require.Empty(t, bc.err, "the Bearer challenge wins when both are offered")
	require.Equal(t, "insufficient_scope", bc.dpopErr)
	bc = parseBearer([]string{`DPoP error="insufficient_scope", scope="a b", resource_metadata="https://r/prm"`})
	require.Equal(t, "insufficient_scope", bc.err)
	require.Equal(t, []string{"a", "b"}, bc.scope)
}

func TestJWTBearer(t *testing.T) {
	const assertion = "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ3b3JrbG9hZCJ9.c2ln"
	tests := []struct {
		name     string
		cfg      Config
		grants   []string
		tokenSt  int
		wantErr  string
		wantAuth string // Authorization header of the token request
		wantForm map[string]string
	}{
		{
			name: "workload identity, auto", cfg: Config{ClientID: "workload", Assertion: assertion},
			grants: []string{GrantJWTBearer}, tokenSt: 200,
			wantForm: map[string]string{"grant_type": GrantJWTBearer, "assertion": assertion, "client_id": "workload"},
		},
		{
			name: "no client identity", cfg: Config{Flow: FlowJWTBearer, Assertion: assertion},
			tokenSt:  200,
			wantForm: map[string]string{"grant_type": GrantJWTBearer, "assertion": assertion, "client_id": ""},
		},
		{
			name: "confidential client", cfg: Config{ClientID: "c", ClientSecret: "s", Assertion: assertion},
			grants: []string{GrantJWTBearer, GrantClientCredentials}, tokenSt: 200,
			wantAuth: "Basic Yzpz",
			wantForm: map[string]string{"grant_type": GrantJWTBearer, "assertion": assertion, "client_id": ""},
		},
		{
			name: "a refused grant is not retried", cfg: Config{ClientID: "workload", Assertion: assertion},
			grants: []string{GrantJWTBearer}, tokenSt: 400, wantErr: "invalid_grant",
			wantForm: map[string]string{"grant_type": GrantJWTBearer},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.set(func(e *env) {
				e.noDCR = true
				if tc.grants != nil {
					e.asMeta = map[string]any{"grant_types_supported": tc.grants}
				}
				e.tokenFn = func(form url.Values, _ http.Header) (int, map[string]any) {
					if tc.tokenSt != 200 {
						return tc.tokenSt, map[string]any{"error": "invalid_grant", "error_description": "bad " + form.Get("assertion")}
					}
					return 200, map[string]any{"access_token": "wif-token", "token_type": "Bearer"}
				}
			})
			host := &fakeHost{can: true} // a browser is there, and not used
			_, c := e.client(t, tc.cfg, host)
			st, _, err := post(c, e.mcpURL(), `{}`)
			seen := e.seen()
			require.Len(t, seen.tokenReqs, 1)
			require.Empty(t, seen.authzReqs)
			require.Empty(t, host.snapshot().authReqs)
			tr := seen.tokenReqs[0]
			for k, v := range tc.wantForm {
				require.Equal(t, v, tr.form.Get(k), k)
			}
			require.Equal(t, e.mcpURL(), tr.form.Get("resource"))
			require.Equal(t, tc.wantAuth, tr.header.Get("Authorization"))
			if tc.wantErr != "" {
				ae := authErr(t, err)
				require.Contains(t, ae.Message, tc.wantErr)
				require.NotContains(t, ae.Message, assertion, "the assertion is never echoed")
				return
			}
			require.NoError(t, err)
			require.Equal(t, 200, st)
		})
	}
}

// idp is a fake enterprise IdP token endpoint (RFC 8693).
type idp struct {
	srv   *httptest.Server
	mu    sync.Mutex
	reqs  []recorded
	reply func(form url.Values) (int, map[string]any)
}

func newIdP(t *testing.T) *idp {
	p := &idp{}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := record(r)
		p.mu.Lock()
		p.reqs = append(p.reqs, rec)
		reply := p.reply
		p.mu.Unlock()
		st, body := 200, map[string]any{"access_token": "idjag.payload.sig", "issued_token_type": TokenTypeIDJAG, "token_type": "N_A"}
		if reply != nil {
			st, body = reply(rec.form)
		}
		writeJSON(w, st, body)
	}))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *idp) seen() []recorded {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]recorded(nil), p.reqs...)
}

func TestTokenExchange(t *testing.T) {
	const idToken = "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ1c2VyIn0.aWQ"
	tests := []struct {
		name     string
		te       TokenExchange
		reply    func(form url.Values) (int, map[string]any)
		wantErr  string
		wantForm map[string]string
		wantAuth string
	}{
		{
			name: "defaults", te: TokenExchange{SubjectToken: idToken, ClientID: "idp-client"},
			wantForm: map[string]string{
				"grant_type": GrantTokenExchange, "subject_token": idToken, "subject_token_type": TokenTypeIDToken,
				"requested_token_type": TokenTypeIDJAG, "client_id": "idp-client", "scope": "s1",
			},
		},
		{
			name: "explicit", te: TokenExchange{SubjectToken: idToken, SubjectTokenType: TokenTypeSAML2, Audience: "https://as.example",
				Resource: "https://mcp.example/mcp", Scopes: []string{"x"}, ClientID: "idp", ClientSecret: "pw"},
			wantForm: map[string]string{
				"subject_token_type": TokenTypeSAML2, "audience": "https://as.example", "resource": "https://mcp.example/mcp",
				"scope": "x", "client_id": "",
			},
			wantAuth: "Basic aWRwOnB3",
		},
		{
			name: "the IdP refuses", te: TokenExchange{SubjectToken: idToken},
			reply: func(form url.Values) (int, map[string]any) {
				return 400, map[string]any{"error": "invalid_grant", "error_description": "bad token " + form.Get("subject_token")}
			},
			wantErr: "token exchange",
		},
		{
			name: "another token type is issued", te: TokenExchange{SubjectToken: idToken},
			reply: func(url.Values) (int, map[string]any) {
				return 200, map[string]any{"access_token": "at", "issued_token_type": TokenTypeAccessToken, "token_type": "Bearer"}
			},
			wantErr: "not the requested",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			p := newIdP(t)
			p.reply = tc.reply
			e.set(func(e *env) {
				e.asMeta = map[string]any{"grant_types_supported": []string{GrantJWTBearer}, "token_endpoint_auth_methods_supported": []string{"client_secret_basic"}}
			})
			te := tc.te
			te.TokenEndpoint = p.srv.URL + "/token"
			cfg := Config{ClientID: "mcp-client", ClientSecret: "mcp-secret", TokenExchange: &te, Scopes: []string{"s1"}}
			_, c := e.client(t, cfg, &fakeHost{can: true})
			st, _, err := post(c, e.mcpURL(), `{}`)
			reqs := p.seen()
			require.Len(t, reqs, 1)
			form := reqs[0].form
			want := map[string]string{"audience": e.issuer(), "resource": e.mcpURL()}
			for k, v := range tc.wantForm {
				want[k] = v
			}
			for k, v := range want {
				require.Equal(t, v, form.Get(k), k)
			}
			require.Equal(t, tc.wantAuth, reqs[0].header.Get("Authorization"))
			if tc.wantErr != "" {
				ae := authErr(t, err)
				require.Contains(t, ae.Message, tc.wantErr)
				require.NotContains(t, ae.Message, idToken)
				require.Empty(t, e.seen().tokenReqs, "no jwt-bearer grant without an ID-JAG")
				return
			}
			require.NoError(t, err)
			require.Equal(t, 200, st)
			trs := e.seen().tokenReqs
			require.Len(t, trs, 1)
			require.Equal(t, GrantJWTBearer, trs[0].form.Get("grant_type"))
			require.Equal(t, "idjag.payload.sig", trs[0].form.Get("assertion"))
			require.Equal(t, e.mcpURL(), trs[0].form.Get("resource"))
			require.Equal(t, "Basic bWNwLWNsaWVudDptY3Atc2VjcmV0", trs[0].header.Get("Authorization"))
		})
	}
}

func TestGrantTypesSupported(t *testing.T) {
	tests := []struct {
		name      string
		cfg       Config
		canAuthz  bool
		grants    []string
		wantGrant string // the grant sent; "" when none may be
		wantErr   string
	}{
		{name: "auto skips the browser for a grant the server lacks", canAuthz: true,
			grants: []string{GrantClientCredentials}, wantErr: "does not support the authorization_code grant"},
		{name: "auto prefers a configured grant the server lists", cfg: Config{ClientID: "c", ClientSecret: "s"}, canAuthz: true,
			grants: []string{GrantClientCredentials}, wantGrant: GrantClientCredentials},
		{name: "auto with nothing the server lists", cfg: Config{ClientID: "c", ClientSecret: "s"}, canAuthz: true,
			grants: []string{GrantJWTBearer}, wantErr: "supports none of the configured grants (authorization_code, client_credentials"},
		{name: "fixed client credentials", cfg: Config{ClientID: "c", ClientSecret: "s", Flow: FlowClientCredentials},
			grants: []string{GrantAuthorizationCode}, wantErr: "does not support the client_credentials grant"},
		{name: "fixed authorization code", cfg: Config{Flow: FlowAuthorizationCode}, canAuthz: true,
			grants: []string{GrantJWTBearer}, wantErr: "does not support the authorization_code grant"},
		{name: "fixed jwt-bearer", cfg: Config{Flow: FlowJWTBearer, Assertion: "a.b.c"},
			grants: []string{GrantAuthorizationCode}, wantErr: "does not support the " + GrantJWTBearer + " grant"},
		{name: "no list: anything goes", canAuthz: true, wantGrant: GrantAuthorizationCode},
		{name: "listed", canAuthz: true, grants: []string{GrantAuthorizationCode, GrantRefreshToken}, wantGrant: GrantAuthorizationCode},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.set(func(e *env) {
				if tc.grants != nil {
					e.asMeta = map[string]any{"grant_types_supported": tc.grants}
				}
			})
			host := &fakeHost{can: tc.canAuthz}
			_, c := e.client(t, tc.cfg, host)
			_, _, err := post(c, e.mcpURL(), `{}`)
			seen := e.seen()
			if tc.wantErr != "" {
				ae := authErr(t, err)
				require.Contains(t, ae.Message, tc.wantErr)
				require.NotEmpty(t, ae.Metadata["unsupported_grant_type"])
				require.Empty(t, seen.tokenReqs)
				require.Empty(t, seen.authzReqs, "nobody is sent to authorize")
				require.Empty(t, seen.regReqs)
				require.Empty(t, host.snapshot().authReqs)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.wantGrant, seen.tokenReqs[0].form.Get("grant_type"))
		})
	}
}
