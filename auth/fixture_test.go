package auth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lemonmcp/lemonmcp/internal/jsonx"
	"github.com/lemonmcp/lemonmcp/store"
	"github.com/lemonmcp/lemonmcp/store/storetest"
	"github.com/stretchr/testify/require"
)

// recorded is one request a fake server saw. Handlers only record; all
// assertions happen on the test goroutine.
type recorded struct {
	method string
	path   string
	query  url.Values
	header http.Header
	form   url.Values
	json   map[string]any
	body   string
}

// env is a fake authorization server and MCP server on loopback.
type env struct {
	as, rs *httptest.Server

	mu sync.Mutex
	// authorization server knobs
	asPrefix   string         // issuer path, e.g. "/tenant1"
	asMetaPath string         // where the metadata is served
	asMeta     map[string]any // overrides; a nil value deletes the field
	issMode    string         // "correct" (default), "wrong", "omit", "normalized"
	noDCR      bool
	tokenFn    func(form url.Values, h http.Header) (int, map[string]any)
	tokenHdr   http.Header // headers of the next token answer (set by tokenFn)
	regFn      func(body map[string]any) (int, map[string]any)
	// MCP server knobs
	prmPath  string // "" = path-aware; "-" = no PRM at all
	prmDoc   func() map[string]any
	wwwAuth  func() string
	required []string // scopes every MCP request needs
	rsFn     func(r *http.Request, scopes []string, ok bool) (int, string)
	rsHdr    http.Header // headers of the next MCP answer (set by rsFn)
	// records
	tokens    map[string][]string // issued access token → scopes
	codes     map[string]string   // authorization code → scope requested
	refreshes map[string]bool     // live refresh tokens
	seq       int
	tokenReqs []recorded
	regReqs   []recorded
	authzReqs []recorded
	metaReqs  []recorded
	mcpReqs   []recorded
}

func newEnv(t *testing.T) *env {
	e := &env{tokens: map[string][]string{}, codes: map[string]string{}, refreshes: map[string]bool{}, issMode: "correct"}
	e.as = httptest.NewServer(http.HandlerFunc(e.serveAS))
	e.rs = httptest.NewServer(http.HandlerFunc(e.serveRS))
	t.Cleanup(e.as.Close)
	t.Cleanup(e.rs.Close)
	return e
}

func (e *env) issuer() string   { return e.as.URL + e.asPrefix }
func (e *env) mcpURL() string   { return e.rs.URL + "/mcp" }
func (e *env) prmURL() string   { return e.rs.URL + "/.well-known/oauth-protected-resource/mcp" }
func (e *env) lock() func()     { e.mu.Lock(); return e.mu.Unlock }
func (e *env) set(f func(*env)) { defer e.lock()(); f(e) }

// records is a copy of what the servers saw.
type records struct{ tokenReqs, regReqs, authzReqs, metaReqs, mcpReqs []recorded }

func (e *env) seen() records {
	defer e.lock()()
	cp := func(r []recorded) []recorded { return append([]recorded(nil), r...) }
	return records{cp(e.tokenReqs), cp(e.regReqs), cp(e.authzReqs), cp(e.metaReqs), cp(e.mcpReqs)}
}

func record(r *http.Request) recorded {
	body, _ := io.ReadAll(r.Body)
	rec := recorded{method: r.Method, path: r.URL.Path, query: r.URL.Query(), header: r.Header.Clone(), body: string(body)}
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		rec.form, _ = url.ParseQuery(string(body))
	}
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		_ = jsonx.Unmarshal(body, &rec.json)
	}
	return rec
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(jsonx.MustMarshal(v))
}

func (e *env) metadata() map[string]any {
	base := e.as.URL + e.asPrefix
	md := map[string]any{
		"issuer":                                         base,
		"authorization_endpoint":                         base + "/authorize",
		"token_endpoint":                                 base + "/token",
		"registration_endpoint":                          base + "/register",
		"response_types_supported":                       []string{"code"},
		"code_challenge_methods_supported":               []string{"S256"},
		"authorization_response_iss_parameter_supported": true,
	}
	if e.noDCR {
		delete(md, "registration_endpoint")
	}
	for k, v := range e.asMeta {
		if v == nil {
			delete(md, k)
		} else {
			md[k] = v
		}
	}
	return md
}

func (e *env) serveAS(w http.ResponseWriter, r *http.Request) {
	rec := record(r)
	defer e.lock()()
	metaPath := e.asMetaPath
	if metaPath == "" {
		metaPath = "/.well-known/oauth-authorization-server" + e.asPrefix
	}
	switch {
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/.well-known/") || strings.HasSuffix(r.URL.Path, "/.well-known/openid-configuration"):
		e.metaReqs = append(e.metaReqs, rec)
		if r.URL.Path != metaPath {
			http.NotFound(w, r)
			return
		}
		writeJSON(w, 200, e.metadata())
	case r.URL.Path == e.asPrefix+"/authorize":
		e.authzReqs = append(e.authzReqs, rec)
		q := r.URL.Query()
		ru, _ := url.Parse(q.Get("redirect_uri"))
		rq := ru.Query()
		rq.Set("code", "code-"+q.Get("code_challenge"))
		e.codes["code-"+q.Get("code_challenge")] = q.Get("scope")
		if s := q.Get("state"); s != "" {
			rq.Set("state", s)
		}
		switch e.issMode {
		case "correct":
			rq.Set("iss", e.issuer())
		case "wrong":
			rq.Set("iss", "https://evil.example.com")
		case "normalized":
			rq.Set("iss", e.issuer()+"/")
		}
		ru.RawQuery = rq.Encode()
		http.Redirect(w, r, ru.String(), http.StatusFound)
	case r.URL.Path == e.asPrefix+"/token":
		e.tokenReqs = append(e.tokenReqs, rec)
		if e.tokenFn != nil {
			st, body := e.tokenFn(rec.form, rec.header)
			for k, v := range e.tokenHdr {
				w.Header()[k] = v
			}
			e.tokenHdr = nil
			if tok, ok := body["access_token"].(string); ok && st == 200 {
				e.tokens[tok] = strings.Fields(fmt.Sprint(body["scope"]))
			}
			writeJSON(w, st, body)
			return
		}
		if rec.form.Get("grant_type") == "refresh_token" && !e.refreshes[rec.form.Get("refresh_token")] {
			writeJSON(w, 400, map[string]any{"error": "invalid_grant", "error_description": "bad " + rec.form.Get("refresh_token")})
			return
		}
		e.seq++
		tok := fmt.Sprintf("tok-%d", e.seq)
		rt := fmt.Sprintf("rt-%d", e.seq)
		scopes := strings.Fields(rec.form.Get("scope"))
		if rec.form.Get("grant_type") == "authorization_code" {
			scopes = strings.Fields(e.codes[rec.form.Get("code")])
		}
		e.tokens[tok] = scopes
		e.refreshes[rt] = true
		resp := map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": 3600, "refresh_token": rt}
		if len(scopes) > 0 {
			resp["scope"] = strings.Join(scopes, " ")
		}
		writeJSON(w, 200, resp)
	case r.URL.Path == e.asPrefix+"/register":
		e.regReqs = append(e.regReqs, rec)
		if e.noDCR {
			http.NotFound(w, r)
			return
		}
		if e.regFn != nil {
			st, body := e.regFn(rec.json)
			writeJSON(w, st, body)
			return
		}
		writeJSON(w, 201, map[string]any{"client_id": fmt.Sprintf("dcr-client-%d", len(e.regReqs)), "client_secret": "dcr-secret"})
	default:
		http.NotFound(w, r)
	}
}

func (e *env) serveRS(w http.ResponseWriter, r *http.Request) {
	rec := record(r)
	defer e.lock()()
	if strings.HasPrefix(r.URL.Path, "/.well-known/") || r.URL.Path == "/custom/prm.json" {
		e.metaReqs = append(e.metaReqs, rec)
		want := e.prmPath
		if want == "" {
			want = "/.well-known/oauth-protected-resource/mcp"
		}
		if want == "-" || r.URL.Path != want {
			http.NotFound(w, r)
			return
		}
		doc := map[string]any{"resource": e.rs.URL + "/mcp", "authorization_servers": []string{e.issuer()}}
		if e.prmDoc != nil {
			doc = e.prmDoc()
		}
		writeJSON(w, 200, doc)
		return
	}
	e.mcpReqs = append(e.mcpReqs, rec)
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	scopes, valid := e.tokens[tok]
	ok = ok && valid
	st, wa := 200, ""
	if e.rsFn != nil {
		st, wa = e.rsFn(r, scopes, ok)
		for k, v := range e.rsHdr {
			w.Header()[k] = v
		}
		e.rsHdr = nil
	} else if !ok {
		st = 401
	} else {
		for _, s := range e.required {
			if !contains(scopes, s) {
				st = 403
				wa = fmt.Sprintf(`Bearer error="insufficient_scope", scope=%q, resource_metadata=%q`, strings.Join(e.required, " "), e.prmURL())
			}
		}
	}
	if st == 401 && wa == "" {
		if e.wwwAuth != nil {
			wa = e.wwwAuth()
		} else {
			wa = fmt.Sprintf(`Bearer resource_metadata=%q`, e.prmURL())
		}
	}
	if wa != "" {
		w.Header().Set("WWW-Authenticate", wa)
	}
	w.WriteHeader(st)
	_, _ = io.WriteString(w, "echo:"+rec.body)
}

// fakeHost follows the authorization URL like a browser that the user
// approves in, and records everything.
type fakeHost struct {
	mu       sync.Mutex
	can      bool
	reply    func(req *AuthorizationRequest, redirect string) *AuthorizationReply
	authErr  error
	app      *storetest.Application // the application's store (AskStore), made on first use
	loads    int                    // store_load requests
	authReqs []*AuthorizationRequest
	logs     []string
}

func (h *fakeHost) CanAuthorize() bool { return h.can }

func (h *fakeHost) Authorize(ctx context.Context, req *AuthorizationRequest) (*AuthorizationReply, error) {
	h.mu.Lock()
	cp := *req
	h.authReqs = append(h.authReqs, &cp)
	authErr, replyFn := h.authErr, h.reply
	h.mu.Unlock()
	if authErr != nil {
		return nil, authErr
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	hreq, _ := http.NewRequestWithContext(ctx, http.MethodGet, req.AuthorizationURL, nil)
	resp, err := c.Do(hreq)
	if err != nil {
		return nil, err
	}
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	if replyFn != nil {
		return replyFn(req, loc), nil
	}
	return &AuthorizationReply{RedirectURL: loc}, nil
}

func (h *fakeHost) AskStore(ctx context.Context, kind string, payload []byte) ([]byte, error) {
	return h.application(kind == store.AppLoad).Ask(ctx, kind, payload)
}

// application is the host's store, made on first use; load counts a
// store_load.
func (h *fakeHost) application(load bool) *storetest.Application {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.app == nil {
		h.app = storetest.NewApplication()
	}
	if load {
		h.loads++
	}
	return h.app
}

func (h *fakeHost) Log(level, msg string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.logs = append(h.logs, level+": "+msg)
}

func (h *fakeHost) snapshot() *fakeHost {
	h.mu.Lock()
	defer h.mu.Unlock()
	return &fakeHost{authReqs: append([]*AuthorizationRequest(nil), h.authReqs...), app: h.app,
		logs: append([]string(nil), h.logs...), loads: h.loads}
}

const testRedirect = "http://127.0.0.1:9/callback"

// client builds a Manager bound to h and an *http.Client through it.
func (e *env) client(t *testing.T, cfg Config, h Host) (*Manager, *http.Client) {
	t.Helper()
	if cfg.RedirectURI == "" && cfg.Flow != FlowClientCredentials {
		cfg.RedirectURI = testRedirect
	}
	m, err := New(cfg, e.mcpURL())
	require.NoError(t, err)
	if h != nil {
		m.Bind(h)
	}
	t.Cleanup(m.Close)
	return m, &http.Client{Transport: m.Wrap(nil), Timeout: 20 * time.Second}
}

// post sends an MCP-like POST with a replayable body and returns status
// and body.
func post(c *http.Client, u, body string, hdr ...string) (int, string, error) {
	req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	req.Header.Set("X-Custom-Mcp", "secret-header")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), nil
}

// authErr extracts the *Error of a client error.
func authErr(t *testing.T, err error) *Error {
	t.Helper()
	var ae *Error
	require.True(t, errors.As(err, &ae), "want *auth.Error, got %v", err)
	_, merr := jsonx.Marshal(ae.Metadata)
	require.NoError(t, merr, "metadata must be JSON-marshalable")
	return ae
}

func paths(rs []recorded) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.path)
	}
	return out
}
