package core

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lemonmcp/lemonmcp/transport"
	"github.com/stretchr/testify/require"
)

// freeWatch records what a client's callbacks saw relative to Free.
type freeWatch struct {
	freed    atomic.Bool  // Free has returned
	late     atomic.Int32 // callbacks that started after that
	running  atomic.Int32 // callbacks running now
	events   atomic.Int32
	dones    atomic.Int32
	accepted atomic.Int32
	destroys atomic.Int32
	appReqs  atomic.Int32
}

func (w *freeWatch) enter() {
	if w.freed.Load() {
		w.late.Add(1)
	}
	w.running.Add(1)
}

func (w *freeWatch) exit() { w.running.Add(-1) }

// floodingServer answers initialize, keeps every tools/call pending, and
// sends progress for it and log notifications until stop closes, so that
// events flow while the client is freed. Each "roots" call also puts a
// roots/list request to the client.
func floodingServer(t *testing.T) *fakeServer {
	s := newFakeServer(t, "2025-11-25", defaultCaps())
	s.handle("tools/call", func(s *fakeServer, m wireMsg) reply {
		var p struct {
			Name string `json:"name"`
			Meta struct {
				Token json.RawMessage `json:"progressToken"`
			} `json:"_meta"`
		}
		_ = json.Unmarshal(m.Params, &p)
		if p.Name == "roots" {
			s.write(map[string]any{"jsonrpc": "2.0", "id": "r" + string(m.ID), "method": "roots/list"})
		}
		go func() {
			for i := 0; ; i++ {
				select {
				case <-s.stop:
					return
				case <-time.After(200 * time.Microsecond):
				}
				if len(p.Meta.Token) > 0 {
					s.write(map[string]any{"jsonrpc": "2.0", "method": "notifications/progress",
						"params": map[string]any{"progressToken": p.Meta.Token, "progress": i}})
				}
				s.write(map[string]any{"jsonrpc": "2.0", "method": "notifications/message",
					"params": map[string]any{"level": "info", "data": "tick"}})
			}
		}()
		return reply{none: true}
	})
	return s
}

// TestFreeRacesEveryMethod frees a busy client while goroutines call every
// method: when Free returns, no callback runs or starts again, every
// accepted call has completed, both destroys have run, and later calls get
// StatusInvalidHandle. Run it with -race.
func TestFreeRacesEveryMethod(t *testing.T) {
	var events int32
	for it := 0; it < 40; it++ {
		s := floodingServer(t)
		opts := testOptions()
		opts.Handlers.Roots, opts.Handlers.RootsListChange = true, true
		tr, peer := s.pairForTest()
		s.peer = peer
		c := New(opts, tr)
		go s.serve()
		var w freeWatch
		onEvent := func(string, []byte) {
			w.enter()
			defer w.exit()
			w.events.Add(1)
			_ = c.State()
		}
		c.SetEventHandler(onEvent, func() { w.destroys.Add(1) })
		var sets, setsAccepted atomic.Int32 // handlers replaced by the goroutines
		require.Nil(t, errOrNil(c.SetAppRequestHandler(func(id uint64, _ string, _ []byte) {
			w.enter()
			defer w.exit()
			w.appReqs.Add(1)
			_ = c.Respond(id, StatusOK, []byte(`{"roots":[]}`))
		}, func() { w.destroys.Add(1) })))
		require.Nil(t, errOrNil(c.Connect()))
		require.Nil(t, errOrNil(c.WaitReady(3*time.Second)))

		call := func(name string, progress bool) *Error {
			id, err := c.Call("tools/call", []byte(`{"name":"`+name+`"}`), CallOptions{Progress: progress}, func(uint64, Status, []byte) {
				w.enter()
				defer w.exit()
				w.dones.Add(1)
			})
			if err == nil {
				w.accepted.Add(1)
				if id%3 == 0 {
					_ = c.Cancel(id)
				}
			}
			return err
		}
		call("slow", true)
		var stop atomic.Bool
		var lateStatus atomic.Int32
		var wg sync.WaitGroup
		for g := 0; g < 4; g++ {
			wg.Add(1)
			go func(g int) {
				defer wg.Done()
				for i := g; !stop.Load(); i++ {
					after := w.freed.Load()
					var err *Error
					switch i % 7 {
					case 6:
						sets.Add(1)
						err = c.SetEventHandler(onEvent, func() { w.destroys.Add(1) })
						if err == nil {
							setsAccepted.Add(1)
							err = Errorf(StatusOK, "accepted")
						}
					case 0:
						err = call("slow", true)
					case 1:
						err = call("roots", false)
					case 2:
						err = c.Notify("notifications/roots/list_changed", nil)
					case 3:
						_, err = c.ServerInfo()
					case 4:
						err = c.Respond(12345, StatusOK, []byte(`{}`))
					default:
						_, err = c.Call("tools/call", []byte(`{"name":"x"}`), CallOptions{}, func(uint64, Status, []byte) {})
						if err == nil {
							err = Errorf(StatusOK, "accepted")
						}
					}
					if after && (err == nil || (err.Status != StatusInvalidHandle && err.Status != StatusNotFound)) {
						lateStatus.Add(1)
					}
					time.Sleep(100 * time.Microsecond)
				}
			}(g)
		}
		time.Sleep(time.Duration(1+it%10) * time.Millisecond)
		c.Free()
		running := w.running.Load()
		w.freed.Store(true)
		dones, destroys := w.dones.Load(), w.destroys.Load()
		time.Sleep(5 * time.Millisecond)
		stop.Store(true)
		wg.Wait()
		close(s.stop)
		<-s.done

		require.Zero(t, running, "iteration %d: callbacks still running when Free returned", it)
		require.Zero(t, w.late.Load(), "iteration %d: callbacks started after Free returned", it)
		// Every handler installed before Free was destroyed by the time it
		// returned; the ones refused after it are destroyed at once.
		require.GreaterOrEqual(t, destroys, 2+setsAccepted.Load(), "iteration %d: destroys when Free returned", it)
		require.Equal(t, 2+sets.Load(), w.destroys.Load(), "iteration %d: one destroy per registration", it)
		require.Equal(t, dones, w.dones.Load(), "iteration %d: completions after Free returned", it)
		require.Equal(t, w.accepted.Load(), w.dones.Load(), "iteration %d: accepted vs completed calls", it)
		require.Zero(t, lateStatus.Load(), "iteration %d: a call after Free did not fail with StatusInvalidHandle", it)
		events += w.events.Load()
	}
	require.Positive(t, events, "events flowed")
}

// TestFreeFromOwnCallback frees the client from its own callbacks, as the C
// layer does when lmcp_client_free is called there: no deadlock, pending
// calls complete before FreeFrom returns, and the freeing callback's own
// registration is destroyed once it returns.
func TestFreeFromOwnCallback(t *testing.T) {
	cases := []struct {
		name  string
		which string // "event" or "done"
	}{
		{"from an event callback", "event"},
		{"from a done callback", "done"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := floodingServer(t)
			c := readyClient(t, s, testOptions())
			var freeing atomic.Bool // not sync.Once: the completions FreeFrom runs call free again
			var w freeWatch
			freedIn := make(chan [2]int32, 1)
			// The calls below are started in a loop; a progress event of the
			// first can arrive before the third is started, and freeing then
			// would fail the later Call. The event callback frees only once
			// all three are accepted (the server keeps sending progress).
			var allAccepted atomic.Bool
			free := func() {
				if freeing.CompareAndSwap(false, true) {
					c.FreeFrom(FreeCaller{Callbacks: 1, Delivering: true})
					freedIn <- [2]int32{w.dones.Load(), w.destroys.Load()}
				}
			}
			c.SetEventHandler(func(kind string, _ []byte) {
				if tc.which == "event" && kind == "progress" && allAccepted.Load() {
					free()
				}
			}, func() { w.destroys.Add(1) })
			for i := 0; i < 3; i++ {
				_, err := c.Call("tools/call", []byte(`{"name":"slow"}`), CallOptions{Progress: true}, func(_ uint64, _ Status, _ []byte) {
					w.dones.Add(1)
					if tc.which == "done" {
						free()
					}
				})
				require.Nil(t, errOrNil(err))
			}
			allAccepted.Store(true)
			if tc.which == "done" {
				_, _ = s.waitFor(func(m wireMsg) bool { return m.Method == "tools/call" })
				id := c.nextCallID.Load()
				require.Nil(t, errOrNil(c.Cancel(id)))
			}
			var got [2]int32
			select {
			case got = <-freedIn:
			case <-time.After(5 * time.Second):
				t.Fatal("FreeFrom did not return")
			}
			require.EqualValues(t, 3, got[0], "every call completed before FreeFrom returned")
			wantDestroys := int32(0) // the event registration's own callback is still running
			if tc.which == "done" {
				wantDestroys = 1
			}
			require.Equal(t, wantDestroys, got[1])
			require.Eventually(t, func() bool { return w.destroys.Load() == 1 }, 3*time.Second, time.Millisecond)
		})
	}
}

// TestPanicPoisonsClient makes a callback panic in each of the library's
// goroutines that run host code: the panic is recovered, the client is
// poisoned, and an "error" log event names the panic value and where it
// happened, with a stack summary.
func TestPanicPoisonsClient(t *testing.T) {
	cases := []struct {
		name  string
		where string
		force func(t *testing.T, r *hostRig, boom func())
	}{
		{"done callback", "a callback delivery", func(t *testing.T, r *hostRig, boom func()) {
			_, err := r.c.Call("tools/call", []byte(`{"name":"echo","arguments":{"text":"x"}}`), CallOptions{}, func(uint64, Status, []byte) { boom() })
			require.Nil(t, errOrNil(err))
		}},
		{"app request callback", "a app request callback", func(t *testing.T, r *hostRig, boom func()) {
			r.c.hosts.Load().Handler = func(uint64, string, []byte) { boom() }
			r.request("roots/list", nil)
		}},
		{"export", "lmcp_client_call", func(t *testing.T, r *hostRig, boom func()) {
			// What a C export's deferred recovery does (capi.recoverInto).
			func() {
				defer func() { r.c.Recovered(recover(), "lmcp_client_call") }()
				boom()
			}()
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newHostRig(t, func(o *Options) { o.Handlers.Roots = true })
			boom := func() { panic("boom-value") }
			tc.force(t, r, boom)
			require.Eventually(t, func() bool { return r.c.Poisoned() != nil }, 3*time.Second, time.Millisecond)
			perr := r.c.Poisoned()
			require.Equal(t, StatusInternal, perr.Status)
			require.Contains(t, perr.Message, "poisoned by an earlier internal error")
			require.Contains(t, perr.Message, tc.where)
			var report string
			require.Eventually(t, func() bool {
				for _, d := range r.ev.all("log") {
					if strings.Contains(string(d), "boom-value") {
						report = string(d)
						return true
					}
				}
				return false
			}, 3*time.Second, time.Millisecond)
			require.Contains(t, report, `"level":"error"`)
			require.Contains(t, report, "internal error in "+tc.where)
			require.Contains(t, report, "stack: ")
		})
	}
}

// startGate holds a transport's Start until released, so that a test can
// free or close the client while Connect is starting it.
type startGate struct {
	transport.Transport
	entered chan struct{}
	release chan struct{}
}

func (g *startGate) Start(ctx context.Context, sink transport.Sink) error {
	close(g.entered)
	<-g.release
	return g.Transport.Start(ctx, sink)
}

// TestStopWhileConnecting frees or closes a client while Connect is starting
// its transport: the transport Connect then starts is closed, not left
// running, and Connect says why.
func TestStopWhileConnecting(t *testing.T) {
	cases := []struct {
		name string
		stop func(c *Client)
		want Status
	}{
		{"free", func(c *Client) { c.Free() }, StatusInvalidHandle},
		{"close", func(c *Client) { go c.Close(2 * time.Second) }, StatusInvalidState},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newFakeServer(t, "2025-11-25", defaultCaps())
			tr, peer := s.pairForTest()
			s.peer = peer
			g := &startGate{Transport: tr, entered: make(chan struct{}), release: make(chan struct{})}
			c := New(testOptions(), g)
			go s.serve()
			t.Cleanup(func() { c.Free(); close(s.stop); <-s.done })
			done := make(chan *Error, 1)
			go func() { done <- c.Connect() }()
			<-g.entered
			tc.stop(c)
			if tc.name == "close" {
				require.Eventually(t, func() bool { return c.State() == StateClosing }, 3*time.Second, time.Millisecond)
			}
			close(g.release)
			err := <-done
			require.NotNil(t, err)
			require.Equal(t, tc.want, err.Status, err.Message)
			select {
			case <-c.trClosed:
			case <-time.After(3 * time.Second):
				t.Fatal("the transport started during " + tc.name + " was left open")
			}
		})
	}
}
