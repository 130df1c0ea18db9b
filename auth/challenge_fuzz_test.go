package auth

import (
	"strings"
	"testing"
)

// WWW-Authenticate comes from the server: whatever it holds, parsing ends,
// never panics, and what it extracts is a substring-sized view of the
// input (no growth from escapes).
func FuzzParseBearer(f *testing.F) {
	for _, seed := range []string{
		`Bearer resource_metadata="https://r/.well-known/oauth-protected-resource", scope="a b"`,
		`Bearer realm="x", error="insufficient_scope", scope="files:read files:write", error_description="need \"more\""`,
		`Basic realm="x", Bearer error=invalid_token, DPoP algs="ES256", error="use_dpop_nonce"`,
		`bEaReR scope=unquoted, resource_metadata="unterminated`,
		`Bearer ,,, =, ="", token68==`,
		``,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, header string) {
		bc := parseBearer(strings.Split(header, "\n"))
		for _, part := range append([]string{bc.resourceMetadata, bc.err, bc.errorDescription, bc.dpopErr}, bc.scope...) {
			if len(part) > len(header) {
				t.Fatalf("extracted %d bytes from a %d-byte header", len(part), len(header))
			}
		}
	})
}
