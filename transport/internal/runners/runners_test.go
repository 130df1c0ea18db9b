package runners

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// rig is a pool whose requests are ints: run reports each on ran, after
// waiting for gate when the request is negative.
type rig struct {
	pool Pool[int]
	wg   sync.WaitGroup
	stop chan struct{}
	ran  chan int
	gate chan struct{}
}

func newRig() *rig {
	r := &rig{stop: make(chan struct{}), ran: make(chan int, 1024), gate: make(chan struct{})}
	r.pool.Start(func(n int) {
		defer r.wg.Done() // the request's own unit, as a transport's
		if n < 0 {
			<-r.gate
		}
		r.ran <- n
	}, r.stop, &r.wg)
	return r
}

func (r *rig) send(n int) {
	r.wg.Add(1)
	r.pool.Go(n)
}

func (r *rig) next(t *testing.T) int {
	t.Helper()
	select {
	case n := <-r.ran:
		return n
	case <-time.After(10 * time.Second):
		require.FailNow(t, "a request did not run")
		return 0
	}
}

func (r *rig) idle(n int) func() bool {
	return func() bool { return r.pool.Idle() == n && r.pool.Live() == n }
}

// TestPool: a runner made idle makes the next request (one runner for
// requests made one after another); a burst leaves at most MaxIdle waiting
// and ends the others; closing done ends every idle runner, and a runner
// handed a request as done closes still makes it.
func TestPool(t *testing.T) {
	t.Run("one after another", func(t *testing.T) {
		r := newRig()
		defer close(r.stop)
		for i := range 50 {
			r.send(i)
			require.Equal(t, i, r.next(t))
			require.Eventually(t, r.idle(1), 10*time.Second, time.Millisecond)
		}
		require.EqualValues(t, 1, r.pool.Started(), "each request after the first was made by the one runner kept")
	})
	t.Run("burst", func(t *testing.T) {
		r := newRig()
		const burst = MaxIdle + 8
		for range burst {
			r.send(-1) // held at the gate: every one needs a runner of its own
		}
		require.Eventually(t, func() bool { return r.pool.Live() == burst }, 10*time.Second, time.Millisecond)
		close(r.gate)
		for range burst {
			require.Equal(t, -1, r.next(t))
		}
		require.Eventually(t, r.idle(MaxIdle), 10*time.Second, time.Millisecond, "the runners past MaxIdle did not end")
		require.EqualValues(t, burst, r.pool.Started())

		close(r.stop)
		r.wg.Wait() // each runner holds a unit while it lives
		require.Zero(t, r.pool.Live(), "a runner outlived done")
		require.Zero(t, r.pool.Idle())
	})
	t.Run("handed a request as done closes", func(t *testing.T) {
		r := newRig()
		r.send(1)
		require.Equal(t, 1, r.next(t))
		require.Eventually(t, r.idle(1), 10*time.Second, time.Millisecond)
		close(r.stop)
		r.send(2) // may race the runner's leaving: it is made either way
		require.Equal(t, 2, r.next(t))
		r.wg.Wait()
		require.Zero(t, r.pool.Live())
	})
}
