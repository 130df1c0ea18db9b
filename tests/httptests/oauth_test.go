package httptests

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lemonmcp/lemonmcp/config"
	"github.com/lemonmcp/lemonmcp/core"
	"github.com/lemonmcp/lemonmcp/store/storetest"
	"github.com/lemonmcp/lemonmcp/tests/internal/fixturebin"
	"github.com/stretchr/testify/require"
)

// The OAuth tests run the whole client (configuration, core, transport, the
// OAuth layer) against tests/fixtures/oauthfixture: an official go-sdk MCP
// server behind a bearer check, with its own authorization server and a
// request log. Each test starts a fresh fixture process.

var oauthFixture struct {
	once sync.Once
	bin  string
	err  error
}

// oauthFixtureBin builds the fixture once per test binary.
func oauthFixtureBin(t *testing.T) string {
	t.Helper()
	oauthFixture.once.Do(func() {
		// Left in the temporary directory: the test binary ends soon after.
		oauthFixture.bin, _, oauthFixture.err = fixturebin.Build("../fixtures/oauthfixture")
	})
	require.NoError(t, oauthFixture.err)
	return oauthFixture.bin
}

// startOAuthFixture runs the fixture with flags and returns its base URL.
// The process exits when the test closes its stdin.
func startOAuthFixture(t *testing.T, flags ...string) string {
	t.Helper()
	base, stop, err := fixturebin.Serve(oauthFixtureBin(t), flags...)
	require.NoError(t, err)
	t.Cleanup(stop)
	return base
}

// logEntry is one request as the fixture's /_log reports it.
type logEntry struct {
	Method    string            `json:"method"`
	Path      string            `json:"path"`
	Query     map[string]string `json:"query"`
	Headers   map[string]string `json:"headers"`
	Form      map[string]string `json:"form"`
	RPCMethod string            `json:"rpc_method"`
	Status    int               `json:"status"`
}

func fixtureLog(t *testing.T, base string) []logEntry {
	t.Helper()
	resp, err := http.Get(base + "/_log")
	require.NoError(t, err)
	defer resp.Body.Close()
	var entries []logEntry
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&entries))
	return entries
}

func tokenRequests(entries []logEntry) []logEntry {
	var out []logEntry
	for _, e := range entries {
		if e.Path == "/oauth/token" {
			out = append(out, e)
		}
	}
	return out
}

// hostFunc answers a app request: it returns the answer JSON, or an error
// status.
type hostFunc func(kind string, payload []byte) (core.Status, string)

// oauthClient builds a client as a host does; host (may be nil) answers the
// library's app requests from a goroutine, as a real host would.
func oauthClient(t *testing.T, configJSON string, host hostFunc) *core.Client {
	t.Helper()
	p, perr := config.Parse([]byte(configJSON), "test")
	require.Nil(t, errOrNil(perr))
	c := core.New(p.Options, p.Transport)
	t.Cleanup(func() {
		c.Close(5 * time.Second)
		c.Free()
	})
	if host != nil {
		require.Nil(t, errOrNil(c.SetAppRequestHandler(func(id uint64, kind string, payload []byte) {
			go func() {
				st, answer := host(kind, payload)
				_ = c.Respond(id, st, []byte(answer))
			}()
		}, nil)))
	}
	return c
}

func connectReady(t *testing.T, c *core.Client) *core.Error {
	t.Helper()
	require.Nil(t, errOrNil(c.Connect()))
	return c.WaitReady(20 * time.Second)
}

func httpConfig(base, auth string, extra ...string) string {
	parts := []string{fmt.Sprintf(`"transport":{"type":"streamable_http","url":%q}`, base+"/mcp"), `"timeouts":{"ready_ms":20000,"call_ms":20000}`}
	if auth != "" {
		parts = append(parts, `"auth":`+auth)
	}
	parts = append(parts, extra...)
	return "{" + strings.Join(parts, ",") + "}"
}

func TestOAuthNoConfigReportsMetadata(t *testing.T) {
	base := startOAuthFixture(t)
	c := oauthClient(t, httpConfig(base, ""), nil)
	err := connectReady(t, c)
	require.NotNil(t, err)
	require.Equal(t, core.StatusAuthRequired, err.Status, err.Message)
	var md map[string]any
	require.NoError(t, json.Unmarshal(err.Data, &md), "metadata as the error's data: %s", err.Data)
	require.Equal(t, base+"/.well-known/oauth-protected-resource/mcp", md["resource_metadata_url"])
	require.Equal(t, []any{base + "/oauth"}, md["authorization_servers"])
	require.Contains(t, md["www_authenticate"], "resource_metadata=")
	asm, ok := md["authorization_server_metadata"].([]any)
	require.True(t, ok && len(asm) == 1, "authorization_server_metadata: %v", md["authorization_server_metadata"])
	first := asm[0].(map[string]any)
	require.Equal(t, base+"/oauth/token", first["token_endpoint"])
	require.Equal(t, base+"/.well-known/oauth-authorization-server/oauth", first["metadata_url"])
	for _, e := range fixtureLog(t, base) {
		if strings.HasPrefix(e.Path, "/.well-known/") {
			require.Empty(t, e.Headers["authorization"], "a metadata request carried credentials")
		}
	}
}

func TestOAuthClientCredentials(t *testing.T) {
	base := startOAuthFixture(t)
	c := oauthClient(t, `{"transport":{"type":"streamable_http","url":"`+base+`/mcp","headers":{"X-Tenant":"t1"}},`+
		`"auth":{"client_id":"lemon","client_secret":"secret","scopes":["read","write"]}}`, nil)
	require.Nil(t, errOrNil(connectReady(t, c)))
	_, err := c.CallSync("tools/list", nil, core.CallOptions{})
	require.Nil(t, errOrNil(err))

	entries := fixtureLog(t, base)
	tokens := tokenRequests(entries)
	require.Len(t, tokens, 1, "one grant")
	form := tokens[0].Form
	require.Equal(t, "client_credentials", form["grant_type"])
	require.Equal(t, base+"/mcp", form["resource"], "RFC 8707 resource")
	require.Equal(t, "read write", form["scope"])
	bearers := 0
	for _, e := range entries {
		switch {
		case strings.HasPrefix(e.Path, "/.well-known/"):
			require.Empty(t, e.Headers["authorization"], "metadata requests carry no credentials")
		case e.Path == "/mcp" && e.Status == http.StatusOK:
			require.True(t, strings.HasPrefix(e.Headers["authorization"], "Bearer "), "MCP request without bearer: %+v", e)
			bearers++
		}
	}
	require.GreaterOrEqual(t, bearers, 2, "initialize and tools/list carry the bearer")
}

// Pain point: N parallel 401s with a rotating refresh token must cause one
// refresh, not N (the losers would present a revoked refresh token).
func TestOAuthParallel401sRefreshOnce(t *testing.T) {
	base := startOAuthFixture(t, "-rotate-refresh", "-expire-method", "tools/call")
	c := oauthClient(t, httpConfig(base, `{"client_id":"lemon","client_secret":"secret"}`), nil)
	require.Nil(t, errOrNil(connectReady(t, c)))

	const n = 16
	errs := make(chan *core.Error, n)
	for i := 0; i < n; i++ {
		go func(i int) {
			_, err := c.CallSync("tools/call", []byte(fmt.Sprintf(`{"name":"echo","arguments":{"text":"p%d"}}`, i)), core.CallOptions{})
			errs <- err
		}(i)
	}
	for i := 0; i < n; i++ {
		select {
		case err := <-errs:
			require.Nil(t, errOrNil(err))
		case <-time.After(30 * time.Second):
			t.Fatal("a call did not complete")
		}
	}
	var grants []string
	for _, e := range tokenRequests(fixtureLog(t, base)) {
		grants = append(grants, e.Form["grant_type"])
		require.Equal(t, http.StatusOK, e.Status, "a token request failed: %+v", e)
	}
	require.Equal(t, []string{"client_credentials", "refresh_token"}, grants, "one grant, then exactly one refresh")
}

// Pain point: tokens persisted by the host survive a restart: the second
// client makes no token request and sends the stored bearer on initialize.
func TestOAuthAppTokenStoreResumes(t *testing.T) {
	base := startOAuthFixture(t)
	app := storetest.NewApplication()
	store := func(kind string, payload []byte) (core.Status, string) {
		answer, err := app.Ask(context.Background(), kind, payload)
		if err != nil {
			return core.StatusInvalidArgument, `{"message":"unexpected"}`
		}
		return core.StatusOK, string(answer)
	}
	cfg := httpConfig(base, `{"client_id":"lemon","client_secret":"secret","token_store":{"type":"app"}}`)
	first := oauthClient(t, cfg, store)
	require.Nil(t, errOrNil(connectReady(t, first)))
	require.Nil(t, errOrNil(first.Close(5*time.Second)))

	grants := app.Bodies("grants")
	require.Len(t, grants, 1, "the grant was saved")
	var rec map[string]any
	for _, body := range grants {
		require.NoError(t, json.Unmarshal(body, &rec))
	}
	require.NotEmpty(t, rec["access_token"])
	require.Equal(t, base+"/oauth", rec["issuer"])
	require.Equal(t, base+"/mcp", rec["resource"])
	if exp, ok := rec["expires_at"].(float64); ok {
		require.Greater(t, int64(exp), time.Now().UnixMilli(), "expiry is absolute")
	} else {
		t.Fatalf("no expires_at in %v", rec)
	}

	_, err := http.Post(base+"/_log/reset", "text/plain", nil)
	require.NoError(t, err)
	second := oauthClient(t, cfg, store)
	require.Nil(t, errOrNil(connectReady(t, second)))
	entries := fixtureLog(t, base)
	require.Empty(t, tokenRequests(entries), "the stored token was used")
	var initAuth string
	for _, e := range entries {
		if e.RPCMethod == "initialize" {
			initAuth = e.Headers["authorization"]
		}
	}
	require.Equal(t, "Bearer "+rec["access_token"].(string), initAuth, "the stored bearer went on initialize")
}

// browser plays the user agent: it GETs the authorization URL without
// following the redirect and reports where it was sent.
func browser(t *testing.T, mutate func(redirect string) string) hostFunc {
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return func(kind string, payload []byte) (core.Status, string) {
		if kind != "authorize" {
			return core.StatusInvalidArgument, `{}`
		}
		var req struct {
			URL string `json:"authorization_url"`
		}
		if json.Unmarshal(payload, &req) != nil {
			return core.StatusInvalidArgument, `{}`
		}
		resp, err := client.Get(req.URL)
		if err != nil {
			return core.StatusTransport, `{}`
		}
		resp.Body.Close()
		loc := resp.Header.Get("Location")
		if mutate != nil {
			loc = mutate(loc)
		}
		b, _ := json.Marshal(map[string]string{"redirect_url": loc})
		return core.StatusOK, string(b)
	}
}

func TestOAuthAuthorizationCodePKCE(t *testing.T) {
	base := startOAuthFixture(t, "-client-secret", "", "-iss")
	c := oauthClient(t, httpConfig(base, `{"client_id":"lemon","redirect_uri":"http://127.0.0.1:9/callback"}`,
		`"handlers":{"authorization":{}}`), browser(t, nil))
	require.Nil(t, errOrNil(connectReady(t, c)))

	entries := fixtureLog(t, base)
	var authorize, token *logEntry
	for i := range entries {
		switch entries[i].Path {
		case "/oauth/authorize":
			authorize = &entries[i]
		case "/oauth/token":
			token = &entries[i]
		}
	}
	require.NotNil(t, authorize, "the browser was sent to the authorization endpoint")
	require.NotNil(t, token)
	q := authorize.Query
	require.Equal(t, "code", q["response_type"])
	require.Equal(t, "S256", q["code_challenge_method"])
	require.NotEmpty(t, q["code_challenge"])
	require.NotEmpty(t, q["state"])
	require.Equal(t, base+"/mcp", q["resource"])
	f := token.Form
	require.Equal(t, "authorization_code", f["grant_type"])
	require.NotEmpty(t, f["code_verifier"])
	require.Equal(t, "http://127.0.0.1:9/callback", f["redirect_uri"])
	require.Equal(t, base+"/mcp", f["resource"], "the same resource in both requests")
	require.Equal(t, http.StatusOK, token.Status)
}

func TestOAuthAuthorizationStateMismatch(t *testing.T) {
	base := startOAuthFixture(t, "-client-secret", "")
	tamper := func(loc string) string { return strings.Replace(loc, "state=", "state=evil", 1) }
	c := oauthClient(t, httpConfig(base, `{"client_id":"lemon","redirect_uri":"http://127.0.0.1:9/callback"}`,
		`"handlers":{"authorization":{}}`), browser(t, tamper))
	err := connectReady(t, c)
	require.NotNil(t, err)
	require.Equal(t, core.StatusAuthRequired, err.Status, err.Message)
	require.Contains(t, strings.ToLower(err.Message), "state")
	require.Empty(t, tokenRequests(fixtureLog(t, base)), "no code was exchanged")
}
