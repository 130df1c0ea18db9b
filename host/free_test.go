package host

import (
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lemonmcp/lemonmcp/core"
	"github.com/lemonmcp/lemonmcp/internal/callbackgate"
	"github.com/stretchr/testify/require"
)

// newIdleHost is a host of one disabled server: nothing starts, and the
// tests drive its gate through emit.
func newIdleHost(t *testing.T) *Host {
	h, err := Parse([]byte(`{"mcpServers":{"off":{"command":"/nonexistent/lmcp-test","enabled":false}}}`), "test")
	require.Nil(t, err)
	t.Cleanup(h.Free)
	return h
}

// TestFreeWaitsForRunningCallbacks: Free returns only once the event
// callback running on the delivery goroutine returned and the handler's
// destroy ran; no callback starts afterwards.
func TestFreeWaitsForRunningCallbacks(t *testing.T) {
	h := newIdleHost(t)
	entered, release := make(chan struct{}), make(chan struct{})
	var running, late, destroys atomic.Int32
	var freed atomic.Bool
	h.SetEventHandler(func(kind string, _ []byte) {
		if freed.Load() {
			late.Add(1)
		}
		running.Add(1)
		defer running.Add(-1)
		if kind == "block" {
			close(entered)
			<-release
		}
	}, func() { destroys.Add(1) })
	h.emit("block", []byte(`{}`))
	for i := 0; i < 10; i++ {
		h.emit("queued", []byte(`{}`))
	}
	<-entered
	freeReturned := make(chan struct{})
	go func() {
		h.Free()
		freed.Store(true)
		close(freeReturned)
	}()
	select {
	case <-freeReturned:
		t.Fatal("Free returned while a callback was running")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	<-freeReturned
	require.Zero(t, running.Load(), "callbacks running when Free returned")
	require.EqualValues(t, 1, destroys.Load(), "the destroy ran before Free returned")
	h.emit("after", []byte(`{}`))
	time.Sleep(20 * time.Millisecond)
	require.Zero(t, late.Load(), "callbacks started after Free returned")
}

// TestFreeFromOwnCallback: Free called from the host's own event callback
// (on its delivery goroutine) returns without waiting for that callback, and
// the handler's destroy runs once the callback returned.
func TestFreeFromOwnCallback(t *testing.T) {
	h := newIdleHost(t)
	var destroys atomic.Int32
	var inCallback atomic.Bool
	returned := make(chan int32, 1)
	h.SetEventHandler(func(string, []byte) {
		inCallback.Store(true)
		h.FreeFrom(core.FreeCaller{Callbacks: 1, Delivering: true})
		returned <- destroys.Load()
		inCallback.Store(false)
	}, func() {
		require.False(t, inCallback.Load())
		destroys.Add(1)
	})
	h.emit("free", []byte(`{}`))
	select {
	case n := <-returned:
		require.Zero(t, n, "the calling callback's destroy waits for it to return")
	case <-time.After(5 * time.Second):
		t.Fatal("Free from the host's own callback deadlocked")
	}
	require.Eventually(t, func() bool { return destroys.Load() == 1 }, 5*time.Second, time.Millisecond)
}

// TestFreeRunsOwedCompletions: a completion owed by an accepted call is
// delivered before Free returns, also when Free runs on the delivery
// goroutine (which then delivers it itself).
func TestFreeRunsOwedCompletions(t *testing.T) {
	for _, fromCallback := range []bool{false, true} {
		t.Run(map[bool]string{false: "from another goroutine", true: "from the delivery goroutine"}[fromCallback], func(t *testing.T) {
			h := newIdleHost(t)
			var dones atomic.Int32
			h.out.Owe() // an accepted call whose client completes it later
			go func() {
				time.Sleep(20 * time.Millisecond)
				h.out.Push(func() { dones.Add(1) }, callbackgate.Completion)
			}()
			if !fromCallback {
				h.Free()
				require.EqualValues(t, 1, dones.Load())
				return
			}
			seen := make(chan int32, 1)
			h.SetEventHandler(func(string, []byte) {
				h.FreeFrom(core.FreeCaller{Callbacks: 1, Delivering: true})
				seen <- dones.Load()
			}, nil)
			h.emit("free", []byte(`{}`))
			require.EqualValues(t, 1, <-seen)
		})
	}
}

// TestPanicInCallbackPoisonsHost: a panic on the host's delivery goroutine
// is recovered, poisons the host and is reported as an "error" log event.
func TestPanicInCallbackPoisonsHost(t *testing.T) {
	h := newIdleHost(t)
	var mu sync.Mutex
	var logs []string
	h.SetEventHandler(func(kind string, payload []byte) {
		if kind == "panic" {
			panic("deliberate")
		}
		mu.Lock()
		logs = append(logs, kind+" "+string(payload))
		mu.Unlock()
	}, nil)
	require.Nil(t, h.Poisoned())
	h.emit("panic", []byte(`{}`))
	require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(logs) == 1 }, 5*time.Second, time.Millisecond)
	require.NotNil(t, h.Poisoned())
	require.Equal(t, core.StatusInternal, h.Poisoned().Status)
	require.Contains(t, h.Poisoned().Message, "poisoned by an earlier internal error (in a host callback delivery)")
	mu.Lock()
	defer mu.Unlock()
	require.True(t, strings.HasPrefix(logs[0], `log {"server":null,"level":"error","source":"library"`), logs[0])
	require.Contains(t, logs[0], "internal error in a host callback delivery: deliberate")
	require.Contains(t, logs[0], "TestPanicInCallbackPoisonsHost", "the stack summary names where it panicked")
}

// TestListChangedOnlyOnChange: list_changed is emitted when what a server
// contributes to an aggregated list changed, never for the same list again.
func TestListChangedOnlyOnChange(t *testing.T) {
	h := newIdleHost(t)
	var mu sync.Mutex
	var got []string
	h.SetEventHandler(func(kind string, payload []byte) {
		mu.Lock()
		got = append(got, kind+" "+string(payload))
		mu.Unlock()
	}, nil)
	s := h.servers[0]
	s.cfg.Deny = []string{"hidden"}
	a := []item{{name: "a", raw: []byte(`{"name":"a"}`)}}
	ab := append(a, item{name: "b", raw: []byte(`{"name":"b"}`)})
	withHidden := append(a, item{name: "hidden", raw: []byte(`{"name":"hidden"}`)})
	steps := []struct {
		name  string
		kind  listKind
		items []item
		emits bool
	}{
		{"first tools", listTools, a, true},
		{"same tools again", listTools, a, false},
		{"a denied tool added", listTools, withHidden, false},
		{"a tool added", listTools, ab, true},
		{"prompts are their own list", listPrompts, a, true},
		{"empty prompts list", listPrompts, nil, true},
		{"still empty", listPrompts, nil, false},
	}
	for i, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			mu.Lock()
			before := len(got)
			mu.Unlock()
			s.announce(st.kind, s.fingerprint(st.kind, s.listThroughGuards(st.kind, st.items)))
			marker := "marker" + itoa(i)
			h.emit(marker, []byte(`{}`)) // everything emitted before it is delivered by then
			require.Eventually(t, func() bool {
				mu.Lock()
				defer mu.Unlock()
				return len(got) > 0 && strings.HasPrefix(got[len(got)-1], marker+" ")
			}, 5*time.Second, time.Millisecond, "step %d", i)
			mu.Lock()
			defer mu.Unlock()
			emitted := got[before : len(got)-1]
			if !st.emits {
				require.Empty(t, emitted)
				return
			}
			require.Equal(t, []string{`list_changed {"list":"` + listKinds[st.kind].key + `","server":"off"}`}, emitted)
		})
	}
}

// TestPanicInBackgroundGoroutinePoisonsHost: a panic on one of the host's
// own goroutines (a list refresh) poisons the host and is reported.
func TestPanicInBackgroundGoroutinePoisonsHost(t *testing.T) {
	h := newIdleHost(t)
	logs := make(chan string, 1)
	h.SetEventHandler(func(kind string, payload []byte) {
		if kind == "log" {
			logs <- string(payload)
		}
	}, nil)
	h.background("the tools refresh of server off", func() { panic("from the background") })
	h.bg.Wait()
	require.NotNil(t, h.Poisoned())
	require.Contains(t, h.Poisoned().Message, "(in the tools refresh of server off)")
	require.Contains(t, <-logs, "internal error in the tools refresh of server off: from the background")
}

// TestLogEventsAreBounded: log events waiting for a slow application are
// bounded as a client's are; the ones dropped are counted in one warning,
// and other events are never dropped.
func TestLogEventsAreBounded(t *testing.T) {
	const extra = 3
	h := newIdleHost(t)
	entered, release := make(chan struct{}), make(chan struct{})
	var mu sync.Mutex
	kinds := map[string]int{}
	var warnings []string
	h.SetEventHandler(func(kind string, payload []byte) {
		if kind == "block" {
			close(entered)
			<-release
			return
		}
		mu.Lock()
		defer mu.Unlock()
		kinds[kind]++
		if kind == "log" && strings.Contains(string(payload), `"level":"warning"`) {
			warnings = append(warnings, string(payload))
		}
	}, nil)
	h.emit("block", []byte(`{}`))
	<-entered
	for range callbackgate.MaxQueuedLogs + extra {
		h.emit("log", []byte(`{"server":"s","level":"info","source":"stderr","message":"line"}`))
	}
	h.emit("list_changed", []byte(`{"server":"s","list":"tools"}`))
	close(release)
	require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(warnings) == 1 }, 10*time.Second, time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, callbackgate.MaxQueuedLogs+1, kinds["log"], "the bound, then the warning")
	require.Equal(t, 1, kinds["list_changed"], "other events are never dropped")
	require.Contains(t, warnings[0], `"server":null`)
	require.Contains(t, warnings[0], "dropped 3 log events because the application fell behind")
}
