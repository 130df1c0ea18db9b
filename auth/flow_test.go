package auth

import (
	"crypto/sha256"
	"encoding/base64"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestAuthorizationCodeFlowEndToEnd(t *testing.T) {
	e := newEnv(t)
	h := &fakeHost{can: true}
	_, c := e.client(t, Config{UserAgent: "lemon-test"}, h)

	st, body, err := post(c, e.mcpURL(), `{"method":"initialize"}`)
	require.NoError(t, err)
	require.Equal(t, 200, st)
	require.Equal(t, `echo:{"method":"initialize"}`, body, "the retried request carries the original body")

	s := e.seen()
	require.Len(t, s.mcpReqs, 2)
	require.Empty(t, s.mcpReqs[0].header.Get("Authorization"))
	require.Equal(t, "Bearer tok-1", s.mcpReqs[1].header.Get("Authorization"))
	require.Equal(t, "secret-header", s.mcpReqs[1].header.Get("X-Custom-Mcp"))

	t.Run("metadata requests carry metadata-only headers", func(t *testing.T) {
		all := append(append([]recorded{}, s.metaReqs...), s.regReqs...)
		all = append(all, s.tokenReqs...)
		require.NotEmpty(t, all)
		for _, r := range all {
			require.Empty(t, r.header.Get("X-Custom-Mcp"), r.path)
			require.NotContains(t, r.header.Get("Authorization"), "Bearer", r.path)
			require.Equal(t, "application/json", r.header.Get("Accept"), r.path)
			require.Equal(t, "lemon-test", r.header.Get("User-Agent"), r.path)
			require.Equal(t, "2025-11-25", r.header.Get("MCP-Protocol-Version"), r.path)
		}
	})
	t.Run("dynamic registration", func(t *testing.T) {
		require.Len(t, s.regReqs, 1)
		reg := s.regReqs[0].json
		require.Equal(t, "LemonMCP", reg["client_name"])
		require.Equal(t, []any{testRedirect}, reg["redirect_uris"])
		require.Equal(t, []any{"authorization_code", "refresh_token"}, reg["grant_types"])
		require.Equal(t, []any{"code"}, reg["response_types"])
		require.Equal(t, "native", reg["application_type"])
		require.NotEmpty(t, reg["token_endpoint_auth_method"])
	})
	t.Run("authorization request", func(t *testing.T) {
		require.Len(t, s.authzReqs, 1)
		q := s.authzReqs[0].query
		require.Equal(t, "code", q.Get("response_type"))
		require.Equal(t, "dcr-client-1", q.Get("client_id"))
		require.Equal(t, testRedirect, q.Get("redirect_uri"))
		require.Equal(t, "S256", q.Get("code_challenge_method"))
		require.Equal(t, e.mcpURL(), q.Get("resource"))
		require.GreaterOrEqual(t, len(q.Get("state")), 22)
		require.False(t, q.Has("scope"), "no scope anywhere: omitted")
		hs := h.snapshot()
		require.Len(t, hs.authReqs, 1)
		ar := hs.authReqs[0]
		require.Equal(t, e.issuer(), ar.Issuer)
		require.Equal(t, e.issuer()+"/authorize", ar.AuthorizationEndpoint)
		require.Equal(t, q.Get("state"), ar.State)
		require.Equal(t, e.mcpURL(), ar.Resource)
		require.Len(t, ar.CodeVerifier, 43)
		sum := sha256.Sum256([]byte(ar.CodeVerifier))
		require.Equal(t, base64.RawURLEncoding.EncodeToString(sum[:]), q.Get("code_challenge"))
		require.Equal(t, q.Get("code_challenge"), ar.CodeChallenge)
	})
	t.Run("token request", func(t *testing.T) {
		require.Len(t, s.tokenReqs, 1)
		f := s.tokenReqs[0].form
		require.Equal(t, "authorization_code", f.Get("grant_type"))
		require.Equal(t, "code-"+s.authzReqs[0].query.Get("code_challenge"), f.Get("code"))
		require.Equal(t, testRedirect, f.Get("redirect_uri"))
		require.Equal(t, e.mcpURL(), f.Get("resource"), "same resource as the authorization request")
		sum := sha256.Sum256([]byte(f.Get("code_verifier")))
		require.Equal(t, s.authzReqs[0].query.Get("code_challenge"), base64.RawURLEncoding.EncodeToString(sum[:]))
	})
	t.Run("later requests reuse the token", func(t *testing.T) {
		st, _, err := post(c, e.mcpURL(), `{}`)
		require.NoError(t, err)
		require.Equal(t, 200, st)
		s2 := e.seen()
		require.Len(t, s2.tokenReqs, 1)
		require.Equal(t, "Bearer tok-1", s2.mcpReqs[len(s2.mcpReqs)-1].header.Get("Authorization"))
		for _, r := range s2.mcpReqs {
			require.NotContains(t, r.query.Encode(), "tok-", "tokens never in a URL")
		}
	})
}

func TestHostManagedAuthorizationIsLeftAlone(t *testing.T) {
	e := newEnv(t)
	h := &fakeHost{can: true}
	_, c := e.client(t, Config{}, h)
	st, _, err := post(c, e.mcpURL(), `{}`, "Authorization", "Bearer host-token")
	require.NoError(t, err)
	require.Equal(t, 401, st, "the 401 is returned as is")
	s := e.seen()
	require.Len(t, s.mcpReqs, 1)
	require.Equal(t, "Bearer host-token", s.mcpReqs[0].header.Get("Authorization"))
	require.Empty(t, s.metaReqs)
	require.Empty(t, s.tokenReqs)
}

func TestParallel401sCauseOneGrant(t *testing.T) {
	e := newEnv(t)
	h := &fakeHost{can: true}
	_, c := e.client(t, Config{}, h)
	const n = 12
	var wg sync.WaitGroup
	errs := make(chan error, n)
	codes := make(chan int, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, _, err := post(c, e.mcpURL(), `{}`)
			errs <- err
			codes <- st
		}()
	}
	wg.Wait()
	close(errs)
	close(codes)
	for err := range errs {
		require.NoError(t, err)
	}
	for st := range codes {
		require.Equal(t, 200, st)
	}
	s := e.seen()
	require.Len(t, s.tokenReqs, 1, "one grant for all")
	require.Len(t, s.regReqs, 1)
	require.Len(t, h.snapshot().authReqs, 1)
}

func TestSecond401IsAnError(t *testing.T) {
	e := newEnv(t)
	e.set(func(e *env) {
		e.rsFn = func(r *http.Request, scopes []string, ok bool) (int, string) {
			return 401, `Bearer error="invalid_token", error_description="nope", resource_metadata="` + e.prmURL() + `"`
		}
	})
	_, c := e.client(t, Config{}, &fakeHost{can: true})
	_, _, err := post(c, e.mcpURL(), `{}`)
	ae := authErr(t, err)
	require.Contains(t, ae.Message, "rejected the newly obtained token")
	require.Equal(t, "invalid_token", ae.Metadata["error"])
	require.Equal(t, "nope", ae.Metadata["error_description"])
	require.Contains(t, ae.Metadata["www_authenticate"], "invalid_token")
	require.Len(t, e.seen().mcpReqs, 2, "retried once only")
}

func TestBodyReplay(t *testing.T) {
	e := newEnv(t)
	_, c := e.client(t, Config{}, &fakeHost{can: true})

	t.Run("without GetBody", func(t *testing.T) {
		req, _ := http.NewRequest(http.MethodPost, e.mcpURL(), struct{ io.Reader }{strings.NewReader(`{"a":1}`)})
		require.Nil(t, req.GetBody)
		_, err := c.Do(req)
		ae := authErr(t, err)
		require.Contains(t, ae.Message, "GetBody")
	})
	t.Run("the token obtained is used next time", func(t *testing.T) {
		st, body, err := post(c, e.mcpURL(), `{"b":2}`)
		require.NoError(t, err)
		require.Equal(t, 200, st)
		require.Equal(t, `echo:{"b":2}`, body)
	})
	t.Run("GET without body retries", func(t *testing.T) {
		e2 := newEnv(t)
		_, c2 := e2.client(t, Config{}, &fakeHost{can: true})
		resp, err := c2.Get(e2.mcpURL())
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, 200, resp.StatusCode)
	})
}
