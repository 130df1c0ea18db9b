package auth

import (
	"context"
	"errors"
	"net/http"
	"net/url"
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

	if g.mode != modeStepUp && refresh != "" {
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
	var tr *tokenResult
	if flow == FlowAuthorizationCode {
		tr, err = m.authorizationCode(ctx, f, d, reg, scopes)
	} else {
		tr, err = m.clientCredentials(ctx, f, d, reg, scopes)
	}
	if err != nil {
		var ae *Error
		if errors.As(err, &ae) {
			return ae
		}
		return m.authError(d, "the token request failed: "+err.Error())
	}
	m.install(tr, as.Issuer, scopes, true)
	m.save(ctx, d)
	return nil
}

// pickFlow resolves FlowAuto and checks a fixed flow can run.
func (m *Manager) pickFlow(d *discovery) (Flow, error) {
	switch m.cfg.Flow {
	case FlowClientCredentials:
		return FlowClientCredentials, nil
	case FlowAuthorizationCode:
		if !m.canAuthorize() {
			return "", m.authError(d, "the authorization code flow is configured but the host cannot authorize (Host.CanAuthorize is false)")
		}
		return FlowAuthorizationCode, nil
	}
	if m.canAuthorize() {
		if m.cfg.RedirectURI == "" {
			return "", m.authError(d, "the host can authorize but auth.redirect_uri is not configured")
		}
		return FlowAuthorizationCode, nil
	}
	if m.cfg.ClientSecret != "" || m.signer != nil {
		return FlowClientCredentials, nil
	}
	return "", m.authError(d, "the server requires OAuth authorization; let the host authorize users (authorization code flow with auth.redirect_uri), or configure auth.client_id with auth.client_secret or auth.private_key for client credentials, or supply a token in the Authorization header")
}

// refresh runs the refresh_token grant. A rotated refresh token replaces
// the old; an absent one keeps it. An OAuth error answer means the refresh
// token is dead: it is dropped so the next 401 goes straight to the flow.
func (m *Manager) refresh(ctx context.Context, f *fetcher, d *discovery, rt string) error {
	reg := m.knownClient(d)
	if reg == nil {
		return errors.New("no client identity is known for the refresh")
	}
	form := url.Values{
		"grant_type":    {"refresh_token"},
		"refresh_token": {rt},
		"resource":      {d.resource},
	}
	tr, err := m.tokenRequest(ctx, f, d.as, reg, form)
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
	m.save(ctx, d)
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
	form := url.Values{"grant_type": {"client_credentials"}, "resource": {d.resource}}
	if len(scopes) > 0 {
		form.Set("scope", joinScopes(scopes))
	}
	return m.tokenRequest(ctx, f, d.as, reg, form)
}

// install makes tr the current token.
func (m *Manager) install(tr *tokenResult, issuer string, requested []string, setRequested bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.tok.access = tr.access
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
