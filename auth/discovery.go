package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/lemonmcp/lemonmcp/internal/jsonx"
)

// prmDoc is the part of RFC 9728 Protected Resource Metadata used here.
type prmDoc struct {
	Resource             string   `json:"resource"`
	AuthorizationServers []string `json:"authorization_servers"`
	ScopesSupported      []string `json:"scopes_supported"`
}

// asMeta is RFC 8414 / OpenID Discovery metadata, the fields used here.
type asMeta struct {
	Issuer                            string   `json:"issuer"`
	AuthorizationEndpoint             string   `json:"authorization_endpoint"`
	TokenEndpoint                     string   `json:"token_endpoint"`
	RegistrationEndpoint              string   `json:"registration_endpoint"`
	ScopesSupported                   []string `json:"scopes_supported"`
	CodeChallengeMethodsSupported     []string `json:"code_challenge_methods_supported"`
	TokenEndpointAuthMethodsSupported []string `json:"token_endpoint_auth_methods_supported"`
	GrantTypesSupported               []string `json:"grant_types_supported"`
	ClientIDMetadataDocumentSupported bool     `json:"client_id_metadata_document_supported"`
	AuthorizationResponseIssSupported *bool    `json:"authorization_response_iss_parameter_supported"`
	TokenEndpointAuthSigningAlgs      []string `json:"token_endpoint_auth_signing_alg_values_supported"`
	metadataURL                       string   // where it was read ("" for 2025-03-26 defaults)
	pkceUnverifiable                  bool     // 2025-03-26 defaults: no document to check
	public                            map[string]any
}

// discovery is what one discovery run learned.
type discovery struct {
	canonical string // the canonical MCP URI
	resource  string // the resource parameter: PRM "resource" as published, else canonical
	prmURL    string
	prm       *prmDoc
	as        *asMeta   // the server used; nil when none is usable
	tried     []*asMeta // every document examined, for the host
	legacy    bool      // 2025-03-26 fallback (no PRM)
	challenge *bearerChallenge
	problems  []string
}

// discover runs PRM and AS metadata discovery. A non-nil error is an
// *Error carrying what was learned.
func (m *Manager) discover(ctx context.Context, f *fetcher, ch *bearerChallenge) (*discovery, error) {
	d := &discovery{canonical: m.canonical, resource: m.canonical, challenge: ch}
	if err := m.discoverPRM(ctx, f, d); err != nil {
		return d, err
	}
	if d.prm == nil {
		// 2025-03-26: no PRM anywhere; the MCP origin is the
		// authorization base URL.
		d.legacy = true
		m.discoverLegacy(ctx, f, d)
		if d.as == nil {
			return d, m.authError(d, "the server publishes no protected resource metadata and no usable authorization server metadata at "+origin(m.mcpURL)+problemsSuffix(d))
		}
		return d, nil
	}
	for _, issuer := range d.prm.AuthorizationServers {
		if md := m.discoverAS(ctx, f, d, issuer); md != nil {
			d.as = md
			return d, nil
		}
	}
	return d, m.authError(d, "no usable authorization server metadata was found for "+strings.Join(safeAll(d.prm.AuthorizationServers), ", ")+problemsSuffix(d))
}

func safeAll(in []string) []string {
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = safeURL(s)
	}
	return out
}

func problemsSuffix(d *discovery) string {
	if len(d.problems) == 0 {
		return ""
	}
	return " (" + strings.Join(d.problems, "; ") + ")"
}

// prmCandidates is the RFC 9728 / MCP 2025-11-25 order: the challenge's
// resource_metadata, the path-aware well-known URL, the root one.
func (m *Manager) prmCandidates(ch *bearerChallenge) []string {
	var out []string
	if ch != nil && ch.resourceMetadata != "" {
		out = append(out, ch.resourceMetadata)
	}
	base := origin(m.mcpURL)
	if p := strings.TrimSuffix(m.mcpURL.EscapedPath(), "/"); p != "" {
		out = append(out, base+"/.well-known/oauth-protected-resource"+p)
	}
	return append(out, base+"/.well-known/oauth-protected-resource")
}

func (m *Manager) discoverPRM(ctx context.Context, f *fetcher, d *discovery) error {
	for _, u := range m.prmCandidates(d.challenge) {
		var doc prmDoc
		status, err := f.getJSON(ctx, u, &doc)
		if err != nil {
			d.problems = append(d.problems, err.Error())
			continue
		}
		if status != http.StatusOK {
			continue
		}
		d.prmURL = u
		d.prm = &doc
		if len(doc.AuthorizationServers) == 0 {
			return m.authError(d, "the protected resource metadata at "+safeURL(u)+" lists no authorization_servers")
		}
		if doc.Resource == "" || !resourceCovers(doc.Resource, m.canonical) {
			return m.authError(d, fmt.Sprintf("the protected resource metadata at %s is for resource %q, not for %s", safeURL(u), safeURL(doc.Resource), m.canonical))
		}
		// The resource parameter is sent exactly as published (RFC 8707;
		// a re-serialized URL could differ by a trailing slash).
		d.resource = doc.Resource
		return nil
	}
	return nil
}

// asCandidates is the 2025-11-25 order of metadata URLs for an issuer.
func asCandidates(issuer *url.URL) []string {
	base := origin(issuer)
	p := strings.TrimSuffix(issuer.EscapedPath(), "/")
	if p == "" {
		return []string{base + "/.well-known/oauth-authorization-server", base + "/.well-known/openid-configuration"}
	}
	return []string{
		base + "/.well-known/oauth-authorization-server" + p,
		base + "/.well-known/openid-configuration" + p,
		base + p + "/.well-known/openid-configuration",
	}
}

// discoverAS returns the first metadata document for issuer whose own
// issuer is identical to it (RFC 8414 §3.3), or nil.
func (m *Manager) discoverAS(ctx context.Context, f *fetcher, d *discovery, issuer string) *asMeta {
	iu, err := checkAuthURL(issuer, m.cfg.AllowInsecureHTTP)
	if err != nil {
		d.problems = append(d.problems, "authorization server "+safeURL(issuer)+" "+err.Error())
		return nil
	}
	for _, u := range asCandidates(iu) {
		md, err := m.fetchASMeta(ctx, f, u)
		if err != nil {
			d.problems = append(d.problems, err.Error())
			continue
		}
		if md == nil {
			continue
		}
		d.tried = append(d.tried, md)
		if md.Issuer != issuer {
			d.problems = append(d.problems, fmt.Sprintf("metadata at %s names issuer %q, not %q: not used", safeURL(u), safeURL(md.Issuer), safeURL(issuer)))
			continue
		}
		if err := m.checkASEndpoints(md); err != nil {
			d.problems = append(d.problems, err.Error())
			continue
		}
		return md
	}
	return nil
}

// fetchASMeta reads one metadata document; nil, nil when absent.
func (m *Manager) fetchASMeta(ctx context.Context, f *fetcher, u string) (*asMeta, error) {
	r, err := f.do(ctx, http.MethodGet, u, "", nil)
	if err != nil {
		return nil, err
	}
	if r.status != http.StatusOK {
		return nil, nil
	}
	md := &asMeta{metadataURL: u}
	if err := jsonx.Unmarshal(r.body, md); err != nil {
		return nil, fmt.Errorf("%s: not valid authorization server metadata", safeURL(u))
	}
	_ = jsonx.Unmarshal(r.body, &md.public)
	return md, nil
}

// checkASEndpoints applies the URL policy to the endpoints the library
// will use or hand to the host.
func (m *Manager) checkASEndpoints(md *asMeta) error {
	if md.TokenEndpoint == "" {
		return errors.New("authorization server metadata has no token_endpoint")
	}
	for name, u := range map[string]string{
		"authorization_endpoint": md.AuthorizationEndpoint,
		"token_endpoint":         md.TokenEndpoint,
		"registration_endpoint":  md.RegistrationEndpoint,
	} {
		if u == "" {
			continue
		}
		if _, err := checkAuthURL(u, m.cfg.AllowInsecureHTTP); err != nil {
			return fmt.Errorf("%s %s %s", name, safeURL(u), err)
		}
	}
	return nil
}

// discoverLegacy is the 2025-03-26 algorithm: RFC 8414 at the MCP origin,
// and when that is not there (404), the default endpoints. The defaults
// come with no code_challenge_methods_supported to check: 2025-03-26
// requires PKCE of every server, so S256 is used without the check
// (conformance auth/2025-03-26-oauth-endpoint-fallback).
func (m *Manager) discoverLegacy(ctx context.Context, f *fetcher, d *discovery) {
	base := origin(m.mcpURL)
	u := base + "/.well-known/oauth-authorization-server"
	md, err := m.fetchASMeta(ctx, f, u)
	if err != nil {
		d.problems = append(d.problems, err.Error())
	}
	if md != nil {
		d.tried = append(d.tried, md)
		// The 2025-03-26 revision placed the metadata at the server's root
		// without requiring its issuer to be that root (the TypeScript SDK
		// accepts either), so on this fallback path only a different
		// issuer is accepted, with a warning; everywhere else RFC 8414's
		// exact match holds. The issuer must still be a usable URL.
		issuerErr := error(nil)
		if md.Issuer != base {
			_, issuerErr = checkAuthURL(md.Issuer, m.cfg.AllowInsecureHTTP)
		}
		switch err := m.checkASEndpoints(md); {
		case issuerErr != nil:
			d.problems = append(d.problems, fmt.Sprintf("metadata at %s names issuer %q: %s; not used", safeURL(u), safeURL(md.Issuer), issuerErr.Error()))
		case err != nil:
			d.problems = append(d.problems, err.Error())
		default:
			if md.Issuer != base {
				m.logf("warning", "the authorization server metadata at %s names issuer %s, not the server's base URL %s; accepted because the server follows the 2025-03-26 revision (no protected resource metadata), which did not require them to match",
					safeURL(u), safeURL(md.Issuer), base)
			}
			d.as = md
			return
		}
	}
	if err != nil || md != nil {
		return // present but unusable, or unreachable: not a 404
	}
	d.as = &asMeta{
		Issuer:                base,
		AuthorizationEndpoint: base + "/authorize",
		TokenEndpoint:         base + "/token",
		RegistrationEndpoint:  base + "/register",
		pkceUnverifiable:      true,
	}
	d.tried = append(d.tried, d.as)
}
