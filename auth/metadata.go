package auth

// Public authorization server metadata fields copied into Error.Metadata:
// an allowlist, so nothing a server slips into its document (or a future
// field holding a secret) reaches the host unvetted.
var publicASFields = []string{
	"response_types_supported", "grant_types_supported",
	"code_challenge_methods_supported", "token_endpoint_auth_methods_supported",
	"token_endpoint_auth_signing_alg_values_supported",
	"client_id_metadata_document_supported",
	"authorization_response_iss_parameter_supported",
	"revocation_endpoint", "introspection_endpoint", "jwks_uri",
	"service_documentation", "response_modes_supported",
	"dpop_signing_alg_values_supported",
}

// metadataOf is the host-facing summary of a discovery run (the contract of
// Error.Metadata). It holds URLs and public
// metadata only; URLs lose their query.
func metadataOf(d *discovery) map[string]any {
	md := map[string]any{}
	if d == nil {
		return md
	}
	md["resource"] = d.resource
	if d.prm != nil {
		md["authorization_servers"] = safeAll(d.prm.AuthorizationServers)
		if len(d.prm.ScopesSupported) > 0 {
			md["scopes_supported"] = d.prm.ScopesSupported
		}
	}
	if d.prmURL != "" {
		md["resource_metadata_url"] = safeURL(d.prmURL)
	}
	if d.legacy {
		md["discovery"] = "2025-03-26"
	}
	if ch := d.challenge; ch != nil {
		if ch.raw != "" {
			md["www_authenticate"] = ch.raw
		}
		if len(ch.scope) > 0 {
			md["scope"] = joinScopes(ch.scope)
		}
		if ch.err != "" {
			md["error"] = ch.err
		}
		if ch.errorDescription != "" {
			md["error_description"] = ch.errorDescription
		}
	}
	var list []any
	for _, as := range d.tried {
		e := map[string]any{"issuer": as.Issuer}
		if as.metadataURL != "" {
			e["metadata_url"] = safeURL(as.metadataURL)
		}
		for k, v := range map[string]string{
			"authorization_endpoint": as.AuthorizationEndpoint,
			"token_endpoint":         as.TokenEndpoint,
			"registration_endpoint":  as.RegistrationEndpoint,
		} {
			if v != "" {
				e[k] = safeURL(v)
			}
		}
		if len(as.ScopesSupported) > 0 {
			e["scopes_supported"] = as.ScopesSupported
		}
		for _, k := range publicASFields {
			if v, ok := as.public[k]; ok {
				e[k] = v
			}
		}
		list = append(list, e)
	}
	if list != nil {
		md["authorization_server_metadata"] = list
	}
	return md
}

// authError is an *Error whose metadata is what d learned.
func (m *Manager) authError(d *discovery, msg string) *Error {
	return &Error{Message: "authorization required: " + msg, Metadata: metadataOf(d)}
}
