package store

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/lemonmcp/lemonmcp/internal/jsonx"
)

// Encryption is a store's "encryption": KeyEnv names the environment
// variable holding the key documents are sealed with (32 bytes, base64);
// PreviousKeyEnvs name older keys, which still open what they sealed.
type Encryption struct {
	KeyEnv          string
	PreviousKeyEnvs []string
}

// Sealed is a store whose document bodies are sealed with AES-256-GCM
// before they reach the store below it: what a file, a PostgreSQL row, a
// Redis hash or the application holds is an envelope
//
//	{"sealed": "A256GCM", "key_id": ID, "data": base64(nonce ‖ ciphertext)}
//
// where ID is the first 8 bytes of SHA-256 of the key (hex): it says
// which key opens the document and reveals nothing of it. The
// additional data is the document's collection and key, so an envelope
// moved to another place does not open. A document sealed with a
// previous key opens, and the next save seals it with the current key. A
// document this store cannot open (another key, altered, or not sealed)
// is an error naming the variable, and nothing is written over it. The
// lease is not sealed: it holds no secret, and a lease-only write keeps
// the envelope it read (the file store's in-place lease slots).
type Sealed struct {
	inner   Store
	current sealKey
	keys    map[string]sealKey // by key id, current included
	names   string             // the variables, for messages

	mu   sync.Mutex
	last map[memKey]sealedCopy // the envelope last read or written, per document
}

type sealKey struct {
	id   string
	env  string
	aead cipher.AEAD
}

type sealedCopy struct {
	ver    Version
	plain  []byte
	sealed []byte
	keyID  string
}

type envelope struct {
	Sealed string `json:"sealed"`
	KeyID  string `json:"key_id"`
	Data   string `json:"data"`
}

const sealAlg = "A256GCM"

// NewSealed seals inner's documents with the keys enc names. A variable
// that is unset or does not hold a base64 32-byte key is an error naming
// it (never its value).
func NewSealed(inner Store, enc Encryption) (*Sealed, error) {
	if strings.TrimSpace(enc.KeyEnv) == "" {
		return nil, errors.New("encryption.key_env: required (the name of the environment variable holding the key)")
	}
	s := &Sealed{inner: inner, keys: map[string]sealKey{}, last: map[memKey]sealedCopy{}}
	names := []string{enc.KeyEnv}
	cur, err := loadSealKey("encryption.key_env", enc.KeyEnv)
	if err != nil {
		return nil, err
	}
	s.current = cur
	s.keys[cur.id] = cur
	for i, name := range enc.PreviousKeyEnvs {
		k, err := loadSealKey(fmt.Sprintf("encryption.previous_key_envs[%d]", i), name)
		if err != nil {
			return nil, err
		}
		if _, dup := s.keys[k.id]; !dup {
			s.keys[k.id] = k
		}
		names = append(names, name)
	}
	s.names = strings.Join(names, ", ")
	return s, nil
}

func loadSealKey(field, env string) (sealKey, error) {
	raw, ok := os.LookupEnv(env)
	if !ok || raw == "" {
		return sealKey{}, fmt.Errorf("%s: the environment variable %s is not set (it must hold the store's key: 32 bytes, base64)", field, env)
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimSpace(raw))
	if err != nil {
		key, err = base64.RawStdEncoding.DecodeString(strings.TrimSpace(raw))
	}
	if err != nil || len(key) != 32 {
		return sealKey{}, fmt.Errorf("%s: the environment variable %s does not hold a key of 32 bytes in base64", field, env)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return sealKey{}, fmt.Errorf("%s: the key in %s is not usable", field, env)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return sealKey{}, fmt.Errorf("%s: the key in %s is not usable", field, env)
	}
	sum := sha256.Sum256(key)
	return sealKey{id: hex.EncodeToString(sum[:8]), env: env, aead: aead}, nil
}

func sealAAD(collection, key string) []byte {
	return []byte("lemonmcp store\x00" + collection + "\x00" + key)
}

// Load implements Store.
func (s *Sealed) Load(ctx context.Context, collection, key string) (*Document, Version, error) {
	d, ver, err := s.inner.Load(ctx, collection, key)
	if err != nil || d == nil {
		return d, ver, err
	}
	plain, err := s.open(collection, key, ver, d.Body)
	if err != nil {
		return nil, 0, err
	}
	d.Body = plain
	return d, ver, nil
}

// CompareAndSave implements Store.
func (s *Sealed) CompareAndSave(ctx context.Context, collection, key string, expected Version, doc *Document) (Version, *Document, error) {
	if err := checkBody(collection, key, doc); err != nil {
		return 0, nil, err
	}
	k := memKey{collection, key}
	sealed := s.reuse(k, expected, doc.Body)
	if sealed == nil {
		sealed = s.seal(collection, key, doc.Body)
	}
	ver, won, err := s.inner.CompareAndSave(ctx, collection, key, expected, &Document{Body: sealed, Lease: doc.Lease})
	if err != nil {
		return 0, nil, err
	}
	if won == nil {
		if ver > expected {
			s.remember(k, sealedCopy{ver: ver, plain: bytes.Clone(doc.Body), sealed: sealed, keyID: s.current.id})
		}
		return ver, nil, nil
	}
	plain, err := s.open(collection, key, ver, won.Body)
	if err != nil {
		return 0, nil, err
	}
	won.Body = plain
	return ver, won, nil
}

// Close implements Store.
func (s *Sealed) Close() error { return s.inner.Close() }

// VersionOf implements Versioner: the version is not sealed.
func (s *Sealed) VersionOf(ctx context.Context, collection, key string) (Version, error) {
	return VersionOf(ctx, s.inner, collection, key)
}

// reuse is the envelope read at version expected when the body is the same
// and sealed with the current key: a lease-only write keeps it.
func (s *Sealed) reuse(k memKey, expected Version, plain []byte) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.last[k]
	if ok && c.ver == expected && c.keyID == s.current.id && bytes.Equal(c.plain, plain) {
		return c.sealed
	}
	return nil
}

func (s *Sealed) remember(k memKey, c sealedCopy) {
	s.mu.Lock()
	s.last[k] = c
	s.mu.Unlock()
}

func (s *Sealed) seal(collection, key string, plain []byte) []byte {
	nonce := make([]byte, s.current.aead.NonceSize())
	_, _ = rand.Read(nonce)
	data := s.current.aead.Seal(nonce, nonce, plain, sealAAD(collection, key))
	return jsonx.MustMarshal(envelope{Sealed: sealAlg, KeyID: s.current.id, Data: base64.StdEncoding.EncodeToString(data)})
}

// open opens an envelope read at version ver.
func (s *Sealed) open(collection, key string, ver Version, body []byte) ([]byte, error) {
	var env envelope
	if jsonx.Unmarshal(body, &env) != nil || env.Sealed == "" {
		return nil, fmt.Errorf("the document %s/%s in the store is not sealed, and the store's encryption (%s) accepts only sealed documents; it was left as it is", collection, key, s.names)
	}
	if env.Sealed != sealAlg {
		return nil, fmt.Errorf("the document %s/%s is sealed with %q, which this library does not open; it was left as it is", collection, key, env.Sealed)
	}
	k, ok := s.keys[env.KeyID]
	if !ok {
		return nil, fmt.Errorf("the document %s/%s is sealed with the key id %s, which none of %s holds (the wrong key, or an older one missing from previous_key_envs); nothing was changed", collection, key, env.KeyID, s.names)
	}
	data, err := base64.StdEncoding.DecodeString(env.Data)
	ns := k.aead.NonceSize()
	if err != nil || len(data) < ns {
		return nil, fmt.Errorf("the document %s/%s is a damaged envelope; nothing was changed", collection, key)
	}
	plain, err := k.aead.Open(nil, data[:ns], data[ns:], sealAAD(collection, key))
	if err != nil {
		return nil, fmt.Errorf("the document %s/%s does not open with the key in %s: it was altered or sealed for another document; nothing was changed", collection, key, k.env)
	}
	s.remember(memKey{collection, key}, sealedCopy{ver: ver, plain: bytes.Clone(plain), sealed: bytes.Clone(body), keyID: k.id})
	return plain, nil
}
