package auth

import (
	"crypto/rand"
	"crypto/sha256"
)

// randomString is n random bytes, base64url without padding.
func randomString(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return b64.EncodeToString(b)
}

// newVerifier is a PKCE code verifier: 32 random bytes, 43 characters
// (RFC 7636 §4.1).
func newVerifier() string { return randomString(32) }

// s256 is the S256 code challenge of a verifier (RFC 7636 §4.2).
func s256(verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	return b64.EncodeToString(sum[:])
}
