package auth

import "crypto/rand"

// randomString is n random bytes, base64url without padding: the
// authorization request's state and the jti of DPoP proofs and client
// assertions. (The PKCE verifier comes from x/oauth2.)
func randomString(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return b64.EncodeToString(b)
}
