package store

import (
	"errors"
	"fmt"
	"strings"
)

// Spec is a store's configuration, the one form of auth.token_store and
// pins.store: {"type": "memory" | "file" | "postgres" | "redis" | "app",
// "path"?, "url"?, "encryption"?: {"key_env", "previous_key_envs"?}}.
type Spec struct {
	Type       string
	Path       string // file
	URL        string // postgres, redis (may hold a password: never echoed)
	Encryption *Encryption
}

// Types are the store types, as the configuration names them.
var Types = []string{"memory", "file", "postgres", "redis", "app"}

// FieldError is a configuration error at Field (relative to the store's
// object; "" for the value itself).
type FieldError struct {
	Field   string
	Message string
}

func (e *FieldError) Error() string {
	if e.Field == "" {
		return e.Message
	}
	return e.Field + ": " + e.Message
}

var urlSchemes = map[string][]string{"postgres": {"postgres://", "postgresql://"}, "redis": {"redis://", "rediss://", "unix://"}}

// ParseSpec reads a store's configuration value. extra are the members
// the caller reads itself (auth.token_store's "key" and "lease_ms");
// every other unknown member is an error. The forms of earlier releases
// (a path, "app", "memory") are refused with the object to write instead.
func ParseSpec(v any, extra ...string) (*Spec, *FieldError) {
	if s, ok := v.(string); ok {
		return nil, retired(s)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, &FieldError{"", `must be an object {"type": "memory" | "file" | "postgres" | "redis" | "app", "path"?, "url"?, "encryption"?}`}
	}
	spec := &Spec{}
	str := func(k string) (string, *FieldError) {
		raw, ok := m[k]
		if !ok {
			return "", nil
		}
		s, ok := raw.(string)
		if !ok || strings.TrimSpace(s) == "" {
			return "", &FieldError{k, "must be a non-empty string"}
		}
		return s, nil
	}
	var fe *FieldError
	if spec.Type, fe = str("type"); fe != nil {
		return nil, fe
	}
	if spec.Type == "" {
		return nil, &FieldError{"type", `is required: "memory", "file", "postgres", "redis" or "app"`}
	}
	if spec.Path, fe = str("path"); fe != nil {
		return nil, fe
	}
	if spec.URL, fe = str("url"); fe != nil {
		return nil, fe
	}
	known := map[string]bool{"type": true, "path": true, "url": true, "encryption": true}
	for _, k := range extra {
		known[k] = true
	}
	for k := range m {
		if !known[k] {
			return nil, &FieldError{k, "is not a known field (known: type, path, url, encryption" + strings.Join(append([]string{""}, extra...), ", ") + ")"}
		}
	}
	switch spec.Type {
	case "file":
		if spec.Path == "" {
			return nil, &FieldError{"path", "is required for a file store"}
		}
	case "postgres", "redis":
		if spec.URL == "" {
			return nil, &FieldError{"url", "is required for a " + spec.Type + " store"}
		}
		if !hasAnyPrefix(spec.URL, urlSchemes[spec.Type]) {
			return nil, &FieldError{"url", "must be a " + strings.Join(urlSchemes[spec.Type], " or ") + " URL"}
		}
	case "memory", "app":
	default:
		return nil, &FieldError{"type", `must be one of "memory", "file", "postgres", "redis", "app"`}
	}
	if spec.Path != "" && spec.Type != "file" {
		return nil, &FieldError{"path", "is only for a file store"}
	}
	if spec.URL != "" && spec.Type != "postgres" && spec.Type != "redis" {
		return nil, &FieldError{"url", "is only for a postgres or redis store"}
	}
	if raw, ok := m["encryption"]; ok {
		enc, fe := parseEncryption(raw)
		if fe != nil {
			return nil, fe
		}
		spec.Encryption = enc
	}
	return spec, nil
}

func parseEncryption(v any) (*Encryption, *FieldError) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, &FieldError{"encryption", `must be an object {"key_env": "NAME", "previous_key_envs"?: ["NAME", ...]}`}
	}
	enc := &Encryption{}
	for k, fv := range m {
		switch k {
		case "key_env":
			s, ok := fv.(string)
			if !ok || !envName(s) {
				return nil, &FieldError{"encryption.key_env", "must be the name of an environment variable"}
			}
			enc.KeyEnv = s
		case "previous_key_envs":
			list, ok := fv.([]any)
			if !ok {
				return nil, &FieldError{"encryption.previous_key_envs", "must be a list of environment variable names"}
			}
			for i, item := range list {
				s, ok := item.(string)
				if !ok || !envName(s) {
					return nil, &FieldError{fmt.Sprintf("encryption.previous_key_envs[%d]", i), "must be the name of an environment variable"}
				}
				enc.PreviousKeyEnvs = append(enc.PreviousKeyEnvs, s)
			}
		default:
			return nil, &FieldError{"encryption." + k, "is not a known field (known: key_env, previous_key_envs)"}
		}
	}
	if enc.KeyEnv == "" {
		return nil, &FieldError{"encryption.key_env", "is required (the name of the environment variable holding the key: 32 bytes, base64)"}
	}
	return enc, nil
}

// envName reports whether s can name an environment variable (the value
// is never in the configuration: only its name).
func envName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if !(r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// retired is the refusal of a string form of an earlier release.
func retired(s string) *FieldError {
	switch s {
	case "app", "host": // "host": the name "app" had before it
		return &FieldError{"", quote(s) + ` is retired: write {"type": "app"} and answer the store_load / store_save requests (docs/migrating.md)`}
	case "memory":
		return &FieldError{"", `"memory" is retired: write {"type": "memory"} (docs/migrating.md)`}
	}
	return &FieldError{"", `a path is retired: write {"type": "file", "path": ` + quote(s) + `} (docs/migrating.md)`}
}

func quote(s string) string { return fmt.Sprintf("%q", s) }

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// Open connects the store a Spec names, sealed when it has "encryption";
// ask answers the application's store ("app"). Nothing is read or written
// yet: the PostgreSQL table is created on first use.
func Open(s Spec, ask Ask) (Store, error) {
	var inner Store
	var err error
	switch s.Type {
	case "memory":
		inner = NewMemory()
	case "file":
		inner, err = OpenFile(s.Path)
	case "postgres":
		inner, err = OpenPostgres(s.URL)
	case "redis":
		inner, err = OpenRedis(s.URL)
	case "app":
		if ask == nil {
			return nil, errors.New(`type: "app" needs the application's store_load / store_save answers, which nothing asks here`)
		}
		inner = NewApp(ask)
	default:
		return nil, fmt.Errorf("type: %q is not a store type", s.Type)
	}
	if err != nil {
		return nil, err
	}
	if s.Encryption == nil {
		return inner, nil
	}
	sealed, err := NewSealed(inner, *s.Encryption)
	if err != nil {
		_ = inner.Close()
		return nil, err
	}
	return sealed, nil
}
