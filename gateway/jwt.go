package gateway

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"io"
	"math/big"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/lemonmcp/lemonmcp/internal/jsonx"
)

// jwtVerifier checks access tokens as an OAuth 2.1 resource server: a
// JWT signed by a key of the issuer's JWKS (RS256 or ES256), with this
// gateway as its audience, within its validity.
type jwtVerifier struct {
	opts   *AuthOptions
	client *http.Client

	mu      sync.Mutex
	keys    map[string]crypto.PublicKey
	fetched time.Time
}

const (
	jwksTTL      = 5 * time.Minute
	jwksMinFetch = 10 * time.Second // an unknown kid refetches at most this often
	jwtLeeway    = 60 * time.Second
	maxJWKSBytes = 1 << 20
)

func newJWTVerifier(a *AuthOptions) *jwtVerifier {
	return &jwtVerifier{opts: a, client: &http.Client{Timeout: 10 * time.Second}}
}

var b64 = base64.RawURLEncoding

func (v *jwtVerifier) verify(token string) error {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return errors.New("the token is not a JWT")
	}
	var head struct {
		Alg string `json:"alg"`
		Kid string `json:"kid"`
	}
	hb, err := b64.DecodeString(parts[0])
	if err != nil || jsonx.Unmarshal(hb, &head) != nil {
		return errors.New("the token's header is malformed")
	}
	sig, err := b64.DecodeString(parts[2])
	if err != nil {
		return errors.New("the token's signature is malformed")
	}
	key, err := v.key(head.Kid)
	if err != nil {
		return err
	}
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	switch k := key.(type) {
	case *rsa.PublicKey:
		if head.Alg != "RS256" || rsa.VerifyPKCS1v15(k, crypto.SHA256, digest[:], sig) != nil {
			return errors.New("the token's signature does not verify")
		}
	case *ecdsa.PublicKey:
		if head.Alg != "ES256" || len(sig) != 64 || !ecdsa.Verify(k, digest[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
			return errors.New("the token's signature does not verify")
		}
	default:
		return errors.New("the token's key type is not supported")
	}
	pb, err := b64.DecodeString(parts[1])
	if err != nil {
		return errors.New("the token's claims are malformed")
	}
	var claims struct {
		Iss string           `json:"iss"`
		Aud jsonx.RawMessage `json:"aud"`
		Exp *float64         `json:"exp"`
		Nbf *float64         `json:"nbf"`
	}
	if jsonx.Unmarshal(pb, &claims) != nil {
		return errors.New("the token's claims are malformed")
	}
	now := time.Now()
	switch {
	case claims.Iss != v.opts.Issuer:
		return errors.New("the token's issuer is not this gateway's")
	case !audienceHas(claims.Aud, v.opts.Audience):
		return errors.New("the token's audience is not this gateway")
	case claims.Exp == nil || now.After(time.Unix(int64(*claims.Exp), 0).Add(jwtLeeway)):
		return errors.New("the token has expired")
	case claims.Nbf != nil && now.Add(jwtLeeway).Before(time.Unix(int64(*claims.Nbf), 0)):
		return errors.New("the token is not valid yet")
	}
	return nil
}

func audienceHas(raw []byte, want string) bool {
	var one string
	if jsonx.Unmarshal(raw, &one) == nil {
		return one == want
	}
	var many []string
	if jsonx.Unmarshal(raw, &many) == nil {
		for _, a := range many {
			if a == want {
				return true
			}
		}
	}
	return false
}

// key finds kid in the JWKS, fetching it when stale or when kid is new.
func (v *jwtVerifier) key(kid string) (crypto.PublicKey, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if k, ok := v.keys[kid]; ok && time.Since(v.fetched) < jwksTTL {
		return k, nil
	}
	if time.Since(v.fetched) >= jwksMinFetch || v.keys == nil {
		keys, err := v.fetch()
		if err != nil {
			if k, ok := v.keys[kid]; ok {
				return k, nil // the last good set stands while the issuer is unreachable
			}
			return nil, err
		}
		v.keys, v.fetched = keys, time.Now()
	}
	if k, ok := v.keys[kid]; ok {
		return k, nil
	}
	return nil, errors.New("the token's key is not in the issuer's JWKS")
}

func (v *jwtVerifier) fetch() (map[string]crypto.PublicKey, error) {
	resp, err := v.client.Get(v.opts.JWKSURL)
	if err != nil {
		return nil, errors.New("the JWKS could not be fetched")
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxJWKSBytes))
	if err != nil || resp.StatusCode != http.StatusOK {
		return nil, errors.New("the JWKS could not be fetched")
	}
	var set struct {
		Keys []struct {
			Kty string `json:"kty"`
			Kid string `json:"kid"`
			N   string `json:"n"`
			E   string `json:"e"`
			Crv string `json:"crv"`
			X   string `json:"x"`
			Y   string `json:"y"`
		} `json:"keys"`
	}
	if jsonx.Unmarshal(body, &set) != nil {
		return nil, errors.New("the JWKS is malformed")
	}
	keys := map[string]crypto.PublicKey{}
	for _, k := range set.Keys {
		switch k.Kty {
		case "RSA":
			n, err1 := b64.DecodeString(k.N)
			e, err2 := b64.DecodeString(k.E)
			if err1 != nil || err2 != nil || len(e) > 4 {
				continue
			}
			keys[k.Kid] = &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}
		case "EC":
			x, err1 := b64.DecodeString(k.X)
			y, err2 := b64.DecodeString(k.Y)
			if err1 != nil || err2 != nil || k.Crv != "P-256" {
				continue
			}
			pub := &ecdsa.PublicKey{Curve: elliptic.P256(), X: new(big.Int).SetBytes(x), Y: new(big.Int).SetBytes(y)}
			if !pub.Curve.IsOnCurve(pub.X, pub.Y) {
				continue
			}
			keys[k.Kid] = pub
		}
	}
	return keys, nil
}
