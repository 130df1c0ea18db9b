package sandbox_test

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/host"
)

// TestHostNamesTheSignalOfAConfinedCrash: a confined server killed by a
// signal is reported by the host, in lmcp_host_servers and in its
// restarting events, exactly as an unconfined one: by the signal, with no
// exit code (before the status record: exit code 137).
func TestHostNamesTheSignalOfAConfinedCrash(t *testing.T) {
	for _, boxed := range []bool{false, true} {
		name := map[bool]string{false: "unconfined", true: "confined"}[boxed]
		t.Run(name, func(t *testing.T) {
			argv, _ := json.Marshal([]string{"-c", "echo dying >&2; kill -KILL $$"})
			srv := `{"command":"/bin/sh","args":` + string(argv) +
				`,"restart":{"max_restarts":1,"backoff_ms":20},"timeouts":{"ready_ms":5000,"close_grace_ms":200}`
			if boxed {
				srv += `,"sandboxEnabled":true`
			}
			h, err := host.Parse([]byte(`{"mcpServers":{"s":`+srv+`}}}`), "test")
			require.Nil(t, err)
			var mu sync.Mutex
			var restarting []string
			h.SetEventHandler(func(kind string, payload []byte) {
				if kind == "restarting" {
					mu.Lock()
					restarting = append(restarting, string(payload))
					mu.Unlock()
				}
			}, nil)
			defer func() {
				h.Close(5 * time.Second)
				h.Free()
			}()
			require.Nil(t, h.Connect())

			type report struct {
				State     string           `json:"state"`
				LastError string           `json:"last_error"`
				ExitCode  *int             `json:"exit_code"`
				Signal    string           `json:"signal"`
				Sandbox   *json.RawMessage `json:"sandbox"`
			}
			var r report
			require.Eventually(t, func() bool {
				var all map[string]report
				if json.Unmarshal(h.Servers(), &all) != nil {
					return false
				}
				r = all["s"]
				return strings.Contains(r.LastError, "gave up")
			}, 30*time.Second, 20*time.Millisecond)
			require.Equal(t, boxed, r.Sandbox != nil, "the report says whether it was confined")
			require.Equal(t, "SIGKILL", r.Signal)
			require.Nil(t, r.ExitCode)

			mu.Lock()
			defer mu.Unlock()
			require.NotEmpty(t, restarting)
			require.Contains(t, restarting[0], `"signal":"SIGKILL"`)
			require.Contains(t, restarting[0], "server was killed by SIGKILL")
			require.NotContains(t, restarting[0], "exit_code")
		})
	}
}
