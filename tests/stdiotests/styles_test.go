package stdiotests

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// jsonStyles are the interoperability corpus over stdio: the fixture
// writes every message the way another server would (Python's json.dumps
// defaults, CRLF line endings, members in reverse order, \u escapes for
// every non-ASCII character, integers as 1.0e0, and all of them at once).
var jsonStyles = []string{"python", "crlf", "reverse", "escape", "numbers", "all"}

// The handshake, a tool call, a notification and a server request pass in
// every style and both eras.
func TestServerJSONStylesOverStdio(t *testing.T) {
	for _, style := range jsonStyles {
		for _, mode := range []string{"legacy", "modern"} {
			t.Run(style+"/"+mode, func(t *testing.T) {
				c, err := start(t, mode, "-style", style)
				require.Nil(t, errOrNil(err), "handshake")
				var mu sync.Mutex
				var notes []string
				c.SetEventHandler(func(kind string, payload []byte) {
					if kind == "notification" {
						mu.Lock()
						notes = append(notes, string(payload))
						mu.Unlock()
					}
				}, nil)

				require.Equal(t, "grüße ✓ 𝄞", toolText(t, c, "echo", `{"text":"grüße ✓ 𝄞"}`))
				require.Contains(t, toolText(t, c, "roots", `{}`), "file:///work", "a server request")
				require.Equal(t, []string{"roots"}, c.seen())
				if mode == "legacy" {
					toolText(t, c, "notify", `{}`)
					require.Eventually(t, func() bool {
						mu.Lock()
						defer mu.Unlock()
						return strings.Contains(strings.Join(notes, "\n"), "notifications/tools/list_changed")
					}, 5*time.Second, 10*time.Millisecond, "a notification")
				}
			})
		}
	}
}
