package auth

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"golang.org/x/oauth2"
)

// authorizationCode runs the authorization code grant with PKCE (S256):
// the host shows the authorization URL and reports the redirect; the reply
// is checked (state, then RFC 9207 iss) before the code is exchanged.
func (m *Manager) authorizationCode(ctx context.Context, f *fetcher, d *discovery, reg *registration, scopes []string) (*tokenResult, error) {
	as := d.as
	// PKCE gate (2025-11-25): refuse a server that does not say it does
	// S256. The 2025-03-26 defaults have no document to say it; that
	// revision requires PKCE of every server.
	if !as.pkceUnverifiable && !contains(as.CodeChallengeMethodsSupported, "S256") {
		return nil, m.authError(d, "the authorization server "+safeURL(as.Issuer)+" does not advertise PKCE S256 (code_challenge_methods_supported); refusing the authorization code flow")
	}
	if m.cfg.RedirectURI == "" {
		return nil, m.authError(d, "the authorization code flow needs auth.redirect_uri")
	}
	au, err := checkAuthURL(as.AuthorizationEndpoint, m.cfg.AllowInsecureHTTP)
	if as.AuthorizationEndpoint == "" || err == nil && au.Fragment != "" {
		err = fmt.Errorf("is missing or invalid")
	}
	if err != nil {
		return nil, m.authError(d, "the authorization_endpoint "+safeURL(as.AuthorizationEndpoint)+" "+err.Error())
	}
	verifier := oauth2.GenerateVerifier()
	req := &AuthorizationRequest{
		AuthorizationEndpoint: safeURL(as.AuthorizationEndpoint),
		Issuer:                as.Issuer, // recorded with verifier and state (RFC 9207)
		ClientID:              reg.clientID,
		RedirectURI:           m.cfg.RedirectURI,
		Scope:                 joinScopes(scopes),
		Resource:              d.resource,
		State:                 randomString(32),
		CodeChallenge:         oauth2.S256ChallengeFromVerifier(verifier),
		CodeChallengeMethod:   "S256",
		CodeVerifier:          verifier,
	}
	resource := oauth2.SetAuthURLParam("resource", req.Resource) // RFC 8707, always
	cfg := oauth2.Config{
		ClientID:    req.ClientID,
		RedirectURL: req.RedirectURI,
		Endpoint:    oauth2.Endpoint{AuthURL: au.String(), TokenURL: as.TokenEndpoint},
	}
	if req.Scope != "" {
		cfg.Scopes = []string{req.Scope}
	}
	req.AuthorizationURL = cfg.AuthCodeURL(req.State, oauth2.S256ChallengeOption(verifier), resource)

	h := m.hostOrNil()
	actx, cancel := context.WithTimeout(ctx, m.authTimeout)
	reply, err := h.Authorize(actx, req)
	cancel()
	if err != nil {
		return nil, m.authError(d, "the host did not complete authorization: "+sanitize(err.Error(), 200, []string{verifier, req.State}))
	}
	if reply == nil {
		return nil, m.authError(d, "the host returned no authorization reply")
	}
	code, err := m.checkReply(d, req, reply)
	if err != nil {
		return nil, err
	}
	exchange := func(ctx context.Context, a clientAuth) (*oauth2.Token, error) {
		c := cfg
		c.ClientID, c.ClientSecret, c.Endpoint.AuthStyle = a.id, a.secret, a.style
		opts := []oauth2.AuthCodeOption{oauth2.VerifierOption(verifier), resource}
		for k := range a.params {
			opts = append(opts, oauth2.SetAuthURLParam(k, a.params.Get(k)))
		}
		return c.Exchange(ctx, code, opts...)
	}
	return m.tokenRequest(ctx, f, as, reg, exchange, []string{code, verifier})
}

// replyParams are the authorization response parameters of either reply
// form.
type replyParams struct {
	code, state, iss, err, desc string
	hasIss                      bool
}

func parseReply(r *AuthorizationReply) (*replyParams, error) {
	if r.RedirectURL == "" {
		return &replyParams{code: r.Code, state: r.State, iss: r.Iss, hasIss: r.Iss != "", err: r.Error, desc: r.ErrorDescription}, nil
	}
	u, err := url.Parse(r.RedirectURL)
	if err != nil {
		return nil, fmt.Errorf("the redirect URL is not a URL")
	}
	q := u.Query()
	for _, k := range []string{"code", "state", "iss"} {
		if len(q[k]) > 1 {
			return nil, fmt.Errorf("the authorization response repeats %q", k)
		}
	}
	_, hasIss := q["iss"]
	return &replyParams{code: q.Get("code"), state: q.Get("state"), iss: q.Get("iss"), hasIss: hasIss && q.Get("iss") != "",
		err: q.Get("error"), desc: q.Get("error_description")}, nil
}

// checkReply validates an authorization response and returns its code.
// The order matters: state first (a response for another request is
// discarded unread), then iss per RFC 9207 (a response from another issuer
// is not acted on — its error and error_description are not shown), then
// the error, then the code.
func (m *Manager) checkReply(d *discovery, req *AuthorizationRequest, reply *AuthorizationReply) (string, error) {
	p, err := parseReply(reply)
	if err != nil {
		return "", m.authError(d, err.Error())
	}
	if p.state == "" || p.state != req.State {
		return "", m.authError(d, "the authorization response's state is missing or does not match; discarded")
	}
	as := d.as
	advertised := as.AuthorizationResponseIssSupported != nil && *as.AuthorizationResponseIssSupported
	switch {
	case p.hasIss && p.iss != req.Issuer:
		// Simple string comparison, no normalization.
		return "", m.authError(d, "the authorization response's iss does not match the authorization server's issuer "+safeURL(req.Issuer)+"; discarded")
	case !p.hasIss && advertised:
		return "", m.authError(d, "the authorization server advertises authorization_response_iss_parameter_supported but its response has no iss; discarded")
	}
	if p.err != "" {
		msg := "the authorization server refused: " + sanitize(p.err, 64, nil)
		if p.desc != "" {
			msg += ": " + sanitize(p.desc, 200, []string{p.code})
		}
		e := m.authError(d, msg)
		e.Metadata["authorization_error"] = sanitize(p.err, 64, nil)
		return "", e
	}
	if strings.TrimSpace(p.code) == "" {
		return "", m.authError(d, "the authorization response has no code")
	}
	return p.code, nil
}
