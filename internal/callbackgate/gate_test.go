package callbackgate

import (
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// rig is a gate with recording hooks.
type rig struct {
	g       Gate
	mu      sync.Mutex
	reports []string
	dropped chan int // what Hooks.Dropped was told
}

func newRig() *rig {
	r := &rig{dropped: make(chan int, 16)}
	r.g.Init(Hooks{
		Owner:         "client",
		DeliveryWhere: "a callback delivery",
		DestroyWhere:  "a destroy callback",
		Report: func(text string) {
			r.mu.Lock()
			r.reports = append(r.reports, text)
			r.mu.Unlock()
		},
		Dropped: func(n int) { r.dropped <- n },
	})
	return r
}

// block queues a delivery that holds the delivery goroutine until release
// is closed; it returns once that delivery is running.
func (r *rig) block() (release chan struct{}) {
	release = make(chan struct{})
	started := make(chan struct{})
	r.g.Push(func() { close(started); <-release }, Event)
	<-started
	return release
}

// settle waits until the queue has been worked off.
func (r *rig) settle() {
	done := make(chan struct{})
	r.g.Owe()
	r.g.Push(func() { close(done) }, Completion)
	<-done
}

func TestDeliveryOrderAndKinds(t *testing.T) {
	tests := []struct {
		name        string
		closeBefore bool     // close the gate while the deliveries wait
		want        []string // what ran, in order
	}{
		{"open gate delivers everything in order", false, []string{"e1", "l1", "d1", "e2", "d2"}},
		{"closed gate delivers completions only", true, []string{"d1", "d2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig()
			var mu sync.Mutex
			var got []string
			record := func(s string) func() {
				return func() { mu.Lock(); got = append(got, s); mu.Unlock() }
			}
			release := r.block()
			r.g.Owe()
			r.g.Owe()
			r.g.Push(record("e1"), Event)
			r.g.Push(record("l1"), Log)
			r.g.Push(record("d1"), Completion)
			r.g.Push(record("e2"), Event)
			if tt.closeBefore {
				r.g.Close()
			}
			r.g.Push(record("d2"), Completion)
			close(release)
			if tt.closeBefore {
				r.g.Drain(FreeCaller{})
			} else {
				r.settle()
			}
			mu.Lock()
			defer mu.Unlock()
			require.Equal(t, tt.want, got)
		})
	}
}

func TestLogBound(t *testing.T) {
	const extra = 7
	r := newRig()
	var logs atomic.Int64
	release := r.block()
	for range MaxQueuedLogs + extra {
		r.g.Push(func() { logs.Add(1) }, Log)
	}
	var events atomic.Int64
	r.g.Push(func() { events.Add(1) }, Event) // events are never dropped
	close(release)
	r.settle()
	require.Equal(t, int64(MaxQueuedLogs), logs.Load())
	require.Equal(t, int64(1), events.Load())
	// The notice comes once the queue has emptied, after the settling
	// completion.
	require.Equal(t, extra, <-r.dropped, "one notice counts the dropped logs")
	r.settle()
	require.Empty(t, r.dropped, "and only one")
}

func TestDrainWaitsForHostCode(t *testing.T) {
	tests := []struct {
		name string
		// owe makes Drain wait; settle (run on another goroutine after
		// Drain started) ends the wait.
		owe    func(g *Gate)
		settle func(g *Gate, ran *atomic.Bool)
	}{
		{"an owed completion pushed later", func(g *Gate) { g.Owe() }, func(g *Gate, ran *atomic.Bool) {
			g.Push(func() { ran.Store(true) }, Completion)
		}},
		{"an owed completion forgiven", func(g *Gate) { g.Owe() }, func(g *Gate, ran *atomic.Bool) {
			ran.Store(true)
			g.Forgive()
		}},
		{"a running app request", func(g *Gate) { require.True(t, g.Enter()) }, func(g *Gate, ran *atomic.Bool) {
			ran.Store(true)
			g.Exit()
		}},
		{"a held destroy", func(g *Gate) { g.Hold() }, func(g *Gate, ran *atomic.Bool) {
			ran.Store(true)
			g.Exit()
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig()
			tt.owe(&r.g)
			r.g.Close()
			var ran atomic.Bool
			drained := make(chan struct{})
			go func() {
				r.g.Drain(FreeCaller{})
				close(drained)
			}()
			tt.settle(&r.g, &ran)
			<-drained
			require.True(t, ran.Load(), "Drain returned before the host code it waits for")
			require.False(t, r.g.Enter(), "no app request starts once the gate is closed")
		})
	}
}

// TestDrainFromInsideADelivery: Free called from a completion on the
// delivery goroutine must not wait for itself, and runs the completions
// queued behind it before it returns.
func TestDrainFromInsideADelivery(t *testing.T) {
	r := newRig()
	var later atomic.Bool
	var seen atomic.Bool
	done := make(chan struct{})
	r.g.Owe()
	r.g.Owe()
	r.g.Push(func() {
		r.g.Close()
		r.g.Drain(FreeCaller{Callbacks: 1, Delivering: true})
		seen.Store(later.Load())
		close(done)
	}, Completion)
	r.g.Push(func() { later.Store(true) }, Completion)
	<-done
	require.True(t, seen.Load(), "the completion queued behind the freeing one ran before Drain returned")
}

// TestPushQuick: a quick completion runs on the pushing goroutine, before
// PushQuick returns, when nothing is queued or running; behind a running
// delivery it is queued in order; what is pushed while it runs comes
// after it; Drain waits for it; a panic in it poisons the owner and leaves
// the gate working.
func TestPushQuick(t *testing.T) {
	type recorder struct {
		mu  sync.Mutex
		got []string
	}
	rec := func(r *recorder, s string) func() {
		return func() { r.mu.Lock(); r.got = append(r.got, s); r.mu.Unlock() }
	}
	tests := []struct {
		name string
		// run pushes, and reports what had run when its PushQuick returned.
		run  func(r *rig, rc *recorder) []string
		want []string // what ran, in order, once the gate settled
		// atReturn is what had run when PushQuick returned.
		atReturn []string
	}{
		{"idle: on the caller, at once", func(r *rig, rc *recorder) []string {
			r.g.Owe()
			r.g.PushQuick(rec(rc, "q"))
			rc.mu.Lock()
			defer rc.mu.Unlock()
			return append([]string(nil), rc.got...)
		}, []string{"q"}, []string{"q"}},
		{"behind a running delivery: queued in order", func(r *rig, rc *recorder) []string {
			release := r.block()
			r.g.Push(rec(rc, "e1"), Event)
			r.g.Owe()
			r.g.PushQuick(rec(rc, "q"))
			rc.mu.Lock()
			at := append([]string(nil), rc.got...)
			rc.mu.Unlock()
			r.g.Push(rec(rc, "e2"), Event)
			close(release)
			return at
		}, []string{"e1", "q", "e2"}, nil},
		{"behind a queued delivery: queued in order", func(r *rig, rc *recorder) []string {
			release := r.block()
			r.g.Push(rec(rc, "e1"), Event)
			close(release) // the worker may or may not have taken e1 yet
			r.g.Owe()
			r.g.PushQuick(rec(rc, "q"))
			return nil
		}, []string{"e1", "q"}, nil},
		{"pushed while it runs: after it", func(r *rig, rc *recorder) []string {
			r.g.Owe()
			r.g.PushQuick(func() {
				r.g.Push(rec(rc, "e"), Event)
				rec(rc, "q")()
			})
			return nil
		}, []string{"q", "e"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig()
			rc := &recorder{}
			at := tt.run(r, rc)
			if tt.atReturn != nil || at != nil {
				require.Equal(t, tt.atReturn, at, "what had run when PushQuick returned")
			}
			r.settle()
			rc.mu.Lock()
			defer rc.mu.Unlock()
			require.Equal(t, tt.want, rc.got)
			require.Empty(t, r.reports)
		})
	}

	t.Run("Drain waits for it", func(t *testing.T) {
		r := newRig()
		inside, release := make(chan struct{}), make(chan struct{})
		var ran atomic.Bool
		r.g.Owe()
		go r.g.PushQuick(func() { close(inside); <-release; ran.Store(true) })
		<-inside
		r.g.Close()
		drained := make(chan struct{})
		go func() {
			r.g.Drain(FreeCaller{})
			close(drained)
		}()
		close(release)
		<-drained
		require.True(t, ran.Load(), "Drain returned while a quick completion ran")
	})

	t.Run("a panic poisons, the gate goes on", func(t *testing.T) {
		r := newRig()
		r.g.Owe()
		r.g.PushQuick(func() { panic("boom") })
		r.mu.Lock()
		require.Len(t, r.reports, 1)
		require.Contains(t, r.reports[0], "boom")
		r.mu.Unlock()
		var ran atomic.Bool
		r.g.Owe()
		r.g.PushQuick(func() { ran.Store(true) })
		require.True(t, ran.Load(), "the gate stayed running after the panic")
	})
}

func TestRegistration(t *testing.T) {
	tests := []struct {
		name string
		// run uses the registration; it returns how many destroys must
		// have run after it.
		run func(t *testing.T, g *Gate, reg *Registration[func()]) int32
	}{
		{"close without callbacks destroys at once", func(t *testing.T, g *Gate, reg *Registration[func()]) int32 {
			reg.Close()
			return 1
		}},
		{"close during a callback destroys after it", func(t *testing.T, g *Gate, reg *Registration[func()]) int32 {
			require.True(t, reg.Enter())
			reg.Close()
			require.False(t, reg.Enter(), "a closed registration starts no callback")
			reg.Exit()
			g.Close()
			g.Drain(FreeCaller{}) // waits for the destroy run on its own goroutine
			return 1
		}},
		{"a second close destroys nothing more", func(t *testing.T, g *Gate, reg *Registration[func()]) int32 {
			reg.Close()
			reg.Close()
			return 1
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig()
			var destroys atomic.Int32
			reg := NewRegistration(&r.g, func() {}, func() { destroys.Add(1) })
			want := tt.run(t, &r.g, reg)
			require.Equal(t, want, destroys.Load())
		})
	}
	t.Run("a nil registration is no handler", func(t *testing.T) {
		var reg *Registration[func()]
		require.False(t, reg.Enter())
		reg.Close()
	})
}

func boom() { panic("deliberate") }

func TestPoison(t *testing.T) {
	tests := []struct {
		name      string
		panicIn   func(r *rig)
		wantWhere string
	}{
		{"a delivery", func(r *rig) {
			r.g.Push(boom, Event)
			r.settle()
		}, "a callback delivery"},
		{"a destroy", func(r *rig) {
			NewRegistration(&r.g, func() {}, boom).Close()
		}, "a destroy callback"},
		{"the owner's goroutine", func(r *rig) {
			func() {
				defer r.g.Recover("a timer")
				boom()
			}()
		}, "a timer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig()
			require.Empty(t, r.g.Poisoned())
			tt.panicIn(r)
			require.Equal(t, "the client is unusable: it was poisoned by an earlier internal error (in "+tt.wantWhere+")", r.g.Poisoned())
			r.g.Poison("second", "elsewhere")
			require.Contains(t, r.g.Poisoned(), "(in "+tt.wantWhere+")", "the first panic names the poisoned state")
			r.mu.Lock()
			defer r.mu.Unlock()
			require.Len(t, r.reports, 2, "every panic is reported")
			report := r.reports[0]
			require.True(t, strings.HasPrefix(report, "internal error in "+tt.wantWhere+": deliberate (a bug: please report it); the client is poisoned"), report)
			stack := report[strings.Index(report, "stack: ")+len("stack: "):]
			require.True(t, strings.HasPrefix(stack, "callbackgate.boom (gate_test.go:"), "the stack starts where the panic happened: %s", stack)
		})
	}
}

func TestPanicReportIsBounded(t *testing.T) {
	report := panicReport(strings.Repeat("x", 5*maxPanicText), "here", "host")
	require.Contains(t, report, strings.Repeat("x", maxPanicText)+"...")
	require.NotContains(t, report, strings.Repeat("x", maxPanicText+1))
	require.Contains(t, report, "the host is poisoned")
}

func TestRecoveryFrame(t *testing.T) {
	tests := []struct {
		frame string
		skip  bool
	}{
		{"runtime.gopanic", true},
		{"callbackgate.(*Gate).Poison", true},
		{"callbackgate.(*Gate).Recover", true},
		{"core.(*Client).poison", true},
		{"core.(*Client).Panicked", true},
		{"main.recoverInto", true},
		{"host.TestPanicInCallbackPoisonsHost.func1", false},
		{"core.(*Client).emit.func1", false},
	}
	for _, tt := range tests {
		t.Run(tt.frame, func(t *testing.T) {
			require.Equal(t, tt.skip, recoveryFrame(tt.frame))
		})
	}
}

// TestEmit: an event goes to the handler in the slot when it is delivered,
// not to the one installed when it was queued.
func TestEmit(t *testing.T) {
	type handler func(kind string, payload []byte)
	tests := []struct {
		name    string
		install func(r *rig, slot *atomic.Pointer[Registration[handler]], record func(who string) handler)
		want    []string
	}{
		{"no handler", func(*rig, *atomic.Pointer[Registration[handler]], func(string) handler) {}, nil},
		{"a registration without a handler", func(r *rig, slot *atomic.Pointer[Registration[handler]], _ func(string) handler) {
			slot.Store(NewRegistration[handler](&r.g, nil, nil))
		}, nil},
		{"replaced while queued", func(r *rig, slot *atomic.Pointer[Registration[handler]], record func(string) handler) {
			slot.Store(NewRegistration(&r.g, record("old"), nil))
			release := r.block()
			Emit(&r.g, slot, "ev", []byte("x"), Event)
			slot.Swap(NewRegistration(&r.g, record("new"), nil)).Close()
			close(release)
		}, []string{"new ev x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig()
			var slot atomic.Pointer[Registration[handler]]
			var mu sync.Mutex
			var got []string
			record := func(who string) handler {
				return func(kind string, payload []byte) {
					mu.Lock()
					got = append(got, who+" "+kind+" "+string(payload))
					mu.Unlock()
				}
			}
			tt.install(r, &slot, record)
			if slot.Load() == nil || slot.Load().Handler == nil {
				Emit(&r.g, &slot, "ev", []byte("x"), Event)
			}
			r.settle()
			mu.Lock()
			defer mu.Unlock()
			require.Equal(t, tt.want, got)
		})
	}
}

// BenchmarkCompletion is a call's share of the gate on the per-call path:
// Owe when the call is accepted, Push of its completion, and the delivery.
func BenchmarkCompletion(b *testing.B) {
	r := newRig()
	var n atomic.Int64
	fn := func() { n.Add(1) }
	b.ReportAllocs()
	for b.Loop() {
		r.g.Owe()
		r.g.Push(fn, Completion)
	}
	r.settle()
	require.Equal(b, int64(b.N), n.Load())
}

func TestInstall(t *testing.T) {
	tests := []struct {
		name    string
		refused bool
		// what has been destroyed after Install, and which one is in the slot
		wantDestroyed []string
		wantInSlot    string
	}{
		{"replaces and destroys the old one", false, []string{"old"}, "new"},
		{"refused: the new one is destroyed at once", true, []string{"new"}, "old"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig()
			var mu sync.Mutex
			var destroyed []string
			reg := func(name string) *Registration[string] {
				return NewRegistration(&r.g, name, func() {
					mu.Lock()
					destroyed = append(destroyed, name)
					mu.Unlock()
				})
			}
			var slot atomic.Pointer[Registration[string]]
			var owner sync.Mutex
			Install(&r.g, &owner, &slot, reg("old"), func() bool { return false })
			var locked bool
			Install(&r.g, &owner, &slot, reg("new"), func() bool {
				locked = !owner.TryLock()
				return tt.refused
			})
			require.True(t, locked, "refused runs under the owner's lock")
			mu.Lock()
			defer mu.Unlock()
			require.Equal(t, tt.wantDestroyed, destroyed)
			require.Equal(t, tt.wantInSlot, slot.Load().Handler)
		})
	}
}
