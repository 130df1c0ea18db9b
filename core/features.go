package core

// Features is what lmcp_features reports about this build. It lives here,
// next to the lists it is made of, so that the C layer only marshals it.
type Features struct {
	Version            string   `json:"version"`
	ABIVersion         int      `json:"abi_version"`
	Transports         []string `json:"transports"`
	ProtocolVersions   []string `json:"protocol_versions"`
	ProtocolModes      []string `json:"protocol_modes"`
	ClientCapabilities []string `json:"client_capabilities"`
	AuthFlows          []string `json:"auth_flows"`
	AuthTokenBinding   []string `json:"auth_token_binding"`
	ResourceVerify     []string `json:"resource_verify"`
	ResultFormats      []string `json:"result_formats"`
	// Legacy lists the optional 2025-11-25 features this build implements
	// (LegacyFeatures).
	Legacy []string `json:"legacy"`
	// Modern lists the 2026-07-28 features this build implements
	// (ModernFeatures).
	Modern []string `json:"modern"`
	// Sandbox is what a confined stdio server can get on this machine
	// (the sandbox helper's probe: a sandbox.Report), absent without the
	// helper. What a server got is its own report (lmcp_host_servers).
	Sandbox any `json:"sandbox,omitempty"`
}

// BuildFeatures describes this build. version and abiVersion come from the
// C header, transports from the configuration parser (which owns the list
// of transport types this build accepts).
func BuildFeatures(version string, abiVersion int, transports []string) Features {
	return Features{
		Version:            version,
		ABIVersion:         abiVersion,
		Transports:         transports,
		ProtocolVersions:   append(append([]string(nil), ModernVersions...), LegacyVersions...),
		ProtocolModes:      []string{ModeLegacy, ModeAuto, ModeModern},
		ClientCapabilities: []string{"roots", "sampling", "elicitation"},
		AuthFlows:          []string{"refresh_token", "client_credentials", "authorization_code", "jwt_bearer", "token_exchange"},
		AuthTokenBinding:   []string{"dpop"},
		ResourceVerify:     []string{"size", "sha256", "frontmatter"},
		ResultFormats:      []string{"json"},
		Legacy:             LegacyFeatures,
		Modern:             ModernFeatures,
	}
}
