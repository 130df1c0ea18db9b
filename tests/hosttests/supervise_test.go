package hosttests

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/config"
	"github.com/lemonmcp/lemonmcp/core"
)

// recorder keeps a client's events.
type recorder struct {
	mu     sync.Mutex
	events []string
	ch     chan string
}

func newRecorder() *recorder { return &recorder{ch: make(chan string, 256)} }

func (r *recorder) handle(kind string, payload []byte) {
	if kind == "log" || kind == "notification" {
		return
	}
	r.mu.Lock()
	r.events = append(r.events, kind+" "+string(payload))
	r.mu.Unlock()
	select {
	case r.ch <- kind:
	default:
	}
}

// waitFor waits for an event of kind.
func (r *recorder) waitFor(t *testing.T, kind string, within time.Duration) {
	t.Helper()
	deadline := time.After(within)
	for {
		select {
		case k := <-r.ch:
			if k == kind {
				return
			}
		case <-deadline:
			r.mu.Lock()
			defer r.mu.Unlock()
			t.Fatalf("no %q event within %s; events: %v", kind, within, r.events)
		}
	}
}

func (r *recorder) all() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.events...)
}

// supervised starts a client whose config has a restart policy.
func supervised(t *testing.T, command string, args []string, restart string) (*core.Client, *recorder) {
	t.Helper()
	argv, _ := json.Marshal(args)
	cfg := fmt.Sprintf(`{"transport":{"type":"stdio","command":%q,"args":%s},"restart":%s,
		"timeouts":{"ready_ms":3000,"call_ms":10000,"close_grace_ms":300}}`, command, argv, restart)
	p, perr := config.Parse([]byte(cfg), "test")
	require.Nil(t, errOrNil(perr))
	c := core.New(p.Options, p.Transport)
	rec := newRecorder()
	c.SetEventHandler(rec.handle, nil)
	require.Nil(t, errOrNil(c.Connect()))
	t.Cleanup(func() {
		c.Close(5 * time.Second)
		c.Free()
	})
	return c, rec
}

func echo(c *core.Client, text string) ([]byte, *core.Error) {
	return c.CallSync("tools/call", []byte(`{"name":"echo","arguments":{"text":"`+text+`"}}`), core.CallOptions{})
}

func TestSupervisedClientRestartsAfterACrash(t *testing.T) {
	before := fixtureProcesses()
	c, rec := supervised(t, fixtureBin, nil, `{"backoff_ms":20,"max_backoff_ms":100}`)
	require.Nil(t, errOrNil(c.WaitReady(5*time.Second)))

	_, err := c.CallSync("tools/call", []byte(`{"name":"crash","arguments":{}}`), core.CallOptions{})
	require.NotNil(t, err)
	require.Equal(t, core.StatusClosed, err.Status, err.Message)
	require.Contains(t, err.Message, "not retried")

	rec.waitFor(t, "ready", 10*time.Second)
	res, err := echo(c, "again")
	require.Nil(t, errOrNil(err))
	require.Contains(t, string(res), "again")
	require.Equal(t, 1, c.Restarts())
	require.Equal(t, core.StateReady, c.State())

	var restarting string
	for _, e := range rec.all() {
		if strings.HasPrefix(e, "restarting ") {
			restarting = e
		}
	}
	require.Contains(t, restarting, `"attempt":1`)
	require.Contains(t, restarting, `"exit_code":3`)
	require.Contains(t, restarting, `"delay_ms":20`)

	require.Nil(t, errOrNil(c.Close(5*time.Second)))
	require.Equal(t, before, fixtureProcesses(), "no fixture process outlives the client")
}

func TestSupervisedCrashUnder16WayLoad(t *testing.T) {
	before := fixtureProcesses()
	c, rec := supervised(t, fixtureBin, nil, `{"backoff_ms":20,"max_backoff_ms":100,"max_restarts":5}`)
	require.Nil(t, errOrNil(c.WaitReady(5*time.Second)))

	const workers, perWorker = 16, 8
	var completions, accepted, ok, closed atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < perWorker; i++ {
				done := make(chan struct{})
				var once atomic.Int32
				_, err := c.Call("tools/call", []byte(`{"name":"slow","arguments":{"ms":40}}`), core.CallOptions{},
					func(_ uint64, st core.Status, _ []byte) {
						if once.Add(1) != 1 {
							completions.Add(1000) // a second completion: caught below
						}
						completions.Add(1)
						switch st {
						case core.StatusOK:
							ok.Add(1)
						case core.StatusClosed:
							closed.Add(1)
						}
						close(done)
					})
				if err != nil {
					continue // refused before it was accepted: never completes
				}
				accepted.Add(1)
				<-done
			}
		}()
	}
	time.Sleep(60 * time.Millisecond)
	_, err := c.CallSync("tools/call", []byte(`{"name":"crash","arguments":{}}`), core.CallOptions{})
	require.NotNil(t, err)
	wg.Wait()

	require.Equal(t, accepted.Load(), completions.Load(), "every accepted call completes exactly once")
	require.Equal(t, accepted.Load(), ok.Load()+closed.Load(), "calls end either answered or closed by the crash")
	require.Positive(t, closed.Load(), "the calls in flight at the crash fail with LMCP_E_CLOSED")
	require.Positive(t, ok.Load())
	rec.waitFor(t, "ready", 10*time.Second)
	_, err = echo(c, "back")
	require.Nil(t, errOrNil(err))
	require.Nil(t, errOrNil(c.Close(5*time.Second)))
	require.Equal(t, before, fixtureProcesses(), "no orphan process")
	t.Logf("16-way load: %d calls accepted, %d answered, %d closed by the crash", accepted.Load(), ok.Load(), closed.Load())
}

func TestSupervisedGivesUpAfterMaxRestarts(t *testing.T) {
	tests := []struct {
		name    string
		command string
		args    []string
		reason  string
	}{
		{"exits at once", fixtureBin, []string{"-exit-after-ms", "1"}, "gave up after 2 restarts"},
		{"never answers initialize", fixtureBin, []string{"-no-init"}, "gave up after 2 restarts"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := fixtureProcesses()
			argv, _ := json.Marshal(tc.args)
			cfg := fmt.Sprintf(`{"transport":{"type":"stdio","command":%q,"args":%s},
				"restart":{"max_restarts":2,"backoff_ms":10,"window_ms":60000},
				"timeouts":{"ready_ms":300,"close_grace_ms":200}}`, tc.command, argv)
			p, perr := config.Parse([]byte(cfg), "test")
			require.Nil(t, errOrNil(perr))
			c := core.New(p.Options, p.Transport)
			rec := newRecorder()
			c.SetEventHandler(rec.handle, nil)
			defer c.Free()
			require.Nil(t, errOrNil(c.Connect()))
			rec.waitFor(t, "closed", 15*time.Second)
			require.Equal(t, core.StateClosed, c.State())
			require.Equal(t, 2, c.Restarts())
			werr := c.WaitReady(time.Second)
			require.NotNil(t, werr)
			require.Contains(t, werr.Message, tc.reason)
			require.Nil(t, errOrNil(c.Close(5*time.Second)))
			require.Eventually(t, func() bool { return fixtureProcesses() == before }, 5*time.Second, 20*time.Millisecond)
		})
	}
}

func TestCallsWhileRestarting(t *testing.T) {
	c, rec := supervised(t, fixtureBin, nil, `{"backoff_ms":300,"max_backoff_ms":300}`)
	require.Nil(t, errOrNil(c.WaitReady(5*time.Second)))
	_, err := c.CallSync("tools/call", []byte(`{"name":"crash","arguments":{}}`), core.CallOptions{})
	require.NotNil(t, err)
	rec.waitFor(t, "restarting", 5*time.Second)
	require.True(t, c.Restarting())

	_, err = c.CallSync("tools/call", []byte(`{"name":"echo","arguments":{"text":"x"}}`), core.CallOptions{FailIfRestarting: true})
	require.NotNil(t, err)
	require.Equal(t, core.StatusInvalidState, err.Status)
	require.Contains(t, err.Message, "restarting")

	res, err := echo(c, "waited")
	require.Nil(t, errOrNil(err), "a call made while restarting waits for the server")
	require.Contains(t, string(res), "waited")
}

func TestBareClientIsNotSupervised(t *testing.T) {
	c, rec := supervised(t, fixtureBin, nil, `false`)
	require.Nil(t, errOrNil(c.WaitReady(5*time.Second)))
	_, err := c.CallSync("tools/call", []byte(`{"name":"crash","arguments":{}}`), core.CallOptions{})
	require.NotNil(t, err)
	rec.waitFor(t, "closed", 5*time.Second)
	require.Equal(t, core.StateClosed, c.State())
	require.Equal(t, 0, c.Restarts())
}

func TestCallsWhileRestartingWaitAtMostReadyMS(t *testing.T) {
	argv, _ := json.Marshal([]string{})
	cfg := fmt.Sprintf(`{"transport":{"type":"stdio","command":%q,"args":%s},"restart":{"backoff_ms":3000,"max_backoff_ms":3000},
		"timeouts":{"ready_ms":200,"call_ms":10000,"close_grace_ms":300}}`, fixtureBin, argv)
	p, perr := config.Parse([]byte(cfg), "test")
	require.Nil(t, errOrNil(perr))
	c := core.New(p.Options, p.Transport)
	rec := newRecorder()
	c.SetEventHandler(rec.handle, nil)
	require.Nil(t, errOrNil(c.Connect()))
	t.Cleanup(func() {
		c.Close(5 * time.Second)
		c.Free()
	})
	require.Nil(t, errOrNil(c.WaitReady(5*time.Second)))
	_, err := c.CallSync("tools/call", []byte(`{"name":"crash","arguments":{}}`), core.CallOptions{})
	require.NotNil(t, err)
	rec.waitFor(t, "restarting", 5*time.Second)
	_, err = echo(c, "late")
	require.NotNil(t, err)
	require.Equal(t, core.StatusTimeout, err.Status)
	require.Contains(t, err.Message, "not ready again within 200 ms")
}
