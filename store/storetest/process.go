package storetest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/store"
)

// ProcessAsk answers the application's store requests (store_load,
// store_save) through a helper process: a binding's own answering code
// over an application's store, as an application's callbacks run it.
// Each request is one line {"kind", "payload"} on its stdin, each answer
// one line {"status", "answer"} on its stdout (status 0: answered; else
// the binding refused, as lmcp_client_respond would carry it). The
// process ends with the test.
func ProcessAsk(t *testing.T, cmd *exec.Cmd) store.Ask {
	t.Helper()
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = stdin.Close() // the helper ends at the end of its input
		if err := cmd.Wait(); err != nil {
			t.Errorf("the store helper %s failed: %v\n%s", cmd.Path, err, stderr.String())
		}
	})
	lines := bufio.NewScanner(stdout)
	lines.Buffer(make([]byte, 1<<16), 1<<24)
	var mu sync.Mutex
	return func(_ context.Context, kind string, payload []byte) ([]byte, error) {
		mu.Lock()
		defer mu.Unlock()
		req, err := json.Marshal(struct {
			Kind    string          `json:"kind"`
			Payload json.RawMessage `json:"payload"`
		}{kind, payload})
		if err != nil {
			return nil, err
		}
		if _, err := stdin.Write(append(req, '\n')); err != nil {
			return nil, fmt.Errorf("writing %s to the store helper: %w (%s)", kind, err, stderr.String())
		}
		if !lines.Scan() {
			return nil, fmt.Errorf("the store helper gave no answer to %s: %v (%s)", kind, lines.Err(), stderr.String())
		}
		var ans struct {
			Status int             `json:"status"`
			Answer json.RawMessage `json:"answer"`
		}
		if err := json.Unmarshal(lines.Bytes(), &ans); err != nil {
			return nil, fmt.Errorf("the store helper's answer to %s is not {\"status\", \"answer\"}: %q", kind, lines.Text())
		}
		if ans.Status != 0 {
			return nil, fmt.Errorf("the application refused %s (status %d)", kind, ans.Status)
		}
		return ans.Answer, nil
	}
}
