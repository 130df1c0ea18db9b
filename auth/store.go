package auth

import (
	"context"
	"strings"
	"time"
)

// ensureLoaded reads the host's stored record once, before the first
// request, so a persisted access token goes on that very request. Failure
// is logged and the client starts without a token.
func (m *Manager) ensureLoaded(ctx context.Context) {
	if m.shared() {
		m.loadOnce.Do(func() { m.loadShared(ctx) })
		return
	}
	if !m.cfg.AppTokenStore {
		return
	}
	m.loadOnce.Do(func() {
		h := m.hostOrNil()
		if h == nil {
			return
		}
		rec, err := h.LoadToken(ctx, TokenKey{Resource: m.canonical})
		if err != nil {
			m.logf("warning", "loading the stored token failed: %s", err)
			return
		}
		if rec == nil {
			return
		}
		m.adopt(rec, m.hostStoreKey())
	})
}

// hostStoreKey is the DPoP key a token of the single-process host store
// can be bound to: the configured one. A generated key dies with its
// process, and that store's record does not carry it.
func (m *Manager) hostStoreKey() *dpopKey {
	if k := m.proofKey(); k != nil && !k.ephemeral {
		return k
	}
	return nil
}

// adopt installs a stored record. Its issuer binds it: discovery drops it
// when the server now names another authorization server. key is the DPoP
// key a DPoP-bound token is bound to, as this process holds it (nil when
// it does not).
func (m *Manager) adopt(rec *StoredToken, key *dpopKey) {
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

// save hands the host the record of a successful grant. Called without
// the lock held.
func (m *Manager) save(ctx context.Context, d *discovery) {
	if !m.cfg.AppTokenStore {
		return
	}
	h := m.hostOrNil()
	if h == nil {
		return
	}
	m.mu.Lock()
	rec := &StoredToken{
		AccessToken:  m.tok.access,
		TokenType:    tokenTypeName(m.tok.key != nil),
		RefreshToken: m.tok.refresh,
		Scope:        m.tok.scope,
		Issuer:       m.tok.issuer,
		Resource:     m.canonical,
		Metadata:     metadataOf(d),
	}
	if !m.tok.expiresAt.IsZero() {
		rec.ExpiresAt = m.tok.expiresAt.UnixMilli()
	}
	if r := m.regs[m.tok.issuer]; r != nil && r.fromDCR {
		rec.ClientID, rec.ClientSecret = r.clientID, r.secret
	}
	m.mu.Unlock()
	if err := h.SaveToken(ctx, rec); err != nil {
		m.logf("warning", "saving the token failed: %s", err)
	}
}

func tokenTypeName(dpop bool) string {
	if dpop {
		return "DPoP"
	}
	return "Bearer"
}
