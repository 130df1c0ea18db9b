// Package cqueue is a completion queue a host polls instead of taking a
// callback per completion: call completions are pushed, from whichever
// library goroutine completes them, into a queue the host drains in
// batches, and a file descriptor (a Linux eventfd) is readable exactly while
// completions are waiting.
//
// Why: a host whose language runtime has a global lock (CPython's GIL)
// pays for every callback from a library thread with a lock hand-off and a
// thread wake-up. With a queue the library never enters the host: the host
// waits on the descriptor with its own poll loop (asyncio's add_reader, a
// select on the main thread that Ctrl-C still interrupts) and takes every
// waiting completion with one call.
//
// The descriptor is written only when the queue goes from empty to
// non-empty and drained when a pop empties it, so a host that sees it
// readable always finds at least one completion, and a burst of completions
// costs one wake-up. Close drops what is waiting and ends the queue: later
// pushes are dropped (their data is Go memory, reclaimed by the collector),
// so a queue freed while calls are pending leaks nothing and the calls
// complete normally inside the library.
package cqueue
