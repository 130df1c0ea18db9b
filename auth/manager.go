package auth

import (
	"net/http"
)

// Manager: see api.go for the contract.
type Manager struct {
	cfg    Config
	mcpURL string
	host   Host
}

// New validates cfg and returns the Manager of the MCP server at mcpURL.
func New(cfg Config, mcpURL string) (*Manager, error) {
	return &Manager{cfg: cfg, mcpURL: mcpURL}, nil
}

// Bind sets the host boundary; call it before the first request.
func (m *Manager) Bind(h Host) { m.host = h }

// Wrap returns a RoundTripper that authorizes requests sent through base.
func (m *Manager) Wrap(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return base
}
