package auth

import (
	"crypto/sha256"
	"encoding/hex"
)

// TokenDigest identifies the current access token without revealing it
// (a truncated SHA-256, "" when there is none): a cache keyed by it is
// never shared across tokens.
func (m *Manager) TokenDigest() string {
	m.mu.Lock()
	access := m.tok.access
	m.mu.Unlock()
	if access == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(access))
	return hex.EncodeToString(sum[:12])
}
