package main

import (
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Ps for threads asleep in Go. A blocking call made on the caller's
// thread (onThread) sleeps in read(2) inside Go, so its thread keeps a P
// in the syscall state until sysmon retakes it, a tick (20 µs or more)
// later. With more such threads than Ps, every call then waits for a
// retake, twice: for a P to enter Go, and for one to return to after the
// read. On 2 cores, 16 C threads made 9–10k HTTP calls/s at GOMAXPROCS 2
// and 15–16k at 4; at 18 they fell back to 11–12k (idle Ps run idle GC
// workers and spinning Ms on CPUs the threads need). So while more
// threads are in such calls than the base has Ps, the library runs with
// twice the base, and returns to it once a spell passes with no call
// finding that many (docs/abi-cost.md, "Many threads blocking at once").
//
// A process that chose GOMAXPROCS (the environment variable) keeps it:
// the library adds Ps only to the runtime's own default.
var threadProcs struct {
	mu     sync.Mutex // serialises raise and lower
	chosen bool       // GOMAXPROCS was set in the environment
	raised atomic.Bool
	// raising: a raise was started and has not ended, so the calls that
	// find many meanwhile start no other
	raising atomic.Bool
	many    atomic.Uint64 // calls that found more threads than base Ps
	seen    uint64        // many at the last check (mu)
}

// threadProcsSpell is how long no call may find many threads before the
// library returns to the base: long enough that a steady load does not
// flap between the two (each change stops the world for a moment). A
// variable for the tests.
var threadProcsSpell = 2 * time.Second

func init() { _, threadProcs.chosen = os.LookupEnv("GOMAXPROCS") }

// manyOnThreads notes a call made on its own thread that found n blocking
// calls under way, itself included (blockingCalls: its kind, and the C
// waiters, which hold a P the same way), and raises the Ps when there are
// more than the base has. Cheap when nothing changes: a load, and an add
// while many.
func manyOnThreads(n int32) {
	if threadProcs.chosen {
		return
	}
	if threadProcs.raised.Load() {
		if n > procs.Load()/2 {
			threadProcs.many.Add(1)
		}
		return
	}
	if n <= procs.Load() {
		return
	}
	threadProcs.many.Add(1)
	if threadProcs.raising.CompareAndSwap(false, true) {
		go raiseThreadProcs() // GOMAXPROCS stops the world: not on the caller
	}
}

// queuedOnNetwork notes a queued call to a server reached by network,
// started by a thread outside Go (lmcp_*_call_queued), and counts it in
// flight until queuedOnNetworkDone. Such a thread sleeps in C between
// batches of completions with its P in the syscall state, where sysmon
// retakes it a tick later, while the library's goroutines make the
// exchanges: with more calls in flight than the base has Ps, the Ps are
// raised as for threads blocked in their own calls (16 queued calls over
// Streamable HTTP from one C thread, eight alternating rounds: 37k calls/s
// at 2 Ps, 42k raised). Calls over stdio are not counted: their exchanges
// are a reader's and a writer's, and 3 Ps cost them up to a sixth.
func queuedOnNetwork() { manyOnThreads(queuedInFlight.Add(1)) }

// queuedOnNetworkDone counts a call of queuedOnNetwork's out.
func queuedOnNetworkDone() { queuedInFlight.Add(-1) }

// queuedInFlight counts the queued calls of queuedOnNetwork under way.
var queuedInFlight atomic.Int32

func raiseThreadProcs() {
	threadProcs.mu.Lock()
	defer threadProcs.mu.Unlock()
	defer threadProcs.raising.Store(false) // after raised is set: no other starts
	if threadProcs.raised.Load() {
		return
	}
	runtime.GOMAXPROCS(2 * runtime.GOMAXPROCS(0))
	setProcs()
	threadProcs.seen = threadProcs.many.Load()
	threadProcs.raised.Store(true)
	time.AfterFunc(threadProcsSpell, lowerThreadProcs)
}

// lowerThreadProcs returns to the runtime's default after a spell in
// which no call found many threads, and checks again later otherwise.
func lowerThreadProcs() {
	threadProcs.mu.Lock()
	defer threadProcs.mu.Unlock()
	if n := threadProcs.many.Load(); n != threadProcs.seen {
		threadProcs.seen = n
		time.AfterFunc(threadProcsSpell, lowerThreadProcs)
		return
	}
	runtime.SetDefaultGOMAXPROCS() // the default, updated by the runtime again
	setProcs()
	threadProcs.raised.Store(false)
}
