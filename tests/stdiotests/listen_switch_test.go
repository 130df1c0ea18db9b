package stdiotests

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/config"
	"github.com/lemonmcp/lemonmcp/core"
)

// A subscribe right after ready, then subscribe/unsubscribe switches of the
// listen filter, against the three stdio servers of the modern era: each
// completes (the first one no longer races the first listen: "Method not
// found" from the TypeScript SDK v2) and the resource's updates arrive. The
// time each switch took is logged (issue 19's note gives the figures); no
// limit is asserted, the machine is shared.
func TestListenSwitchOverStdio(t *testing.T) {
	servers := []struct {
		name string
		cmd  func(t *testing.T) (string, []string)
		uri  string
	}{
		{"go sdk", func(*testing.T) (string, []string) { return fixtureBin, nil }, "fixture://blob"},
		{"typescript sdk v2", func(t *testing.T) (string, []string) { n, s := tsv2Server(t); return n, []string{s} }, "test://doc"},
		{"python sdk 2", func(t *testing.T) (string, []string) { p, s := pyv2Server(t); return p, []string{s} }, "test://doc"},
	}
	for _, srv := range servers {
		t.Run(srv.name, func(t *testing.T) {
			command, args := srv.cmd(t)
			argv := "[]"
			if len(args) > 0 {
				argv = fmt.Sprintf("[%q]", args[0])
			}
			cfg := fmt.Sprintf(`{"transport":{"type":"stdio","command":%q,"args":%s},"protocol":{"mode":"modern"},"timeouts":{"ready_ms":20000,"call_ms":10000,"close_grace_ms":500}}`, command, argv)
			p, perr := config.Parse([]byte(cfg), "test")
			require.Nil(t, errOrNil(perr))
			c := &host{Client: core.New(p.Options, p.Transport)}
			n := recordNotes(c)
			require.Nil(t, errOrNil(c.Connect()))
			t.Cleanup(func() {
				c.Close(5 * time.Second)
				c.Free()
			})
			require.Nil(t, errOrNil(c.WaitReady(30*time.Second)))
			var took []time.Duration
			for i := 0; i < 5; i++ {
				start := time.Now()
				_, err := c.CallSync("resources/subscribe", []byte(fmt.Sprintf(`{"uri":%q}`, srv.uri)), core.CallOptions{})
				took = append(took, time.Since(start))
				require.Nil(t, errOrNil(err), "subscribe %d", i)
				if i == 0 {
					touch := "touch"
					args := `{}`
					if srv.name == "go sdk" {
						args = fmt.Sprintf(`{"uri":%q}`, srv.uri)
					}
					require.Equal(t, "ok", toolText(t, c, touch, args))
					require.Eventually(t, func() bool { return n.has("notifications/resources/updated") }, 10*time.Second, 10*time.Millisecond)
				}
				_, err = c.CallSync("resources/unsubscribe", []byte(fmt.Sprintf(`{"uri":%q}`, srv.uri)), core.CallOptions{})
				require.Nil(t, errOrNil(err))
			}
			sorted := slices.Clone(took)
			slices.Sort(sorted)
			t.Logf("%s: subscribe (a listen switch) took %v; first %v, median %v", srv.name, took, took[0], sorted[len(sorted)/2])
		})
	}
}
