package stdiotests

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/config"
	"github.com/lemonmcp/lemonmcp/core"
)

// A client configured with no protocol object (the default mode, "auto")
// connects to a legacy-only, a modern-only and a dual-era server, and
// costs a legacy server exactly one extra request: the server/discover
// probe before initialize (docs/modern.md, "Era default").
func TestDefaultEraConnects(t *testing.T) {
	for _, tc := range []struct {
		name, era, version string
		args               []string
		// handshake is every handshake request the server saw, in order.
		handshake []string
	}{
		{"legacy-only server", "legacy", "2025-11-25", []string{"-protocol", "2025-11-25"}, []string{"server/discover", "initialize"}},
		{"modern-only server", "modern", "2026-07-28", []string{"-modern-only"}, []string{"server/discover"}},
		{"dual-era server", "modern", "2026-07-28", nil, []string{"server/discover"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logFile := filepath.Join(t.TempDir(), "stdin.log")
			argv, _ := json.Marshal(append([]string{"-log-file", logFile}, tc.args...))
			cfg := fmt.Sprintf(`{"transport":{"type":"stdio","command":%q,"args":%s},
				"timeouts":{"ready_ms":5000,"close_grace_ms":500}}`, fixtureBin, argv)
			p, perr := config.Parse([]byte(cfg), "test")
			require.Nil(t, errOrNil(perr))
			require.Equal(t, core.ModeAuto, p.Options.Mode, "the default mode")
			c := &host{Client: core.New(p.Options, p.Transport)}
			t.Cleanup(c.Free)
			require.Nil(t, errOrNil(c.Connect()))
			require.Nil(t, errOrNil(c.WaitReady(10*time.Second)))
			gotEra, gotVersion := era(t, c)
			t.Logf("%s: era %s, protocol %s", tc.name, gotEra, gotVersion)
			require.Equal(t, tc.era, gotEra)
			require.Equal(t, tc.version, gotVersion)
			require.Equal(t, "hi", toolText(t, c, "echo", `{"text":"hi"}`))
			require.Nil(t, errOrNil(c.Close(5*time.Second)))

			raw, rerr := os.ReadFile(logFile)
			require.NoError(t, rerr)
			var handshake []string
			for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
				var m struct {
					Method string `json:"method"`
				}
				require.NoError(t, json.Unmarshal([]byte(line), &m), line)
				if m.Method == "server/discover" || m.Method == "initialize" {
					handshake = append(handshake, m.Method)
				}
			}
			require.Equal(t, tc.handshake, handshake)
		})
	}
}

// A go-sdk server slower to start than the call defaults (call_ms 50,
// max_total_ms 80) is still found in its era: the handshake is bounded by
// ready_ms alone. When the call defaults bounded the probe too, it timed
// out, and the fallback's initialize reached the go-sdk after it had
// answered server/discover on the same connection: "duplicate
// "initialize" received". The start is kept well short of the probe
// grace (1 s), past which initialize joins the probe by design.
func TestSlowStartUnderTightCallDefaults(t *testing.T) {
	logFile := filepath.Join(t.TempDir(), "stdin.log")
	argv, _ := json.Marshal([]string{"-c", `sleep 0.2; exec "$0" "$@"`, fixtureBin, "-log-file", logFile})
	cfg := fmt.Sprintf(`{"transport":{"type":"stdio","command":"sh","args":%s},
		"timeouts":{"ready_ms":5000,"call_ms":50,"max_total_ms":80,"close_grace_ms":500}}`, argv)
	p, perr := config.Parse([]byte(cfg), "test")
	require.Nil(t, errOrNil(perr))
	c := &host{Client: core.New(p.Options, p.Transport)}
	t.Cleanup(c.Free)
	require.Nil(t, errOrNil(c.Connect()))
	require.Nil(t, errOrNil(c.WaitReady(10*time.Second)))
	gotEra, _ := era(t, c)
	require.Equal(t, "modern", gotEra)
	require.Nil(t, errOrNil(c.Close(5*time.Second)))
	raw, rerr := os.ReadFile(logFile)
	require.NoError(t, rerr)
	require.Equal(t, 1, strings.Count(string(raw), `"server/discover"`), "%s", raw)
	require.NotContains(t, string(raw), `"initialize"`)
}
