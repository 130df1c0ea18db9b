package gatewaytests

import (
	"bytes"
	"crypto"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/core"
	"github.com/lemonmcp/lemonmcp/gateway"
)

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

// post sends body to url with headers and returns status, headers, body.
func post(t *testing.T, url, body string, headers map[string]string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range headers {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

func TestHTTPFrontChecksOriginAndHost(t *testing.T) {
	h := newHost(t, legacy)
	g := newGateway(t, h, `{"allowed_origins": ["https://app.example"]}`)
	url := httpFront(t, g)
	cases := []struct {
		name    string
		headers map[string]string
		status  int
	}{
		{"no origin", nil, http.StatusOK},
		{"loopback origin", map[string]string{"Origin": "http://localhost:3000"}, http.StatusOK},
		{"listed origin", map[string]string{"Origin": "https://app.example"}, http.StatusOK},
		{"foreign origin (DNS rebinding)", map[string]string{"Origin": "http://evil.example"}, http.StatusForbidden},
		{"a foreign name that starts like loopback", map[string]string{"Origin": "http://localhost.evil.example"}, http.StatusForbidden},
		{"opaque origin (a sandboxed page)", map[string]string{"Origin": "null"}, http.StatusForbidden},
		{"listed origin on another port", map[string]string{"Origin": "https://app.example:8443"}, http.StatusForbidden},
		{"rebound host name", map[string]string{"Host": "evil.example:80"}, http.StatusMisdirectedRequest},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, _, body := post(t, url, initBody, tc.headers)
			require.Equal(t, tc.status, status, body)
		})
	}
}

func TestHTTPFrontRefusesNonLoopbackWithoutAuth(t *testing.T) {
	h := newHost(t, legacy)
	for _, opts := range []string{``, `{"allow_non_loopback": true}`} {
		o, err := gateway.ParseOptions([]byte(opts))
		require.Nil(t, err)
		g, err := gateway.New(h, o)
		require.Nil(t, err)
		_, serr := g.ServeHTTP("0.0.0.0:0")
		require.NotNil(t, serr, "options %s", opts)
		require.Equal(t, core.StatusPolicyDenied, serr.Status)
		require.Contains(t, serr.Message, "not loopback")
		g.Release()
	}
}

// TestHTTPFrontNonLoopbackWithAuth: told to, and with authentication, the
// gateway serves a non-loopback address; the token is still required.
func TestHTTPFrontNonLoopbackWithAuth(t *testing.T) {
	const token = "front-secret-token-remote-0123"
	t.Setenv("GW_TEST_TOKEN3", token)
	h := newHost(t, legacy)
	g := newGateway(t, h, `{"allow_non_loopback": true, "auth": {"bearer_env": "GW_TEST_TOKEN3"}}`)
	url, serr := g.ServeHTTP("0.0.0.0:0")
	require.Nil(t, serr)
	_, port, err := net.SplitHostPort(strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/mcp"))
	require.NoError(t, err)
	local := "http://127.0.0.1:" + port + "/mcp"
	status, _, _ := post(t, local, initBody, nil)
	require.Equal(t, http.StatusUnauthorized, status)
	status, _, body := post(t, local, initBody, map[string]string{"Authorization": "Bearer " + token})
	require.Equal(t, http.StatusOK, status, body)
}

func TestHTTPFrontBearerToken(t *testing.T) {
	const token = "front-secret-token-0123456789"
	t.Setenv("GW_TEST_TOKEN", token)
	h := newHost(t, legacy)
	g := newGateway(t, h, `{"auth": {"bearer_env": "GW_TEST_TOKEN"}}`)
	url := httpFront(t, g)
	status, hdr, _ := post(t, url, initBody, nil)
	require.Equal(t, http.StatusUnauthorized, status)
	require.True(t, strings.HasPrefix(hdr.Get("WWW-Authenticate"), "Bearer"))
	status, _, _ = post(t, url, initBody, map[string]string{"Authorization": "Bearer wrong-token-wrong-token"})
	require.Equal(t, http.StatusUnauthorized, status)
	status, _, body := post(t, url, initBody, map[string]string{"Authorization": "Bearer " + token})
	require.Equal(t, http.StatusOK, status, body)
}

func TestBearerEnvMustBeSet(t *testing.T) {
	os.Unsetenv("GW_TEST_UNSET")
	_, err := gateway.ParseOptions([]byte(`{"auth": {"bearer_env": "GW_TEST_UNSET"}}`))
	require.NotNil(t, err)
	require.Contains(t, err.Message, "GW_TEST_UNSET")
}

// jwks is an issuer's key set served on loopback, and a signer.
type jwks struct {
	key *rsa.PrivateKey
	srv *httptest.Server
}

func newJWKS(t *testing.T) *jwks {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	j := &jwks{key: key}
	j.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		b64 := base64.RawURLEncoding
		_ = json.NewEncoder(w).Encode(map[string]any{"keys": []any{map[string]string{
			"kty": "RSA", "kid": "k1", "alg": "RS256", "use": "sig",
			"n": b64.EncodeToString(key.N.Bytes()), "e": b64.EncodeToString(big.NewInt(int64(key.E)).Bytes()),
		}}})
	}))
	t.Cleanup(j.srv.Close)
	return j
}

func (j *jwks) sign(t *testing.T, signer *rsa.PrivateKey, claims map[string]any) string {
	return j.signKid(t, signer, "k1", claims)
}

func (j *jwks) signKid(t *testing.T, signer *rsa.PrivateKey, kid string, claims map[string]any) string {
	b64 := base64.RawURLEncoding
	head := b64.EncodeToString([]byte(`{"alg":"RS256","typ":"JWT","kid":"` + kid + `"}`))
	body, _ := json.Marshal(claims)
	input := head + "." + b64.EncodeToString(body)
	sum := sha256.Sum256([]byte(input))
	sig, err := rsa.SignPKCS1v15(rand.Reader, signer, crypto.SHA256, sum[:])
	require.NoError(t, err)
	return input + "." + b64.EncodeToString(sig)
}

func TestHTTPFrontJWTResourceServer(t *testing.T) {
	j := newJWKS(t)
	const issuer, audience = "https://issuer.test", "http://127.0.0.1/mcp-gateway"
	h := newHost(t, legacy)
	g := newGateway(t, h, `{"auth": {"jwks_url": "`+j.srv.URL+`", "issuer": "`+issuer+`", "audience": "`+audience+`"}}`)
	url := httpFront(t, g)
	other, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	exp := time.Now().Add(time.Hour).Unix()
	valid := j.sign(t, j.key, map[string]any{"iss": issuer, "aud": audience, "exp": exp})
	b64 := base64.RawURLEncoding
	parts := strings.Split(valid, ".")
	// HS256 keyed with the issuer's public key (which anyone can fetch):
	// the algorithm confusion a verifier that trusts the header falls to.
	mac := hmac.New(sha256.New, j.key.N.Bytes())
	hsInput := b64.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT","kid":"k1"}`)) + "." + parts[1]
	mac.Write([]byte(hsInput))
	hs256 := hsInput + "." + b64.EncodeToString(mac.Sum(nil))
	// A valid signature over other claims.
	swapped := parts[0] + "." + b64.EncodeToString([]byte(`{"iss":"`+issuer+`","aud":"`+audience+`","exp":9999999999,"sub":"admin"}`)) + "." + parts[2]
	cases := []struct {
		name   string
		token  string
		status int
	}{
		{"valid", j.sign(t, j.key, map[string]any{"iss": issuer, "aud": audience, "exp": exp}), http.StatusOK},
		{"audience in a list", j.sign(t, j.key, map[string]any{"iss": issuer, "aud": []string{"x", audience}, "exp": exp}), http.StatusOK},
		{"wrong audience", j.sign(t, j.key, map[string]any{"iss": issuer, "aud": "http://other/mcp", "exp": exp}), http.StatusUnauthorized},
		{"wrong issuer", j.sign(t, j.key, map[string]any{"iss": "https://evil", "aud": audience, "exp": exp}), http.StatusUnauthorized},
		{"expired", j.sign(t, j.key, map[string]any{"iss": issuer, "aud": audience, "exp": time.Now().Add(-time.Hour).Unix()}), http.StatusUnauthorized},
		{"signed by another key", j.sign(t, other, map[string]any{"iss": issuer, "aud": audience, "exp": exp}), http.StatusUnauthorized},
		{"no exp", j.sign(t, j.key, map[string]any{"iss": issuer, "aud": audience}), http.StatusUnauthorized},
		{"not valid yet", j.sign(t, j.key, map[string]any{"iss": issuer, "aud": audience, "exp": exp, "nbf": time.Now().Add(30 * time.Minute).Unix()}), http.StatusUnauthorized},
		{"unknown kid", j.signKid(t, j.key, "k2", map[string]any{"iss": issuer, "aud": audience, "exp": exp}), http.StatusUnauthorized},
		{"HS256 keyed with the public key", hs256, http.StatusUnauthorized},
		{"claims swapped under a valid signature", swapped, http.StatusUnauthorized},
		{"not a JWT", "opaque-token-of-some-length", http.StatusUnauthorized},
		{"alg none", "eyJhbGciOiJub25lIiwia2lkIjoiazEifQ." + base64.RawURLEncoding.EncodeToString([]byte(`{"iss":"`+issuer+`","aud":"`+audience+`","exp":9999999999}`)) + ".", http.StatusUnauthorized},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, hdr, body := post(t, url, initBody, map[string]string{"Authorization": "Bearer " + tc.token})
			require.Equal(t, tc.status, status, body)
			if status == http.StatusUnauthorized {
				require.Contains(t, hdr.Get("WWW-Authenticate"), `resource_metadata="`)
			}
		})
	}
	resp, err := http.Get(strings.TrimSuffix(url, "/mcp") + "/.well-known/oauth-protected-resource")
	require.NoError(t, err)
	defer resp.Body.Close()
	var meta map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&meta))
	require.Equal(t, audience, meta["resource"])
	require.Equal(t, []any{issuer}, meta["authorization_servers"])
}

// TestFrontTokenNotPassedUpstream: the fixture logs every line it reads;
// the front's token appears in none.
func TestFrontTokenNotPassedUpstream(t *testing.T) {
	const token = "front-secret-token-never-upstream"
	t.Setenv("GW_TEST_TOKEN2", token)
	logFile := t.TempDir() + "/stdin.log"
	cfg := `{"mcpServers": {"fx": {"command": "` + fixtureBin + `", "args": ["-log-file", "` + logFile + `"]}}, "tool_prefix": "never"}`
	h := hostFromConfig(t, cfg)
	g := newGateway(t, h, `{"auth": {"bearer_env": "GW_TEST_TOKEN2"}}`)
	url := httpFront(t, g)
	auth := map[string]string{"Authorization": "Bearer " + token}
	status, hdr, body := post(t, url, initBody, auth)
	require.Equal(t, http.StatusOK, status, body)
	auth["Mcp-Session-Id"] = hdr.Get("Mcp-Session-Id")
	status, _, body = post(t, url, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"marker-123"}}}`, auth)
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, "marker-123")
	logged, err := os.ReadFile(logFile)
	require.NoError(t, err)
	require.Contains(t, string(logged), "marker-123")
	require.False(t, bytes.Contains(logged, []byte(token)), "the front's token reached the server")
}
