package auth

import (
	"context"
	"strings"
	"time"

	"github.com/lemonmcp/lemonmcp/auth/tokenstore"
)

// ensureLoaded reads the stored grant once, before the first request, so
// a persisted access token goes on that very request.
func (m *Manager) ensureLoaded(ctx context.Context) {
	if m.shared() {
		m.loadOnce.Do(func() { m.loadShared(ctx) })
	}
}

// adopt installs a stored record. Its issuer binds it: discovery drops it
// when the server now names another authorization server. key is the DPoP
// key a DPoP-bound token is bound to, as this process holds it (nil when
// it does not).
func (m *Manager) adopt(rec *tokenstore.Record, key *dpopKey) {
	m.mu.Lock()
	defer m.mu.Unlock()
	dpop := strings.EqualFold(rec.TokenType, "dpop")
	switch {
	case rec.AccessToken == "":
	case dpop && key == nil:
		// Bound to a key this client does not hold: unusable, a refresh
		// or the flow replaces it.
	default:
		m.tok.access = rec.AccessToken
		m.tok.key = nil
		if dpop {
			m.tok.key = key
		}
		m.gen++
	}
	if rec.RefreshToken != "" {
		m.tok.refresh = rec.RefreshToken
	}
	if rec.ExpiresAt > 0 {
		m.tok.expiresAt = time.UnixMilli(rec.ExpiresAt)
	}
	m.tok.scope = rec.Scope
	m.tok.requested = splitScope(rec.Scope)
	m.tok.issuer = rec.Issuer
	if rec.ClientID != "" && rec.Issuer != "" {
		m.regs[rec.Issuer] = &registration{clientID: rec.ClientID, secret: rec.ClientSecret, fromDCR: true}
	}
}

func tokenTypeName(dpop bool) string {
	if dpop {
		return "DPoP"
	}
	return "Bearer"
}
