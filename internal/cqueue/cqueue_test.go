package cqueue

import (
	"fmt"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// readable polls fd without consuming it; wait bounds the poll.
func readable(t *testing.T, fd int, wait time.Duration) bool {
	t.Helper()
	var set syscall.FdSet
	set.Bits[fd/64] |= 1 << (uint(fd) % 64)
	tv := syscall.NsecToTimeval(wait.Nanoseconds())
	for {
		n, err := syscall.Select(fd+1, &set, nil, nil, &tv)
		if err == syscall.EINTR {
			continue
		}
		require.NoError(t, err)
		return n == 1
	}
}

func item(i int) Completion {
	return Completion{Tag: uint64(i), CallID: uint64(1000 + i), Status: int32(-(i % 3)), Data: []byte(fmt.Sprintf(`{"i":%d}`, i))}
}

func TestPushPop(t *testing.T) {
	cases := []struct {
		name   string
		pushed int
		max    int
		want   []int // how many each successive pop returns
	}{
		{"empty", 0, 0, []int{0}},
		{"one", 1, 0, []int{1, 0}},
		{"all at once", 10, 0, []int{10, 0}},
		{"in batches", 10, 4, []int{4, 4, 2, 0}},
		{"batch of one", 3, 1, []int{1, 1, 1, 0}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			q, err := New()
			require.NoError(t, err)
			defer q.Close()
			require.False(t, readable(t, q.FD(), 0), "a new queue is not readable")
			for i := 0; i < tc.pushed; i++ {
				require.True(t, q.Push(item(i)))
			}
			require.Equal(t, tc.pushed > 0, readable(t, q.FD(), 0))
			next := 0
			for _, n := range tc.want {
				got, ok := q.Pop(nil, tc.max)
				require.True(t, ok)
				require.Len(t, got, n)
				for _, c := range got {
					require.Equal(t, item(next), c, "completions come out in push order")
					next++
				}
				require.Equal(t, q.Len() > 0, readable(t, q.FD(), 0), "readable exactly while completions wait")
			}
			require.Equal(t, tc.pushed, next)
		})
	}
}

// TestManyProducers pushes from many goroutines while one consumer waits on
// the descriptor and pops in batches: every completion arrives exactly once,
// and every wake-up finds at least one.
func TestManyProducers(t *testing.T) {
	const producers, each = 8, 2000
	q, err := New()
	require.NoError(t, err)
	defer q.Close()
	var wg sync.WaitGroup
	for p := 0; p < producers; p++ {
		wg.Add(1)
		go func(p int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				q.Push(Completion{Tag: uint64(p*each + i), Data: []byte("{}")})
			}
		}(p)
	}
	seen := make([]bool, producers*each)
	got, wakes, empty := 0, 0, 0
	buf := make([]Completion, 0, 64)
	deadline := time.Now().Add(30 * time.Second)
	for got < producers*each && time.Now().Before(deadline) {
		if !readable(t, q.FD(), 100*time.Millisecond) {
			continue
		}
		wakes++
		batch, ok := q.Pop(buf[:0], 64)
		require.True(t, ok)
		if len(batch) == 0 {
			empty++
		}
		for _, c := range batch {
			require.False(t, seen[c.Tag], "tag %d delivered twice", c.Tag)
			seen[c.Tag] = true
			got++
		}
	}
	wg.Wait()
	require.Equal(t, producers*each, got)
	require.Zero(t, empty, "a readable descriptor always had completions")
	require.Equal(t, 0, q.Len())
	require.False(t, readable(t, q.FD(), 0))
	t.Logf("%d completions in %d wake-ups", got, wakes)
}

// TestCloseRacesPushAndPop closes queues while producers push and a
// consumer pops: nothing panics, later pushes are dropped, and no queue is
// left open.
func TestCloseRacesPushAndPop(t *testing.T) {
	before := Live()
	for round := 0; round < 50; round++ {
		q, err := New()
		require.NoError(t, err)
		var wg sync.WaitGroup
		stop := make(chan struct{})
		for p := 0; p < 4; p++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					q.Push(item(i))
				}
			}()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				q.Pop(nil, 16)
			}
		}()
		time.Sleep(time.Millisecond)
		closers := make(chan bool, 2)
		for c := 0; c < 2; c++ {
			go func() { closers <- q.Close() }()
		}
		first, second := <-closers, <-closers
		require.True(t, first != second, "exactly one Close reports true")
		require.False(t, q.Push(item(0)), "a push after close is dropped")
		got, ok := q.Pop(nil, 0)
		require.False(t, ok)
		require.Empty(t, got)
		require.Equal(t, 0, q.Len())
		close(stop)
		wg.Wait()
	}
	require.Equal(t, before, Live())
}

// TestCloseWakesPoller: a thread blocked polling the descriptor wakes when
// the queue is closed.
func TestCloseWakesPoller(t *testing.T) {
	q, err := New()
	require.NoError(t, err)
	fd := q.FD()
	woke := make(chan bool, 1)
	go func() {
		var set syscall.FdSet
		set.Bits[fd/64] |= 1 << (uint(fd) % 64)
		tv := syscall.NsecToTimeval((10 * time.Second).Nanoseconds())
		n, _ := syscall.Select(fd+1, &set, nil, nil, &tv)
		woke <- n == 1
	}()
	time.Sleep(20 * time.Millisecond) // let it block (either way it must wake)
	require.True(t, q.Close())
	select {
	case ok := <-woke:
		require.True(t, ok)
	case <-time.After(5 * time.Second):
		t.Fatal("the poller did not wake on Close")
	}
}

// TestCloseReleasesDescriptor: the eventfd is closed with the queue.
func TestCloseReleasesDescriptor(t *testing.T) {
	q, err := New()
	require.NoError(t, err)
	fd := q.FD()
	q.Push(item(1))
	_, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_GETFD, 0)
	require.Zero(t, errno, "open before Close")
	q.Close()
	_, _, errno = syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_GETFD, 0)
	require.Equal(t, syscall.EBADF, errno, "closed by Close")
}

// TestPopReleasesBurstMemory: after a large burst is drained, the queue
// does not keep the burst's backing array or references to popped data.
func TestPopReleasesBurstMemory(t *testing.T) {
	q, err := New()
	require.NoError(t, err)
	defer q.Close()
	for i := 0; i < 5000; i++ {
		q.Push(item(i))
	}
	got, _ := q.Pop(nil, 4000)
	require.Len(t, got, 4000)
	for i := 0; i < 4000; i++ {
		require.Nil(t, q.items[i].Data, "popped entries hold no data")
	}
	got, _ = q.Pop(nil, 0)
	require.Len(t, got, 1000)
	require.Nil(t, q.items, "the burst's array is released")
}
