package auth

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	"github.com/lemonmcp/lemonmcp/internal/jsonx"
)

// clientFor resolves the client identity at the authorization server d.as,
// in the 2025-11-25 order: pre-registered, a Client ID Metadata Document
// URL, dynamic registration. A registration is bound to the issuer that
// made it (SEP-2352): another authorization server means registering
// again, never presenting the old client_id.
func (m *Manager) clientFor(ctx context.Context, f *fetcher, d *discovery, flow Flow, scopes []string) (*registration, error) {
	as := d.as
	if m.cfg.ClientID != "" {
		if m.cfg.ClientIssuer != "" && m.cfg.ClientIssuer != as.Issuer {
			return nil, m.authError(d, fmt.Sprintf("the configured auth.client_id was registered with %s but the server now uses %s; configure credentials for the new authorization server", safeURL(m.cfg.ClientIssuer), safeURL(as.Issuer)))
		}
		return &registration{clientID: m.cfg.ClientID, secret: m.cfg.ClientSecret}, nil
	}
	m.mu.Lock()
	reg := m.regs[as.Issuer]
	m.mu.Unlock()
	if reg != nil {
		return reg, nil
	}
	if flow == FlowJWTBearer {
		// RFC 7523 §3.1: client authentication is optional with the
		// jwt-bearer grant; the assertion identifies the workload.
		return &registration{method: MethodNone}, nil
	}
	if m.cfg.ClientMetadataURL != "" && as.ClientIDMetadataDocumentSupported && (flow == FlowAuthorizationCode || m.signer != nil) {
		reg := &registration{clientID: m.cfg.ClientMetadataURL, cimd: true, method: MethodNone}
		if m.signer != nil {
			reg.method = MethodPrivateKeyJWT
		}
		return reg, nil
	}
	if as.RegistrationEndpoint != "" {
		reg, err := m.register(ctx, f, d, flow, scopes)
		if err != nil {
			return nil, err
		}
		m.mu.Lock()
		m.regs[as.Issuer] = reg
		m.mu.Unlock()
		return reg, nil
	}
	return nil, m.authError(d, "the authorization server "+safeURL(as.Issuer)+" supports neither Client ID Metadata Documents nor dynamic client registration; configure auth.client_id (and auth.client_secret) registered with it")
}

// register is RFC 7591 dynamic client registration.
func (m *Manager) register(ctx context.Context, f *fetcher, d *discovery, flow Flow, scopes []string) (*registration, error) {
	as := d.as
	name := m.cfg.ClientName
	if name == "" {
		name = "LemonMCP"
	}
	// The method asked for is the one the selection rule would pick for a
	// client that receives a secret; the answer's method wins later.
	reqMethod := m.authMethod(as, &registration{secret: "x"})
	body := map[string]any{
		"client_name":                name,
		"token_endpoint_auth_method": reqMethod,
	}
	if flow == FlowAuthorizationCode {
		body["redirect_uris"] = []string{m.cfg.RedirectURI}
		body["grant_types"] = []string{"authorization_code", "refresh_token"}
		body["response_types"] = []string{"code"}
	} else {
		body["grant_types"] = []string{"client_credentials"}
	}
	// SEP-837: native for loopback redirect URIs (desktop, CLI), web for
	// a remote redirect.
	body["application_type"] = "web"
	if ru, err := url.Parse(m.cfg.RedirectURI); err == nil && m.cfg.RedirectURI != "" && isLoopbackHost(ru.Hostname()) {
		body["application_type"] = "native"
	}
	if len(scopes) > 0 {
		body["scope"] = joinScopes(scopes)
	}
	data, _ := jsonx.Marshal(body)
	r, err := f.do(ctx, http.MethodPost, as.RegistrationEndpoint, "application/json", data)
	if err != nil {
		return nil, m.authError(d, "dynamic client registration failed: "+err.Error())
	}
	if r.status != http.StatusOK && r.status != http.StatusCreated {
		return nil, m.authError(d, "dynamic client registration was refused: "+parseOAuthError(r, nil).Error())
	}
	var resp struct {
		ClientID                string `json:"client_id"`
		ClientSecret            string `json:"client_secret"`
		TokenEndpointAuthMethod string `json:"token_endpoint_auth_method"`
	}
	if err := jsonx.Unmarshal(r.body, &resp); err != nil || resp.ClientID == "" {
		return nil, m.authError(d, "dynamic client registration answered without a client_id")
	}
	m.logf("info", "registered a client with %s", safeURL(as.Issuer))
	return &registration{clientID: resp.ClientID, secret: resp.ClientSecret, method: resp.TokenEndpointAuthMethod, fromDCR: true}, nil
}
