package auth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/lemonmcp/lemonmcp/internal/jsonx"
)

// DPoP (RFC 9449, SEP-1932): a key held by the client. Every token request
// carries a proof; a token the authorization server binds to the key
// (token_type DPoP) goes out as "Authorization: DPoP <token>" with a fresh
// proof (ath included) on every request. Servers' nonces (DPoP-Nonce) are
// remembered per origin.
//
// A configured key (auth.dpop.key_pem) is the Manager's for its life. An
// unconfigured one is generated; with a shared token store it travels in
// the record of the grant bound to it (pkcs8), and a process without a
// configured key that adopts that grant adopts its key too (shared.go).
type dpopKey struct {
	s   *signer
	jwk map[string]any // public key, for the proof header
	jkt string         // RFC 7638 thumbprint (tests, logs)
	// ephemeral: not configured (generated here, or adopted from a shared
	// store's record). Only such a key is written to a shared store, and
	// only such a key is replaced by a stored one.
	ephemeral bool
	pkcs8     string // ephemeral keys: the private key as PKCS#8 PEM, for the store; a secret

	mu     sync.Mutex
	nonces map[string]string // by origin
}

// maxNonces bounds the remembered nonces (a handful of origins in
// practice).
const maxNonces = 32

func newDPoP(c *DPoPConfig) (*dpopKey, error) {
	var s *signer
	ephemeral := c.KeyPEM == ""
	if ephemeral {
		alg := c.Alg
		if alg == "" {
			alg = "ES256"
		}
		key, err := generateKey(alg)
		if err != nil {
			return nil, err
		}
		s = &signer{key: key, alg: alg}
	} else {
		var err error
		if s, err = parseSigner(&PrivateKeyJWT{KeyPEM: c.KeyPEM, Alg: c.Alg}); err != nil {
			return nil, err
		}
	}
	return newDPoPKey(s, ephemeral)
}

func newDPoPKey(s *signer, ephemeral bool) (*dpopKey, error) {
	jwk, err := publicJWK(s.key.Public())
	if err != nil {
		return nil, err
	}
	k := &dpopKey{s: s, jwk: jwk, jkt: thumbprint(jwk), ephemeral: ephemeral, nonces: map[string]string{}}
	if ephemeral {
		der, err := x509.MarshalPKCS8PrivateKey(s.key)
		if err != nil {
			return nil, errors.New("the generated DPoP key cannot be encoded")
		}
		k.pkcs8 = string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
	}
	return k, nil
}

// storedDPoP is the key a shared record carries (PKCS#8 PEM), as an
// unconfigured key of this process. alg is the configured proof
// algorithm; when it does not fit the stored key, the key's own is used
// (the grant is bound to the key, not to an algorithm). The key must have
// the thumbprint jkt. Errors never quote the key.
func storedDPoP(keyPEM, alg, jkt string) (*dpopKey, error) {
	s, err := parseSigner(&PrivateKeyJWT{KeyPEM: keyPEM, Alg: alg})
	if err != nil && alg != "" {
		s, err = parseSigner(&PrivateKeyJWT{KeyPEM: keyPEM})
	}
	if err != nil {
		return nil, errors.New("the shared grant's DPoP key is not a usable private key")
	}
	k, err := newDPoPKey(s, true)
	if err != nil {
		return nil, errors.New("the shared grant's DPoP key is not a usable private key")
	}
	if k.jkt != jkt {
		return nil, errors.New("the shared grant's DPoP key does not match its thumbprint")
	}
	return k, nil
}

// inheritNonces copies the nonces from, so a key adopted from the store
// does not meet every server's use_dpop_nonce again.
func (k *dpopKey) inheritNonces(from *dpopKey) {
	if from == nil || from == k {
		return
	}
	from.mu.Lock()
	copied := make(map[string]string, len(from.nonces))
	for o, n := range from.nonces {
		copied[o] = n
	}
	from.mu.Unlock()
	k.mu.Lock()
	defer k.mu.Unlock()
	for o, n := range copied {
		if _, ok := k.nonces[o]; !ok {
			k.nonces[o] = n
		}
	}
}

func generateKey(alg string) (crypto.Signer, error) {
	switch alg {
	case "ES256":
		return ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case "ES384":
		return ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	case "ES512":
		return ecdsa.GenerateKey(elliptic.P521(), rand.Reader)
	case "EdDSA":
		_, k, err := ed25519.GenerateKey(rand.Reader)
		return k, err
	case "RS256", "RS384", "RS512", "PS256", "PS384", "PS512":
		return rsa.GenerateKey(rand.Reader, 2048)
	}
	return nil, fmt.Errorf("alg %q is not ES256, ES384, ES512, RS256, RS384, RS512, PS256, PS384, PS512 or EdDSA", alg)
}

// publicJWK is the RFC 7517 form of a public key, with only the members
// RFC 7638 hashes (so it never carries a private part).
func publicJWK(pub crypto.PublicKey) (map[string]any, error) {
	switch k := pub.(type) {
	case *ecdsa.PublicKey:
		n := (k.Curve.Params().BitSize + 7) / 8
		x, y := make([]byte, n), make([]byte, n)
		k.X.FillBytes(x)
		k.Y.FillBytes(y)
		return map[string]any{"kty": "EC", "crv": k.Curve.Params().Name, "x": b64.EncodeToString(x), "y": b64.EncodeToString(y)}, nil
	case ed25519.PublicKey:
		return map[string]any{"kty": "OKP", "crv": "Ed25519", "x": b64.EncodeToString(k)}, nil
	case *rsa.PublicKey:
		return map[string]any{"kty": "RSA", "n": b64.EncodeToString(k.N.Bytes()), "e": b64.EncodeToString(big.NewInt(int64(k.E)).Bytes())}, nil
	}
	return nil, errors.New("unsupported public key")
}

// thumbprint is the RFC 7638 SHA-256 JWK thumbprint: the required members
// in lexicographic order, no whitespace.
func thumbprint(jwk map[string]any) string {
	var members []string
	switch jwk["kty"] {
	case "EC":
		members = []string{"crv", "kty", "x", "y"}
	case "OKP":
		members = []string{"crv", "kty", "x"}
	case "RSA":
		members = []string{"e", "kty", "n"}
	}
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range members {
		if i > 0 {
			b.WriteByte(',')
		}
		v, _ := jsonx.Marshal(jwk[k])
		b.WriteString(`"` + k + `":`)
		b.Write(v)
	}
	b.WriteByte('}')
	sum := sha256.Sum256([]byte(b.String()))
	return b64.EncodeToString(sum[:])
}

// htu is the proof's target URI: the request URI without query and
// fragment (RFC 9449 §4.2).
func htu(u *url.URL) string {
	c := *u
	c.RawQuery, c.ForceQuery, c.Fragment, c.RawFragment, c.User = "", false, "", "", nil
	return c.String()
}

// proof signs a DPoP proof JWT for one request. accessToken, when set, adds
// ath (resource requests); the remembered nonce of the target's origin is
// included.
func (k *dpopKey) proof(method string, target *url.URL, accessToken string, now time.Time) (string, error) {
	hdr := map[string]any{"typ": "dpop+jwt", "alg": k.s.alg, "jwk": k.jwk}
	claims := map[string]any{
		"jti": randomString(16),
		"htm": method,
		"htu": htu(target),
		"iat": now.Unix(),
	}
	if accessToken != "" {
		sum := sha256.Sum256([]byte(accessToken))
		claims["ath"] = b64.EncodeToString(sum[:])
	}
	if n := k.nonce(target); n != "" {
		claims["nonce"] = n
	}
	h, _ := jsonx.Marshal(hdr)
	c, _ := jsonx.Marshal(claims)
	input := b64.EncodeToString(h) + "." + b64.EncodeToString(c)
	sig, err := k.s.sign([]byte(input))
	if err != nil {
		return "", err
	}
	return input + "." + b64.EncodeToString(sig), nil
}

func (k *dpopKey) nonce(target *url.URL) string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.nonces[origin(target)]
}

// learnNonce remembers the DPoP-Nonce a response carries (RFC 9449 §8.2,
// §9: a server may send a new one on any response). It reports whether a
// nonce was present and differs from the one held.
func (k *dpopKey) learnNonce(target *url.URL, h http.Header) bool {
	n := h.Get("DPoP-Nonce")
	if n == "" || len(n) > 512 || !isNQChar(n) {
		return false
	}
	o := origin(target)
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.nonces[o] == n {
		return false
	}
	if _, ok := k.nonces[o]; !ok && len(k.nonces) >= maxNonces {
		for key := range k.nonces {
			delete(k.nonces, key)
			break
		}
	}
	k.nonces[o] = n
	return true
}

// isNQChar: RFC 9449 §8.1 nonce syntax (%x21 / %x23-5B / %x5D-7E).
func isNQChar(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x21 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}
