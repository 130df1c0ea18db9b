package redact

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestScrub(t *testing.T) {
	s := NewSet("Bearer tok-0123456789", "tok-0123456789", "abc", "p\"w/d\\x", "tok-0123456789")
	require.Len(t, s, 3, "duplicates and short values dropped")
	for _, tc := range []struct{ in, want string }{
		{"got Bearer tok-0123456789!", "got [redacted]!"},
		{"token tok-0123456789 only", "token [redacted] only"},
		{"abc stays", "abc stays"},
		{`pw p"w/d\x`, "pw [redacted]"},
	} {
		require.Equal(t, tc.want, s.Scrub(tc.in))
	}
	require.Equal(t, `{"m":"[redacted] and [redacted]"}`, string(s.ScrubJSON([]byte(`{"m":"tok-0123456789 and p\"w\/d\\x"}`))))
	var none Set
	require.Equal(t, "x", none.Scrub("x"))
}
