package stdiotests

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/config"
	"github.com/lemonmcp/lemonmcp/core"
)

// A real Python server writing json.dumps defaults (", ", ": ", \u escapes
// for every non-ASCII character), with LF and with CRLF line endings: the
// handshake, a tool call, a notification and a server request pass, and
// bytes that are not UTF-8 arrive as U+FFFD.
func TestPythonJSONDumpsServer(t *testing.T) {
	python, err := exec.LookPath("python3")
	require.NoError(t, err, "python3 is part of the test environment")
	script, err := filepath.Abs("../fixtures/pyserver/server.py")
	require.NoError(t, err)
	for _, args := range [][]string{{script}, {script, "--crlf"}} {
		t.Run(strings.Join(args[1:], "")+"lf", func(t *testing.T) {
			argv, _ := json.Marshal(args)
			cfg := fmt.Sprintf(`{"transport":{"type":"stdio","command":%q,"args":%s},"protocol":{"mode":"legacy"},
				"handlers":{"roots":{}},"timeouts":{"ready_ms":5000,"call_ms":5000,"close_grace_ms":500}}`, python, argv)
			p, perr := config.Parse([]byte(cfg), "test")
			require.Nil(t, errOrNil(perr))
			h := &host{Client: core.New(p.Options, p.Transport)}
			var mu sync.Mutex
			var notes []string
			h.SetEventHandler(func(kind string, payload []byte) {
				if kind == "notification" {
					mu.Lock()
					notes = append(notes, string(payload))
					mu.Unlock()
				}
			}, nil)
			require.Nil(t, errOrNil(h.SetAppRequestHandler(func(id uint64, kind string, _ []byte) {
				h.Respond(id, core.StatusOK, []byte(`{"roots":[{"uri":"file:///wörk","name":"work"}]}`))
			}, nil)))
			require.Nil(t, errOrNil(h.Connect()))
			t.Cleanup(func() { h.Close(5 * time.Second); h.Free() })
			require.Nil(t, errOrNil(h.WaitReady(10*time.Second)), "handshake")

			info, ierr := h.ServerInfo()
			require.Nil(t, errOrNil(ierr))
			require.Contains(t, string(info), "python-json-dumps")

			require.Equal(t, "grüße ✓ 𝄞", toolText(t, h, "echo", `{"text":"grüße ✓ 𝄞"}`))
			require.Equal(t, "ok", toolText(t, h, "notify", `{}`))
			require.Eventually(t, func() bool {
				mu.Lock()
				defer mu.Unlock()
				return strings.Contains(strings.Join(notes, ""), "notified ünïcode") ||
					strings.Contains(strings.Join(notes, ""), `notified \u00fcn\u00efcode`)
			}, 5*time.Second, 10*time.Millisecond)
			require.Contains(t, toolText(t, h, "roots", `{}`), "file:///wörk")
			require.Equal(t, "bad \uFFFD end", toolText(t, h, "bad_utf8", `{}`))
		})
	}
}
