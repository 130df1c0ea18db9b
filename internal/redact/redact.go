package redact

import (
	"sort"
	"strings"
)

// redacted replaces a secret in text shown to a host.
const redacted = "[redacted]"

// MinSecretBytes: shorter values are not scrubbed (they would match common
// words); a secret that short is no secret anyway.
const MinSecretBytes = 4

// Set is a set of secret values, longest first (so that a value is
// replaced whole before any part of it that is also listed). It is
// read-only once made, so safe for concurrent use.
type Set []string

// NewSet makes a Set of values, dropping duplicates and values shorter than
// MinSecretBytes.
func NewSet(values ...string) Set {
	seen := make(map[string]bool, len(values))
	var s Set
	for _, v := range values {
		if len(v) >= MinSecretBytes && !seen[v] {
			seen[v] = true
			s = append(s, v)
		}
	}
	sort.SliceStable(s, func(i, j int) bool { return len(s[i]) > len(s[j]) })
	return s
}

// Scrub replaces every secret in text with "[redacted]".
func (s Set) Scrub(text string) string {
	for _, sec := range s {
		if strings.Contains(text, sec) {
			text = strings.ReplaceAll(text, sec, redacted)
		}
	}
	return text
}

// ScrubJSON is Scrub on a JSON text (an error object a server sent): a
// secret is replaced as it appears, and as it appears JSON-escaped.
func (s Set) ScrubJSON(raw []byte) []byte {
	if len(s) == 0 || len(raw) == 0 {
		return raw
	}
	text := string(raw)
	for _, sec := range s {
		text = strings.ReplaceAll(text, sec, redacted)
		if esc := jsonEscaped(sec); esc != sec {
			text = strings.ReplaceAll(text, esc, redacted)
		}
	}
	return []byte(text)
}

// jsonEscaped is s as it may appear inside a JSON string literal.
func jsonEscaped(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "/", `\/`).Replace(s)
}
