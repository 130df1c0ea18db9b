package host

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestQuotedStderr: a failed start's summary keeps the line that says
// what went wrong, not only the last lines after it.
func TestQuotedStderr(t *testing.T) {
	cases := []struct {
		name       string
		tail, want []string
	}{
		{"short", []string{"a", "b"}, []string{"a", "b"}},
		{"the error first, causes after", []string{
			"error: Failed to fetch: `https://pypi.org/simple/mcp-server-time/`",
			"  Caused by: Request failed after 3 retries",
			"  Caused by: error sending request for url",
			"  Caused by: client error (Connect)",
			"  Caused by: invalid peer certificate: UnknownIssuer",
		}, []string{
			"error: Failed to fetch: `https://pypi.org/simple/mcp-server-time/`", "…",
			"  Caused by: error sending request for url",
			"  Caused by: client error (Connect)",
			"  Caused by: invalid peer certificate: UnknownIssuer",
		}},
		{"the error right before the last lines", []string{"starting", "Error: GITHUB_TOKEN is not set", "usage: server [opts]", "  --token", "  --repo"},
			[]string{"Error: GITHUB_TOKEN is not set", "usage: server [opts]", "  --token", "  --repo"}},
		{"no error word: the last lines", []string{"1", "2", "3", "4"}, []string{"2", "3", "4"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, quotedStderr(tc.tail))
			r := map[string]any{"state": StateFailed, "last_error": "closed", "stderr_tail": tc.tail}
			require.Contains(t, summary("s", r), tc.want[0])
		})
	}
}
