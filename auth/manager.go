package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lemonmcp/lemonmcp/auth/tokenstore"
	"github.com/lemonmcp/lemonmcp/store"
)

const (
	defaultAuthorizationTimeout = 5 * time.Minute
	defaultMaxStepUps           = 2
	// expirySkew: a token this close to its known expiry is refreshed
	// before it is sent, so it does not expire in flight.
	expirySkew = 30 * time.Second
)

// Manager holds the OAuth state of one client (one MCP server URL): the
// discovered metadata, the client registration and the tokens. It is safe
// for concurrent use; grants and refreshes are single-flight.
//
//	m, err := auth.New(cfg, mcpURL)   // config errors name the field ("auth.redirect_uri: ...")
//	m.Bind(host)                      // before the first request
//	httpClient.Transport = m.Wrap(httpClient.Transport)
//
// The wrapped RoundTripper adds "Authorization: Bearer" to every request
// once a token is held; on a 401 it refreshes or runs the configured flow
// and retries once; on a 403 insufficient_scope it re-authorizes with the
// union of scopes, at most Config.MaxStepUps times per request. Metadata,
// registration and token requests use a separate client with metadata-only
// headers (never the configured MCP headers, never a bearer).
type Manager struct {
	cfg       Config
	mcpURL    *url.URL
	canonical string
	signer    *signer
	// dpop is the DPoP key token requests carry proofs of (nil without
	// DPoP: requests then go out untouched). An unconfigured key is
	// replaced by the one a shared grant is bound to when the grant is
	// adopted (shared.go); tokens keep the key they are bound to
	// (tokenState.key).
	dpop        atomic.Pointer[dpopKey]
	dpopAdoptMu sync.Mutex // one adoption of a stored key at a time
	maxStepUps  int
	authTimeout time.Duration

	host     atomic.Pointer[hostBox]
	loadOnce sync.Once

	// closeCtx ends with Close: grants in progress (a Host.Authorize can
	// block for minutes) stop when the client shuts down.
	closeCtx context.Context
	closeFn  context.CancelFunc

	now func() time.Time // tests move the clock

	mu        sync.Mutex
	tok       tokenState
	gen       uint64 // bumped whenever tok.access changes
	flight    *flight
	regs      map[string]*registration // by authorization server issuer
	lastDisc  *discovery
	exhausted map[string]bool // step-up scope sets that did not satisfy the server

	// A grant shared through Config.TokenStore (shared.go).
	grants         *tokenstore.Grants
	storeKey       string
	owner          string // this Manager's lease owner id
	ownsStore      bool   // opened from Config.TokenStoreSpec: closed by Close
	closeStoreOnce sync.Once
	storeGen       uint64 // generation of the stored record last adopted or committed
	adoptedGen     uint64 // m.gen of the last token adopted from the store
	// afterStaleLease: the lease this process holds replaced an expired
	// one (set by claim, read by commit; one flight at a time).
	afterStaleLease bool
}

type hostBox struct{ h Host }

// tokenState is the current grant. issuer binds it to one authorization
// server (SEP-2352).
type tokenState struct {
	access    string
	key       *dpopKey // token_type DPoP: the key it is bound to, for the DPoP scheme and proofs; nil for a bearer token
	refresh   string
	expiresAt time.Time // zero when unknown
	scope     string    // granted (or, when not reported, requested)
	requested []string  // the scopes last requested, for step-up unions
	issuer    string
}

// registration is a client identity at one authorization server.
type registration struct {
	clientID string
	secret   string
	method   string // token_endpoint_auth_method from DCR, if any
	fromDCR  bool
	cimd     bool
}

// New validates cfg and returns the Manager of the MCP server at mcpURL.
// Errors name the offending configuration field.
func New(cfg Config, mcpURL string) (*Manager, error) {
	u, err := url.Parse(mcpURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("auth: the MCP server URL must be an absolute http or https URL")
	}
	canon, err := canonicalResource(mcpURL)
	if err != nil {
		return nil, fmt.Errorf("auth: the MCP server URL %s", err)
	}
	m := &Manager{cfg: cfg, mcpURL: u, canonical: canon, now: time.Now,
		regs: map[string]*registration{}, exhausted: map[string]bool{}}
	if err := m.validate(); err != nil {
		return nil, err
	}
	m.cfg.Scopes = dedupe(cfg.Scopes)
	m.maxStepUps = cfg.MaxStepUps
	if m.maxStepUps == 0 {
		m.maxStepUps = defaultMaxStepUps
	}
	m.authTimeout = cfg.AuthorizationTimeout
	if m.authTimeout == 0 {
		m.authTimeout = defaultAuthorizationTimeout
	}
	m.tok.refresh = cfg.RefreshToken
	if cfg.TokenStore == nil && cfg.TokenStoreSpec != nil {
		// The application's store answers once a host is bound (Bind).
		s, err := store.Open(*cfg.TokenStoreSpec, m.appStoreAsk)
		if err != nil {
			return nil, fmt.Errorf("auth.token_store.%s", err)
		}
		cfg.TokenStore = s
		m.cfg.TokenStore = s
		m.ownsStore = true
	}
	if cfg.TokenStore != nil {
		m.grants = &tokenstore.Grants{Store: cfg.TokenStore}
		m.storeKey = cfg.TokenStoreKey
		if m.storeKey == "" {
			m.storeKey = defaultStoreKey(canon, cfg.ClientID)
		}
		m.owner = randomString(12)
	}
	m.closeCtx, m.closeFn = context.WithCancel(context.Background())
	return m, nil
}

func (m *Manager) validate() error {
	c := &m.cfg
	switch c.Flow {
	case "", FlowAuto, FlowAuthorizationCode, FlowClientCredentials, FlowJWTBearer:
	default:
		return fmt.Errorf("auth.flow: %q is not auto, authorization_code, client_credentials or jwt_bearer", c.Flow)
	}
	if err := m.validateExtensions(); err != nil {
		return err
	}
	switch c.TokenAuthMethod {
	case "", MethodClientSecretBasic, MethodClientSecretPost, MethodNone, MethodPrivateKeyJWT:
	default:
		return fmt.Errorf("auth.token_auth_method: %q is not client_secret_basic, client_secret_post, none or private_key_jwt", c.TokenAuthMethod)
	}
	if c.ClientSecret != "" && c.ClientID == "" {
		return errors.New("auth.client_secret: set auth.client_id too")
	}
	if (c.TokenAuthMethod == MethodClientSecretBasic || c.TokenAuthMethod == MethodClientSecretPost) && c.ClientSecret == "" {
		return fmt.Errorf("auth.token_auth_method: %s needs auth.client_secret", c.TokenAuthMethod)
	}
	if c.TokenAuthMethod == MethodPrivateKeyJWT && c.PrivateKey == nil {
		return errors.New("auth.token_auth_method: private_key_jwt needs auth.private_key")
	}
	if c.RedirectURI != "" {
		u, err := url.Parse(c.RedirectURI)
		if err != nil || u.Host == "" || u.Fragment != "" ||
			!(u.Scheme == "https" || (u.Scheme == "http" && isLoopbackHost(u.Hostname()))) {
			return errors.New("auth.redirect_uri: must be an https URL or an http URL on a loopback host, without fragment")
		}
	} else if c.Flow == FlowAuthorizationCode {
		return errors.New("auth.redirect_uri: required by the authorization_code flow")
	}
	if c.ClientMetadataURL != "" {
		u, err := url.Parse(c.ClientMetadataURL)
		if err != nil || u.Scheme != "https" || u.Host == "" || strings.Trim(u.Path, "/") == "" {
			return errors.New("auth.client_metadata_url: must be an https URL with a path")
		}
	}
	if c.PrivateKey != nil {
		s, err := parseSigner(c.PrivateKey)
		if err != nil {
			return fmt.Errorf("auth.private_key: %s", err)
		}
		m.signer = s
	}
	if c.MaxStepUps < 0 {
		return errors.New("auth.max_step_ups: must not be negative")
	}
	if c.TokenStoreLease < 0 {
		return errors.New("auth.token_store.lease_ms: must not be negative")
	}
	if c.AuthorizationTimeout < 0 {
		return errors.New("auth.authorization_timeout: must not be negative")
	}
	if c.Flow == FlowClientCredentials && c.ClientID == "" {
		return errors.New("auth.client_id: required by the client_credentials flow")
	}
	return nil
}

// Bind sets the host boundary; call it before the first request. Without
// it the library behaves as a host that cannot authorize, stores nothing
// and logs nothing.
func (m *Manager) Bind(h Host) { m.host.Store(&hostBox{h: h}) }

// Close is optional: it aborts grants in progress (including a pending
// Host.Authorize) and makes later ones fail. Requests keep using a token
// already held.
func (m *Manager) Close() {
	m.closeFn()
	if m.ownsStore {
		m.closeStoreOnce.Do(func() { _ = m.grants.Store.Close() })
	}
}

// Wrap returns a RoundTripper that authorizes requests sent through base
// (http.DefaultTransport when nil). Metadata and token requests go through
// base too, on a separate client without the wrapper.
func (m *Manager) Wrap(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return &transport{m: m, base: base}
}

func (m *Manager) hostOrNil() Host {
	if b := m.host.Load(); b != nil {
		return b.h
	}
	return nil
}

func (m *Manager) logf(level, format string, args ...any) {
	if h := m.hostOrNil(); h != nil {
		h.Log(level, "auth: "+fmt.Sprintf(format, args...))
	}
}

func (m *Manager) canAuthorize() bool {
	h := m.hostOrNil()
	return h != nil && h.CanAuthorize()
}

// current is the access token, the DPoP key it is bound to (nil for a
// bearer token), and its generation.
func (m *Manager) current() (string, *dpopKey, uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.tok.access, m.tok.key, m.gen
}

// proofKey is the DPoP key token requests sign proofs with now (nil
// without DPoP).
func (m *Manager) proofKey() *dpopKey { return m.dpop.Load() }

// validateExtensions checks the jwt-bearer, token exchange and DPoP
// settings.
func (m *Manager) validateExtensions() error {
	c := &m.cfg
	if c.Assertion != "" && c.TokenExchange != nil {
		return errors.New("auth.assertion: set either auth.assertion or auth.token_exchange, not both")
	}
	if c.Assertion != "" && strings.Count(c.Assertion, ".") != 2 {
		return errors.New("auth.assertion: must be a JWT (three dot-separated parts)")
	}
	if te := c.TokenExchange; te != nil {
		if te.TokenEndpoint == "" {
			return errors.New("auth.token_exchange.token_endpoint: required")
		}
		if _, err := checkAuthURL(te.TokenEndpoint, c.AllowInsecureHTTP); err != nil {
			return fmt.Errorf("auth.token_exchange.token_endpoint: %s", err)
		}
		if te.SubjectToken == "" {
			return errors.New("auth.token_exchange.subject_token: required")
		}
		switch te.TokenAuthMethod {
		case "", MethodNone:
		case MethodClientSecretBasic, MethodClientSecretPost:
			if te.ClientSecret == "" {
				return fmt.Errorf("auth.token_exchange.token_auth_method: %s needs auth.token_exchange.client_secret", te.TokenAuthMethod)
			}
		default:
			return fmt.Errorf("auth.token_exchange.token_auth_method: %q is not client_secret_basic, client_secret_post or none", te.TokenAuthMethod)
		}
		if te.ClientSecret != "" && te.ClientID == "" {
			return errors.New("auth.token_exchange.client_secret: set auth.token_exchange.client_id too")
		}
	}
	if c.Flow == FlowJWTBearer && c.Assertion == "" && c.TokenExchange == nil {
		return errors.New("auth.flow: jwt_bearer needs auth.assertion or auth.token_exchange")
	}
	if c.DPoP != nil {
		k, err := newDPoP(c.DPoP)
		if err != nil {
			return fmt.Errorf("auth.dpop: %s", err)
		}
		m.dpop.Store(k)
	}
	return nil
}
