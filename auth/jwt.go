package auth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"hash"
	"time"

	"github.com/lemonmcp/lemonmcp/internal/jsonx"
)

// signer is a parsed PrivateKeyJWT.
type signer struct {
	key crypto.Signer
	alg string
	kid string
}

// assertionLifetime is the exp of a client assertion: short, it is used
// once.
const assertionLifetime = 5 * time.Minute

func parseSigner(p *PrivateKeyJWT) (*signer, error) {
	blk, _ := pem.Decode([]byte(p.KeyPEM))
	if blk == nil {
		return nil, errors.New("key_pem is not PEM")
	}
	var key any
	var err error
	switch blk.Type {
	case "RSA PRIVATE KEY":
		key, err = x509.ParsePKCS1PrivateKey(blk.Bytes)
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(blk.Bytes)
	default:
		key, err = x509.ParsePKCS8PrivateKey(blk.Bytes)
	}
	if err != nil {
		return nil, errors.New("key_pem holds no PKCS#8, PKCS#1 or SEC 1 private key")
	}
	s := &signer{alg: p.Alg, kid: p.KeyID}
	switch k := key.(type) {
	case *ecdsa.PrivateKey:
		s.key = k
		want := map[string]string{"P-256": "ES256", "P-384": "ES384", "P-521": "ES512"}[k.Curve.Params().Name]
		if want == "" {
			return nil, errors.New("unsupported EC curve")
		}
		if s.alg == "" {
			s.alg = want
		} else if s.alg != want {
			return nil, fmt.Errorf("alg %s does not match the %s key", s.alg, k.Curve.Params().Name)
		}
	case *rsa.PrivateKey:
		s.key = k
		switch s.alg {
		case "":
			s.alg = "RS256"
		case "RS256", "RS384", "RS512", "PS256", "PS384", "PS512":
		default:
			return nil, fmt.Errorf("alg %s does not fit an RSA key", s.alg)
		}
	case ed25519.PrivateKey:
		s.key = k
		switch s.alg {
		case "":
			s.alg = "EdDSA"
		case "EdDSA":
		default:
			return nil, fmt.Errorf("alg %s does not fit an Ed25519 key", s.alg)
		}
	default:
		return nil, errors.New("unsupported key type")
	}
	return s, nil
}

func hashFor(alg string) (crypto.Hash, func() hash.Hash) {
	switch alg[2:] {
	case "384":
		return crypto.SHA384, sha512.New384
	case "512":
		return crypto.SHA512, sha512.New
	}
	return crypto.SHA256, sha256.New
}

var b64 = base64.RawURLEncoding

// assertion builds an RFC 7523 client assertion: iss = sub = client_id, a
// fresh jti, iat and a short exp. aud is the authorization server's issuer
// (draft-ietf-oauth-rfc7523bis; what conformance auth/client-credentials-jwt
// verifies), or the token endpoint when no issuer is known.
func (s *signer) assertion(clientID, aud string, now time.Time) (string, error) {
	hdr := map[string]any{"alg": s.alg, "typ": "JWT"}
	if s.kid != "" {
		hdr["kid"] = s.kid
	}
	claims := map[string]any{
		"iss": clientID, "sub": clientID, "aud": aud,
		"jti": randomString(16),
		"iat": now.Unix(), "exp": now.Add(assertionLifetime).Unix(),
	}
	h, _ := jsonx.Marshal(hdr)
	c, _ := jsonx.Marshal(claims)
	input := b64.EncodeToString(h) + "." + b64.EncodeToString(c)
	sig, err := s.sign([]byte(input))
	if err != nil {
		return "", err
	}
	return input + "." + b64.EncodeToString(sig), nil
}

func (s *signer) sign(input []byte) ([]byte, error) {
	if k, ok := s.key.(ed25519.PrivateKey); ok {
		return ed25519.Sign(k, input), nil
	}
	ch, nh := hashFor(s.alg)
	hh := nh()
	hh.Write(input)
	digest := hh.Sum(nil)
	switch k := s.key.(type) {
	case *ecdsa.PrivateKey:
		r, ss, err := ecdsa.Sign(rand.Reader, k, digest)
		if err != nil {
			return nil, err
		}
		// JWS wants r || s, each the curve's byte size (RFC 7518 §3.4),
		// not ASN.1.
		n := (k.Curve.Params().BitSize + 7) / 8
		out := make([]byte, 2*n)
		r.FillBytes(out[:n])
		ss.FillBytes(out[n:])
		return out, nil
	case *rsa.PrivateKey:
		if s.alg[0] == 'P' {
			return rsa.SignPSS(rand.Reader, k, ch, digest, &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash})
		}
		return rsa.SignPKCS1v15(rand.Reader, k, ch, digest)
	}
	return nil, errors.New("unsupported key")
}
