//go:build tokenstores

package tokenstores

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/tests/internal/fixturebin"
)

// dpopRunFor is the calling time of TestSharedGrantDPoP: two access token
// periods, so the grant is refreshed by whichever process meets the
// expiry first, with the key another process generated.
const dpopRunFor = 2 * tokenPeriod

// TestSharedGrantDPoP: Go processes without a configured DPoP key
// (auth.dpop: true: each generates its own) share one DPoP-bound grant on
// each store, against the strict server in -dpop mode, which binds tokens
// to the key of the first redemption's proof (cnf.jkt) and refuses a
// refresh token or an access token presented with a proof by another key.
// The first redeemer stores its key with the grant; the others adopt grant
// and key, and every later refresh, whoever runs it, is signed with that
// key. Zero reuses, zero revocations, zero proofs by another key, every
// call succeeds. Without the key in the record, a second process presents
// the grant with its own key and the server refuses it.
func TestSharedGrantDPoP(t *testing.T) {
	for _, st := range stores() {
		t.Run(st.name, func(t *testing.T) {
			fixture, goWorker := binaries(t)
			base, stop, err := fixturebin.Serve(fixture, "-strict-refresh", "-dpop", "-initial-refresh-token", "rt-0", "-client-secret=",
				"-token-period-ms", strconv.Itoa(int(tokenPeriod.Milliseconds())), "-expires-in", "0", "-reuse-grace-ms", "0")
			require.NoError(t, err)
			t.Cleanup(stop)

			tokenStore := st.spec(t, "dpop")
			cfg := clientConfig(base, tokenStore)
			cfg["auth"].(map[string]any)["dpop"] = true
			path := writeJSON(t, t.TempDir(), "client.json", cfg)
			start := time.Now().Add(startDelay)
			until := start.Add(dpopRunFor)
			startMS, untilMS := strconv.FormatInt(start.UnixMilli(), 10), strconv.FormatInt(until.UnixMilli(), 10)
			var workers []*worker
			for i := 0; i < 3; i++ {
				workers = append(workers, spawn(t, "go", exec.Command(goWorker, "-config", path, "-threads", "2", "-start-at", startMS, "-until", untilMS)))
			}
			ctx, cancel := context.WithTimeout(context.Background(), startDelay+dpopRunFor+60*time.Second)
			defer cancel()
			for _, w := range workers {
				select {
				case <-w.done:
					r := requireAllCalls(t, w)
					t.Logf("go worker: %d calls", r.OK)
				case <-ctx.Done():
					t.Fatal("a worker is still running")
				}
			}

			s := statsOf(t, base)
			t.Logf("strict server: %+v", s)
			require.Zero(t, s.WrongKey, "the grant was never presented with another key")
			require.Zero(t, s.Reuses, "no refresh token redeemed twice")
			require.Zero(t, s.Revocations, "no grant revoked")
			require.Zero(t, s.Refused, "no dead refresh token presented")
			require.Positive(t, s.Redemptions)
			require.LessOrEqual(t, s.Redemptions, int((startDelay+dpopRunFor)/tokenPeriod)+2, "about one redemption per expiry")

			if st.name == "file" {
				requireStoredKey(t, tokenStore["path"].(string))
			}
		})
	}
}

// requireStoredKey: the file store (mode 0600) holds the grant with its
// key's thumbprint and the key.
func requireStoredKey(t *testing.T, path string) {
	info, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	data, err := os.ReadFile(filepath.Clean(path))
	require.NoError(t, err)
	var file struct {
		Collections struct {
			Grants map[string]struct {
				Document struct {
					TokenType string `json:"token_type"`
					DPoPJKT   string `json:"dpop_jkt"`
					DPoPKey   string `json:"dpop_key"`
				} `json:"document"`
			} `json:"grants"`
		} `json:"collections"`
	}
	require.NoError(t, json.Unmarshal(data, &file))
	require.Len(t, file.Collections.Grants, 1)
	for _, g := range file.Collections.Grants {
		require.Equal(t, "DPoP", g.Document.TokenType)
		require.NotEmpty(t, g.Document.DPoPJKT)
		require.Contains(t, g.Document.DPoPKey, "PRIVATE KEY")
	}
}
