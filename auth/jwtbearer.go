package auth

import (
	"context"
	"fmt"
	"net/url"

	"golang.org/x/oauth2"
)

// jwtBearer runs the RFC 7523 §2.1 jwt-bearer grant: the configured
// assertion (workload identity federation, SEP-1933) or the ID-JAG a token
// exchange at the enterprise IdP issued (SEP-990). A refused grant is not
// retried with another grant: the server's answer is the outcome.
func (m *Manager) jwtBearer(ctx context.Context, f *fetcher, d *discovery, reg *registration, scopes []string) (*tokenResult, error) {
	assertion := m.cfg.Assertion
	if m.cfg.TokenExchange != nil {
		var err error
		if assertion, err = m.exchange(ctx, f, d, scopes); err != nil {
			return nil, err
		}
	}
	form := url.Values{
		"grant_type": {GrantJWTBearer},
		"assertion":  {assertion},
		"resource":   {d.resource},
	}
	if len(scopes) > 0 {
		form.Set("scope", joinScopes(scopes))
	}
	return m.tokenRequest(ctx, f, d.as, reg, grantCall(d.as.TokenEndpoint, form), []string{assertion})
}

// exchange is the RFC 8693 token exchange at the enterprise IdP: the
// subject token for an ID-JAG whose audience is the authorization server
// and whose resource is the MCP server. The ID-JAG is used once and never
// stored or shown.
func (m *Manager) exchange(ctx context.Context, f *fetcher, d *discovery, scopes []string) (string, error) {
	te := m.cfg.TokenExchange
	subjectType := orDefault(te.SubjectTokenType, TokenTypeIDToken)
	requested := orDefault(te.RequestedTokenType, TokenTypeIDJAG)
	form := url.Values{
		"grant_type":           {GrantTokenExchange},
		"subject_token":        {te.SubjectToken},
		"subject_token_type":   {subjectType},
		"requested_token_type": {requested},
		"audience":             {orDefault(te.Audience, d.as.Issuer)},
		"resource":             {orDefault(te.Resource, d.resource)},
	}
	if len(te.Scopes) > 0 {
		form.Set("scope", joinScopes(te.Scopes))
	} else if len(scopes) > 0 {
		form.Set("scope", joinScopes(scopes))
	}
	method := te.TokenAuthMethod
	if method == "" {
		method = MethodNone
		if te.ClientSecret != "" {
			method = MethodClientSecretBasic
		}
	}
	secrets := []string{te.SubjectToken, te.ClientSecret}
	fail := func(msg string) error {
		e := m.authError(d, "the token exchange at the identity provider "+safeURL(te.TokenEndpoint)+" failed: "+msg)
		e.Metadata["token_exchange_endpoint"] = safeURL(te.TokenEndpoint)
		return e
	}
	tok, err := f.token(ctx, te.TokenEndpoint, nil, func(ctx context.Context) (*oauth2.Token, error) {
		return grantCall(te.TokenEndpoint, form)(ctx, secretAuth(method, te.ClientID, te.ClientSecret))
	}, secrets)
	if err != nil {
		return "", fail(err.Error())
	}
	issued, _ := tok.Extra("issued_token_type").(string)
	secrets = append(secrets, tok.AccessToken)
	// RFC 8693 §2.2.1: issued_token_type is required; a different type
	// than requested is not what the authorization server expects.
	if issued != "" && issued != requested {
		return "", fail(fmt.Sprintf("it issued %q, not the requested %s", sanitize(issued, 80, secrets), requested))
	}
	if issued == "" {
		m.logf("info", "the identity provider's token exchange answer has no issued_token_type; assuming %s", requested)
	}
	m.logf("info", "exchanged the subject token for an authorization grant at %s", safeURL(te.TokenEndpoint))
	return tok.AccessToken, nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
