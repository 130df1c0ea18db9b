package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

type grantMode int

const (
	modeUnauthorized grantMode = iota // a 401: refresh, else the flow
	modeStepUp                        // a 403 insufficient_scope: the flow with the union scope
	modeRefresh                       // proactive: refresh only
)

type grantReq struct {
	mode    grantMode
	ch      *bearerChallenge
	trigger *http.Request
	base    http.RoundTripper
}

var errNoRefresh = errors.New("no refresh token")

// runGrant is one flight: discovery, then the refresh_token grant, then
// the configured flow.
func (m *Manager) runGrant(ctx context.Context, g grantReq) error {
	if m.shared() && g.mode != modeStepUp {
		// Another process may have refreshed already: no network call.
		if ok, err := m.adoptNewer(ctx); err != nil {
			return m.challengeError(g.ch, "the shared token store failed: "+err.Error())
		} else if ok {
			return nil
		}
	}
	f := newFetcher(g.base, &m.cfg, g.trigger)
	var d *discovery
	if g.mode == modeRefresh {
		m.mu.Lock()
		d = m.lastDisc
		m.mu.Unlock()
	}
	if d == nil {
		var err error
		// Discovery runs again on every 401: the server may have moved to
		// another authorization server (SEP-2352).
		if d, err = m.discover(ctx, f, g.ch); err != nil {
			return err
		}
		m.mu.Lock()
		m.lastDisc = d
		m.mu.Unlock()
	}
	as := d.as

	m.mu.Lock()
	if m.tok.issuer != "" && m.tok.issuer != as.Issuer {
		// Tokens of another authorization server are not used here.
		// gen is not bumped: no new token exists, and waiters of this
		// flight must see its outcome.
		m.tok = tokenState{requested: m.tok.requested}
		m.mu.Unlock()
		m.logf("info", "the authorization server changed to %s; earlier credentials are not reused", safeURL(as.Issuer))
		m.mu.Lock()
	}
	refresh, prevRequested := m.tok.refresh, m.tok.requested
	m.mu.Unlock()

	if g.mode != modeStepUp && m.shared() {
		err := m.sharedRefresh(ctx, f, d)
		if err == nil || g.mode == modeRefresh {
			return err
		}
		if !sharedFlowMayFollow(err) {
			return m.authError(d, "refreshing the shared token failed: "+err.Error())
		}
		if !errors.Is(err, errNoRefresh) {
			m.logf("info", "refreshing the shared token failed (%s); authorizing again", err.Error())
		}
	} else if g.mode != modeStepUp && refresh != "" {
		err := m.refresh(ctx, f, d, refresh)
		if err == nil || g.mode == modeRefresh {
			return err
		}
		m.logf("info", "refreshing the token failed (%s); authorizing again", err.Error())
	}
	if g.mode == modeRefresh {
		return errNoRefresh
	}

	flow, err := m.pickFlow(d)
	if err != nil {
		return err
	}
	var scopes []string
	if g.mode == modeStepUp {
		scopes = unionScopes(prevRequested, g.ch.scope)
	} else {
		scopes = selectScopes(g.ch, m.cfg.Scopes, d)
	}
	if flow == FlowAuthorizationCode {
		scopes = withOfflineAccess(scopes, as)
	}
	reg, err := m.clientFor(ctx, f, d, flow, scopes)
	if err != nil {
		return err
	}
	if m.shared() {
		return m.sharedFlow(ctx, f, d, flow, reg, scopes)
	}
	tr, err := m.runFlow(ctx, f, d, flow, reg, scopes)
	if err != nil {
		return err
	}
	m.install(tr, as.Issuer, scopes, true)
	return nil
}

// runFlow obtains a token with the configured flow.
func (m *Manager) runFlow(ctx context.Context, f *fetcher, d *discovery, flow Flow, reg *registration, scopes []string) (*tokenResult, error) {
	var tr *tokenResult
	var err error
	switch flow {
	case FlowAuthorizationCode:
		tr, err = m.authorizationCode(ctx, f, d, reg, scopes)
	case FlowJWTBearer:
		tr, err = m.jwtBearer(ctx, f, d, reg, scopes)
	default:
		tr, err = m.clientCredentials(ctx, f, d, reg, scopes)
	}
	if err != nil {
		var ae *Error
		if errors.As(err, &ae) {
			return nil, ae
		}
		return nil, m.authError(d, "the token request failed: "+err.Error())
	}
	return tr, nil
}

// grantOf is the grant_type a flow sends.
func grantOf(f Flow) string {
	switch f {
	case FlowAuthorizationCode:
		return GrantAuthorizationCode
	case FlowJWTBearer:
		return GrantJWTBearer
	}
	return GrantClientCredentials
}

// asSupports reports whether the authorization server accepts a flow's
// grant: yes when it publishes no grant_types_supported (the document may
// simply not say; its answer will).
func asSupports(as *asMeta, f Flow) bool {
	return len(as.GrantTypesSupported) == 0 || contains(as.GrantTypesSupported, grantOf(f))
}

// pickFlow resolves FlowAuto and checks a flow can run, before anything is
// sent: a grant the server's grant_types_supported does not list is not
// tried (no user is sent to authorize a grant the server refuses).
func (m *Manager) pickFlow(d *discovery) (Flow, error) {
	as := d.as
	unsupported := func(f Flow) error {
		e := m.authError(d, fmt.Sprintf("the authorization server %s does not support the %s grant (its grant_types_supported lists %s)",
			safeURL(as.Issuer), grantOf(f), strings.Join(sanitizeAll(as.GrantTypesSupported), ", ")))
		e.Metadata["unsupported_grant_type"] = grantOf(f)
		return e
	}
	switch m.cfg.Flow {
	case FlowClientCredentials, FlowJWTBearer:
		if !asSupports(as, m.cfg.Flow) {
			return "", unsupported(m.cfg.Flow)
		}
		return m.cfg.Flow, nil
	case FlowAuthorizationCode:
		if !m.canAuthorize() {
			return "", m.authError(d, "the authorization code flow is configured but the host cannot authorize (Host.CanAuthorize is false)")
		}
		if !asSupports(as, FlowAuthorizationCode) {
			return "", unsupported(FlowAuthorizationCode)
		}
		return FlowAuthorizationCode, nil
	}
	// auto: the flows the configuration can run, in order of preference.
	var can []Flow
	if m.cfg.Assertion != "" || m.cfg.TokenExchange != nil {
		can = append(can, FlowJWTBearer)
	}
	if m.canAuthorize() {
		if m.cfg.RedirectURI == "" {
			return "", m.authError(d, "the host can authorize but auth.redirect_uri is not configured")
		}
		can = append(can, FlowAuthorizationCode)
	}
	if m.cfg.ClientSecret != "" || m.signer != nil {
		can = append(can, FlowClientCredentials)
	}
	if len(can) == 0 {
		return "", m.authError(d, "the server requires OAuth authorization; let the host authorize users (authorization code flow with auth.redirect_uri), or configure auth.client_id with auth.client_secret or auth.private_key for client credentials, auth.assertion or auth.token_exchange for the jwt-bearer grant, or supply a token in the Authorization header")
	}
	for _, f := range can {
		if asSupports(as, f) {
			return f, nil
		}
	}
	if len(can) == 1 {
		return "", unsupported(can[0])
	}
	grants := make([]string, len(can))
	for i, f := range can {
		grants[i] = grantOf(f)
	}
	e := m.authError(d, fmt.Sprintf("the authorization server %s supports none of the configured grants (%s; its grant_types_supported lists %s)",
		safeURL(as.Issuer), strings.Join(grants, ", "), strings.Join(sanitizeAll(as.GrantTypesSupported), ", ")))
	e.Metadata["unsupported_grant_type"] = grants[0]
	return "", e
}

func sanitizeAll(in []string) []string {
	out := make([]string, 0, len(in))
	for _, s := range in {
		out = append(out, sanitize(s, 80, nil))
	}
	return out
}

// refresh runs the refresh_token grant. A rotated refresh token replaces
// the old; an absent one keeps it. An OAuth error answer means the refresh
// token is dead: it is dropped so the next 401 goes straight to the flow.
func (m *Manager) refresh(ctx context.Context, f *fetcher, d *discovery, rt string) error {
	reg := m.knownClient(d)
	if reg == nil {
		return errors.New("no client identity is known for the refresh")
	}
	// x/oauth2's own refresh (Config.TokenSource) cannot send resource
	// (RFC 8707), which MCP requires on every token request.
	form := url.Values{
		"grant_type":    {"refresh_token"},
		"refresh_token": {rt},
		"resource":      {d.resource},
	}
	tr, err := m.tokenRequest(ctx, f, d.as, reg, grantCall(d.as.TokenEndpoint, form), []string{rt})
	if err != nil {
		var oe *oauthError
		if errors.As(err, &oe) {
			m.mu.Lock()
			if m.tok.refresh == rt {
				m.tok.refresh = ""
			}
			m.mu.Unlock()
		}
		return err
	}
	m.install(tr, d.as.Issuer, nil, false)
	return nil
}

// knownClient is an identity usable without registering: the configured
// one, the one registered earlier with this issuer, or the CIMD URL.
func (m *Manager) knownClient(d *discovery) *registration {
	if m.cfg.ClientID != "" {
		return &registration{clientID: m.cfg.ClientID, secret: m.cfg.ClientSecret}
	}
	m.mu.Lock()
	reg := m.regs[d.as.Issuer]
	m.mu.Unlock()
	if reg != nil {
		return reg
	}
	if m.cfg.ClientMetadataURL != "" && d.as.ClientIDMetadataDocumentSupported {
		return &registration{clientID: m.cfg.ClientMetadataURL, cimd: true, method: MethodNone}
	}
	return nil
}

// clientCredentials runs the client credentials grant (SEP-1046).
func (m *Manager) clientCredentials(ctx context.Context, f *fetcher, d *discovery, reg *registration, scopes []string) (*tokenResult, error) {
	form := url.Values{"grant_type": {GrantClientCredentials}, "resource": {d.resource}}
	if len(scopes) > 0 {
		form.Set("scope", joinScopes(scopes))
	}
	return m.tokenRequest(ctx, f, d.as, reg, grantCall(d.as.TokenEndpoint, form), nil)
}

// install makes tr the current token.
func (m *Manager) install(tr *tokenResult, issuer string, requested []string, setRequested bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.tok.access = tr.access
	m.tok.key = tr.key
	m.gen++
	if tr.refresh != "" {
		m.tok.refresh = tr.refresh
	}
	m.tok.expiresAt = tr.expiresAt
	if setRequested {
		m.tok.requested = requested
	}
	if tr.scope != "" {
		m.tok.scope = tr.scope
	} else if setRequested {
		m.tok.scope = joinScopes(requested)
	}
	m.tok.issuer = issuer
}
