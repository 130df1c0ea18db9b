package main

import (
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/core"
	"github.com/lemonmcp/lemonmcp/internal/cqueue"
)

// shortSpell shortens threadProcsSpell for t, and restores it, the Ps and
// threadProcs.chosen when t ends.
func shortSpell(t *testing.T) {
	orig := runtime.GOMAXPROCS(0)
	spell := threadProcsSpell
	chosen := threadProcs.chosen
	t.Cleanup(func() {
		threadProcsSpell, threadProcs.chosen = spell, chosen
		runtime.GOMAXPROCS(orig)
		setProcs()
	})
	threadProcsSpell = 50 * time.Millisecond
}

// TestThreadProcs checks that blocking calls made on their callers'
// threads (onThread) add Ps while more of them are under way than the
// runtime's default has, and that the library returns to the default a
// spell after the last such call; and that a GOMAXPROCS chosen in the
// environment is kept.
func TestThreadProcs(t *testing.T) {
	shortSpell(t)

	for _, tc := range []struct {
		name    string
		chosen  bool // GOMAXPROCS in the environment
		threads func(base int) int
		raised  bool
	}{
		{"as many threads as Ps", false, func(base int) int { return base }, false},
		{"one thread more", false, func(base int) int { return base + 1 }, true},
		{"many threads", false, func(base int) int { return 4*base + 3 }, true},
		{"many threads, GOMAXPROCS chosen", true, func(base int) int { return 4*base + 3 }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runtime.SetDefaultGOMAXPROCS()
			setProcs()
			base := runtime.GOMAXPROCS(0)
			threadProcs.chosen = tc.chosen

			n := tc.threads(base)
			release := make(chan struct{})
			var releaseOnce sync.Once
			t.Cleanup(func() { releaseOnce.Do(func() { close(release) }) }) // a failed check leaves no call blocked
			var entered, ended sync.WaitGroup
			entered.Add(n)
			ended.Add(n)
			for range n {
				go func() {
					defer ended.Done()
					onThread(nil, nil, nil, func() ([]byte, *core.Error) {
						entered.Done()
						<-release
						return nil, core.Errorf(core.StatusCancelled, "released")
					})
				}()
			}
			entered.Wait()
			if tc.raised {
				require.Eventually(t, threadProcs.raised.Load, 10*time.Second, time.Millisecond,
					"%d threads in blocking calls on %d Ps", n, base)
				require.Equal(t, 2*base, runtime.GOMAXPROCS(0))
				require.EqualValues(t, 2*base, procs.Load(), "the Ps the bridge counts")
			}
			// Calls that go on keep the Ps raised past a spell.
			more := make(chan struct{})
			go func() {
				defer close(more)
				for deadline := time.Now().Add(3 * threadProcsSpell); time.Now().Before(deadline); {
					manyOnThreads(int32(n))
					time.Sleep(threadProcsSpell / 10)
				}
			}()
			<-more
			if tc.raised {
				require.Equal(t, 2*base, runtime.GOMAXPROCS(0), "Ps lowered while calls went on")
			} else {
				require.Equal(t, base, runtime.GOMAXPROCS(0), "Ps raised")
			}
			releaseOnce.Do(func() { close(release) })
			ended.Wait()
			require.Eventually(t, func() bool { return runtime.GOMAXPROCS(0) == base && !threadProcs.raised.Load() },
				10*time.Second, time.Millisecond, "back to the default a spell after the last call")
			require.EqualValues(t, base, procs.Load())
		})
	}
}

// TestQueuedCallsOnNetworkRaiseProcs: queued calls to a networked server
// (started by a thread outside Go) add Ps while more are in flight than
// the default has, as blocking ones do; queued calls over stdio never do;
// a completion, or a start that fails, counts its call out.
func TestQueuedCallsOnNetworkRaiseProcs(t *testing.T) {
	shortSpell(t)
	threadProcs.chosen = false
	q, qerr := cqueue.New()
	require.NoError(t, qerr)
	t.Cleanup(func() { q.Close() })

	for _, tc := range []struct {
		name   string
		route  core.SyncRoute
		raised bool
	}{
		{"over stdio", core.SyncWaitOutside, false},
		{"over Streamable HTTP", core.SyncOnThread, true},
		{"over legacy HTTP+SSE", core.SyncPostThenWait, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runtime.SetDefaultGOMAXPROCS()
			setProcs()
			base := runtime.GOMAXPROCS(0)
			var dones []core.DoneFunc
			for range base + 1 {
				_, err := startQueued(tc.route, q, 7, func(done core.DoneFunc) (uint64, *core.Error) {
					dones = append(dones, done)
					return 1, nil
				})
				require.Nil(t, err)
			}
			_, err := startQueued(tc.route, q, 8, func(core.DoneFunc) (uint64, *core.Error) {
				return 0, core.Errorf(core.StatusClosed, "not started")
			})
			require.NotNil(t, err)
			if tc.raised {
				require.Eventually(t, threadProcs.raised.Load, 10*time.Second, time.Millisecond)
				require.Equal(t, 2*base, runtime.GOMAXPROCS(0))
				require.EqualValues(t, base+1, queuedInFlight.Load(), "the call that did not start is counted out")
			} else {
				require.Zero(t, queuedInFlight.Load())
				require.False(t, threadProcs.raised.Load())
			}
			for _, done := range dones {
				done(1, core.StatusOK, []byte(`{}`))
			}
			require.Zero(t, queuedInFlight.Load(), "every completion counts its call out")
			items, _ := q.Pop(nil, 100)
			require.Len(t, items, base+1)
			require.Eventually(t, func() bool { return runtime.GOMAXPROCS(0) == base && !threadProcs.raised.Load() },
				10*time.Second, time.Millisecond, "back to the default a spell after the last call")
		})
	}
}
