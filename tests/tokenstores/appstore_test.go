//go:build tokenstores

package tokenstores

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/config"
	"github.com/lemonmcp/lemonmcp/core"
	docstore "github.com/lemonmcp/lemonmcp/store"
	"github.com/lemonmcp/lemonmcp/store/storetest"
)

// appClient is a client whose grant is in the application's store s
// (auth.token_store {"type": "app"}), s answering store_load / store_save
// for several clients as one database would.
func appClient(t *testing.T, base string, s *storetest.Application) *core.Client {
	cfg := clientConfig(base, map[string]any{"type": "app"})
	raw, err := json.Marshal(cfg)
	require.NoError(t, err)
	p, perr := config.Parse(raw, "test")
	require.Nil(t, perr)
	c := core.New(p.Options, p.Transport)
	t.Cleanup(func() { c.Close(5 * time.Second); c.Free() })
	require.Nil(t, c.SetAppRequestHandler(func(id uint64, kind string, payload []byte) {
		go func() {
			answer, err := s.Ask(context.Background(), kind, payload)
			if err != nil {
				_ = c.Respond(id, core.StatusInvalidArgument, nil)
				return
			}
			_ = c.Respond(id, core.StatusOK, answer)
		}()
	}, nil))
	return c
}

// TestAppStoreVersioned: clients that share the application's own
// versioned store (as processes sharing its database would) never redeem a
// refresh token twice.
func TestAppStoreVersioned(t *testing.T) {
	base := strictServer(t, 0)
	s := storetest.NewApplication()
	var clients []*core.Client
	for i := 0; i < 4; i++ {
		clients = append(clients, appClient(t, base, s))
	}
	until := time.Now().Add(5 * time.Second)
	var wg sync.WaitGroup
	errs := make(chan *core.Error, 64)
	for _, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := c.Connect(); err != nil {
				errs <- err
				return
			}
			if err := c.WaitReady(30 * time.Second); err != nil {
				errs <- err
				return
			}
			for time.Now().Before(until) {
				if _, err := c.CallSync("tools/call", []byte(`{"name":"echo","arguments":{"text":"app"}}`), core.CallOptions{}); err != nil {
					errs <- err
					return
				}
				time.Sleep(100 * time.Millisecond) // paced: each client still meets every expiry
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.Nil(t, err)
	}
	st := statsOf(t, base)
	require.Zero(t, st.Reuses)
	require.Zero(t, st.Revocations)
	require.Zero(t, st.Refused)
	require.Positive(t, st.Redemptions)
	require.LessOrEqual(t, st.Redemptions, int(5*time.Second/tokenPeriod)+2)
}

// TestAppStoreContractThroughBindings: the application's store, answered
// by each binding's own code (pyappstore.py: the Python dispatcher and
// store=; exappstore.exs: LemonMCP.Store), keeps the store's contract,
// sealed or not, and every update of goroutines updating at once is kept.
func TestAppStoreContractThroughBindings(t *testing.T) {
	helpers := map[string]func() *exec.Cmd{
		"python": func() *exec.Cmd {
			cmd := exec.Command(python(), "pyappstore.py")
			cmd.Env = pythonEnv(t)
			return cmd
		},
		"elixir": func() *exec.Cmd {
			cmd := exec.Command("elixir", "-pa", exEbin(t), "exappstore.exs")
			// One scheduler that never spins idle, as spawnEx's BEAM.
			cmd.Env = append(os.Environ(), "ELIXIR_ERL_OPTIONS=+S 1:1 +sbwt none +sbwtdcpu none +sbwtdio none")
			return cmd
		},
	}
	env := storetest.SetKey(t, "LEMONMCP_TEST_APP_STORE_KEY")
	for name, helper := range helpers {
		t.Run(name, func(t *testing.T) {
			app := docstore.NewApp(storetest.ProcessAsk(t, helper()))
			sealed, err := docstore.NewSealed(app, docstore.Encryption{KeyEnv: env})
			require.NoError(t, err)
			for variant, s := range map[string]docstore.Store{"app": app, "app+sealed": sealed} {
				t.Run(variant, func(t *testing.T) {
					storetest.Contract(t, s)
					storetest.ConcurrentUpdates(t, s)
				})
			}
		})
	}
}
