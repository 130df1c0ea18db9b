package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/auth/tokenstore"
	"github.com/lemonmcp/lemonmcp/internal/jsonx"
)

// dpopAS is env's authorization and resource server binding tokens to
// DPoP keys (RFC 9449): a refresh token redeemed with a proof is replaced
// by one bound to the proof's key (cnf.jkt), and a bound refresh token
// presented with another key's proof is refused; an access token is
// accepted only as "DPoP" with a proof by the key it is bound to. Its
// fields are read and written under env's lock.
type dpopAS struct {
	e          *env
	boundRT    map[string]string // live refresh token → jkt ("" unbound)
	boundAT    map[string]string // live access token → jkt
	seq        int
	otherKey   int // token or resource requests with a proof by another key
	redeemed   int
	lastMCPJKT string // the key of the last accepted resource request's proof
}

func newDPoPAS(e *env, initial string) *dpopAS {
	s := &dpopAS{e: e, boundRT: map[string]string{initial: ""}, boundAT: map[string]string{}}
	e.set(func(e *env) {
		e.tokenFn = s.token
		e.rsFn = s.resource
	})
	return s
}

func (s *dpopAS) token(form url.Values, h http.Header) (int, map[string]any) {
	_, jkt, err := checkDPoPProof(h.Get("DPoP"), "")
	if err != nil {
		return 400, map[string]any{"error": "invalid_dpop_proof"}
	}
	rt := form.Get("refresh_token")
	bound, live := s.boundRT[rt]
	switch {
	case form.Get("grant_type") != "refresh_token":
		return 400, map[string]any{"error": "unsupported_grant_type"}
	case !live:
		return 400, map[string]any{"error": "invalid_grant"}
	case bound != "" && bound != jkt:
		s.otherKey++
		return 400, map[string]any{"error": "invalid_grant", "error_description": "the refresh token is bound to another key"}
	}
	delete(s.boundRT, rt)
	s.redeemed++
	s.seq++
	at, next := fmt.Sprintf("dpop-at-%d", s.seq), fmt.Sprintf("dpop-rt-%d", s.seq)
	s.boundAT[at], s.boundRT[next] = jkt, jkt
	return 200, map[string]any{"access_token": at, "token_type": "DPoP", "refresh_token": next, "expires_in": 3600}
}

func (s *dpopAS) resource(r *http.Request, _ []string, _ bool) (int, string) {
	scheme, tok, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	jkt, live := s.boundAT[tok]
	if scheme != "DPoP" || !live {
		return 401, ""
	}
	claims, proofJKT, err := checkDPoPProof(r.Header.Get("DPoP"), tok)
	if err != nil || claims["htm"] != r.Method {
		return 401, `DPoP error="invalid_dpop_proof"`
	}
	if proofJKT != jkt {
		s.otherKey++
		return 401, `DPoP error="invalid_token"`
	}
	s.lastMCPJKT = proofJKT
	return 200, ""
}

// expireAccess ends every access token (the refresh tokens stay).
func (s *dpopAS) expireAccess() { s.e.set(func(*env) { s.boundAT = map[string]string{} }) }

func (s *dpopAS) counts() (redeemed, otherKey int, lastJKT string) {
	defer s.e.lock()()
	return s.redeemed, s.otherKey, s.lastMCPJKT
}

// checkDPoPProof verifies an ES256 DPoP proof as a server does, without
// testify (it runs on the server's goroutine): typ, a public JWK without
// private part, the signature, and ath when tok is set. It answers the
// claims and the key's RFC 7638 thumbprint, computed here independently.
func checkDPoPProof(proof, tok string) (map[string]any, string, error) {
	parts := strings.Split(proof, ".")
	if len(parts) != 3 {
		return nil, "", errors.New("not a JWS")
	}
	var hdr struct {
		Typ string            `json:"typ"`
		Alg string            `json:"alg"`
		JWK map[string]string `json:"jwk"`
	}
	hb, err := base64.RawURLEncoding.DecodeString(parts[0])
	if err != nil || jsonx.Unmarshal(hb, &hdr) != nil {
		return nil, "", errors.New("bad header")
	}
	if hdr.Typ != "dpop+jwt" || hdr.Alg != "ES256" || hdr.JWK["kty"] != "EC" || hdr.JWK["crv"] != "P-256" || hdr.JWK["d"] != "" {
		return nil, "", errors.New("not an ES256 proof with a public key")
	}
	x, errX := base64.RawURLEncoding.DecodeString(hdr.JWK["x"])
	y, errY := base64.RawURLEncoding.DecodeString(hdr.JWK["y"])
	sig, errS := base64.RawURLEncoding.DecodeString(parts[2])
	if errX != nil || errY != nil || errS != nil || len(sig) != 64 {
		return nil, "", errors.New("bad key or signature encoding")
	}
	pub := &ecdsa.PublicKey{Curve: elliptic.P256(), X: new(big.Int).SetBytes(x), Y: new(big.Int).SetBytes(y)}
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if !ecdsa.Verify(pub, digest[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
		return nil, "", errors.New("bad signature")
	}
	var claims map[string]any
	cb, _ := base64.RawURLEncoding.DecodeString(parts[1])
	if jsonx.Unmarshal(cb, &claims) != nil {
		return nil, "", errors.New("bad claims")
	}
	if tok != "" && claims["ath"] != ath(tok) {
		return nil, "", errors.New("ath does not match")
	}
	canon := fmt.Sprintf(`{"crv":"P-256","kty":"EC","x":%q,"y":%q}`, hdr.JWK["x"], hdr.JWK["y"])
	sum := sha256.Sum256([]byte(canon))
	return claims, base64.RawURLEncoding.EncodeToString(sum[:]), nil
}

// TestSharedDPoPEphemeralKey: managers without a configured DPoP key (as
// processes with auth.dpop: true) share one DPoP-bound grant. The first
// obtains it bound to the key it generated and stores the key with it;
// the second adopts grant and key with no token request, and its proofs
// verify against the grant's cnf.jkt. After an expiry the second refreshes
// with the adopted key (the server refuses a bound refresh token under
// another key) and the first adopts that without a network call.
func TestSharedDPoPEphemeralKey(t *testing.T) {
	for name, open := range sharedStores(t) {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			as := newDPoPAS(e, "rt-0")
			store := open()
			key := fmt.Sprintf("%s %d", t.Name(), time.Now().UnixNano())
			hosts := []*fakeHost{{}, {}}
			var clients []*http.Client
			var managers []*Manager
			for _, h := range hosts {
				m, c := e.client(t, Config{ClientID: "c", RefreshToken: "rt-0", TokenStore: store.Store, TokenStoreKey: key, DPoP: &DPoPConfig{}}, h)
				managers, clients = append(managers, m), append(clients, c)
			}
			firstJKT, secondJKT := managers[0].proofKey().jkt, managers[1].proofKey().jkt
			require.NotEqual(t, firstJKT, secondJKT, "each process generated its own key")

			st, _, err := post(clients[0], e.mcpURL(), `{}`)
			require.NoError(t, err)
			require.Equal(t, 200, st)
			rec, _, err := store.Load(context.Background(), key)
			require.NoError(t, err)
			require.Equal(t, firstJKT, rec.DPoPJKT)
			require.Contains(t, rec.DPoPKey, "-----BEGIN PRIVATE KEY-----", "the generated key is stored with the grant")
			require.NotContains(t, rec.String(), rec.DPoPKey[40:80], "a record prints without its key")

			st, _, err = post(clients[1], e.mcpURL(), `{}`)
			require.NoError(t, err)
			require.Equal(t, 200, st)
			redeemed, otherKey, lastJKT := as.counts()
			require.Equal(t, 1, redeemed, "the second manager adopted grant and key without a token request")
			require.Zero(t, otherKey)
			require.Equal(t, firstJKT, lastJKT, "its proof verified against the grant's cnf.jkt")
			require.Equal(t, firstJKT, managers[1].proofKey().jkt, "it signs with the adopted key")
			_, proofJKT := verifyProof(t, e.seen().mcpReqs[len(e.seen().mcpReqs)-1].header.Get("DPoP"))
			require.Equal(t, firstJKT, proofJKT)

			// The grant expires: the second manager refreshes with the
			// adopted key, the first adopts the result.
			as.expireAccess()
			st, _, err = post(clients[1], e.mcpURL(), `{}`)
			require.NoError(t, err)
			require.Equal(t, 200, st)
			st, _, err = post(clients[0], e.mcpURL(), `{}`)
			require.NoError(t, err)
			require.Equal(t, 200, st)
			redeemed, otherKey, _ = as.counts()
			require.Equal(t, 2, redeemed, "one redemption per expiry")
			require.Zero(t, otherKey, "no proof by another key")
			rec, _, err = store.Load(context.Background(), key)
			require.NoError(t, err)
			require.Equal(t, uint64(3), rec.Generation)
			require.Equal(t, firstJKT, rec.DPoPJKT)
			require.Equal(t, tokenstore.StateOK, rec.State)

			for _, h := range hosts {
				for _, line := range h.snapshot().logs {
					require.NotContains(t, line, "PRIVATE KEY", "the key is never logged")
					require.NotContains(t, line, rec.DPoPKey[40:80])
				}
			}
		})
	}
}

// TestSharedDPoPConfiguredKeys: a configured key (auth.dpop.key_pem) is
// never written to the store, never replaced by a stored one, and a
// process holding another key (configured or generated) neither sends the
// grant's tokens nor presents its refresh token: its request fails with
// an authorization error naming the cause, and the grant stays usable for
// the processes holding its key.
func TestSharedDPoPConfiguredKeys(t *testing.T) {
	configured, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	for _, tc := range []struct {
		name       string
		first      *DPoPConfig
		second     *DPoPConfig
		storesKey  bool
		secondFail bool
	}{
		{"configured key, then another configured key", &DPoPConfig{KeyPEM: pemOf(t, configured)}, &DPoPConfig{KeyPEM: pemOf(t, other)}, false, true},
		{"configured key, then a generated key", &DPoPConfig{KeyPEM: pemOf(t, configured)}, &DPoPConfig{}, false, true},
		{"generated key, then a configured key", &DPoPConfig{}, &DPoPConfig{KeyPEM: pemOf(t, other)}, true, true},
		{"configured key, then the same key", &DPoPConfig{KeyPEM: pemOf(t, configured)}, &DPoPConfig{KeyPEM: pemOf(t, configured)}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			as := newDPoPAS(e, "rt-0")
			store := memGrants()
			m1, c1 := e.client(t, Config{ClientID: "c", RefreshToken: "rt-0", TokenStore: store.Store, DPoP: tc.first}, &fakeHost{})
			st, _, err := post(c1, e.mcpURL(), `{}`)
			require.NoError(t, err)
			require.Equal(t, 200, st)
			rec, _, err := store.Load(context.Background(), defaultStoreKey(e.mcpURL(), "c"))
			require.NoError(t, err)
			require.Equal(t, m1.proofKey().jkt, rec.DPoPJKT)
			require.Equal(t, tc.storesKey, rec.DPoPKey != "", "only a generated key is stored")

			m2, c2 := e.client(t, Config{ClientID: "c", RefreshToken: "rt-0", TokenStore: store.Store, DPoP: tc.second}, &fakeHost{})
			before := m2.proofKey().jkt
			_, _, err = post(c2, e.mcpURL(), `{}`)
			redeemed, otherKey, _ := as.counts()
			require.Equal(t, 1, redeemed, "no refresh")
			require.Zero(t, otherKey, "the grant was never presented with another key")
			if !tc.secondFail {
				require.NoError(t, err)
				return
			}
			msg := authErr(t, err).Message
			require.Contains(t, msg, "bound to a DPoP key this process does not hold")
			require.NotContains(t, msg, "PRIVATE KEY")
			require.Equal(t, before, m2.proofKey().jkt, "a configured key is never replaced")
			rec, _, err = store.Load(context.Background(), defaultStoreKey(e.mcpURL(), "c"))
			require.NoError(t, err)
			require.Equal(t, tokenstore.StateOK, rec.State, "the grant stays usable for its key")

			st, _, err = post(c1, e.mcpURL(), `{}`)
			require.NoError(t, err)
			require.Equal(t, 200, st)
		})
	}
}

// TestSharedDPoPBadStoredKey: a stored key that does not parse or does
// not match the thumbprint is not adopted, and no error quotes it.
func TestSharedDPoPBadStoredKey(t *testing.T) {
	good, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	mismatched := pemOf(t, good)
	for name, stored := range map[string]string{"not a key": "-----BEGIN PRIVATE KEY-----\nc2VjcmV0LWtleS1ieXRlcw==\n-----END PRIVATE KEY-----\n", "another key": mismatched} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			as := newDPoPAS(e, "rt-0")
			store := memGrants()
			h := &fakeHost{}
			m, c := e.client(t, Config{ClientID: "c", TokenStore: store.Store, DPoP: &DPoPConfig{}}, h)
			_, _, err := store.CompareAndSave(context.Background(), defaultStoreKey(e.mcpURL(), "c"), 0, &tokenstore.Record{
				AccessToken: "dpop-at-x", TokenType: "DPoP", RefreshToken: "rt-0", Generation: 1, State: tokenstore.StateOK,
				DPoPJKT: "not-the-thumbprint", DPoPKey: stored})
			require.NoError(t, err)
			before := m.proofKey().jkt
			_, _, err = post(c, e.mcpURL(), `{}`)
			require.Error(t, err)
			require.NotContains(t, err.Error(), "c2VjcmV0")
			require.NotContains(t, err.Error(), "PRIVATE KEY")
			require.Equal(t, before, m.proofKey().jkt)
			redeemed, _, _ := as.counts()
			require.Zero(t, redeemed)
			for _, line := range h.snapshot().logs {
				require.NotContains(t, line, "c2VjcmV0")
				require.NotContains(t, line, "PRIVATE KEY")
			}
		})
	}
}
