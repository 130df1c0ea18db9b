package main

/*
#cgo CFLAGS: -I${SRCDIR}/../include
#include "bridge.h"
*/
import "C"

import (
	"runtime"
	"sync/atomic"
	"syscall"
	"unsafe"

	"github.com/lemonmcp/lemonmcp/core"
)

// A blocking call (lmcp_client_call_sync, lmcp_host_call_sync,
// lmcp_host_call_tool_sync) made by a C thread waits in C, outside the Go
// runtime, on a futex word the completion sets (lmcp_bridge_sync in
// bridge.h; docs/abi-cost.md has the traces behind this design).
//
// A thread that returns from Go to C keeps its P (Go's right to run Go
// code) in the syscall state until it comes back into Go or sysmon retakes
// it, which takes at least one sysmon tick (20 µs or more). A C waiter
// therefore holds a P while it waits, and with as many waiters as Ps the
// goroutines that complete the calls (the reader, the timers) run only
// after a retake: on 2 cores, 16 threads calling at once fell from 34k to
// 16k calls/s. So a blocking call waits in C only while fewer blocking
// calls are under way than there are Ps; past that, every caller parks in
// Go as before (core.Client.CallSyncFromThread), which hands its P over at
// once, and where many waiting threads share the Ps well.
var blockingCalls atomic.Int32

// procs is GOMAXPROCS, read again by a lone blocking call only: reading it
// takes the scheduler's lock, which many callers at once would contend
// with the scheduler itself.
var procs atomic.Int32

func init() { setProcs() }

// setProcs reads GOMAXPROCS again, for this file and for C
// (lmcp_bridge_procs, which decides whether a call is submitted).
func setProcs() {
	n := int32(runtime.GOMAXPROCS(0))
	procs.Store(n)
	atomic.StoreInt32((*int32)(unsafe.Pointer(&C.lmcp_bridge_procs)), n)
}

// waitInC counts a blocking call in and tells whether it waits in C;
// blockingCallDone counts it out when it ends.
func waitInC() bool {
	n := blockingCalls.Add(1)
	if n == 1 {
		setProcs()
	}
	return n < procs.Load()
}

func blockingCallDone() { blockingCalls.Add(-1) }

// onThread makes a blocking call on the calling thread (core.SyncOnThread):
// call runs the exchange here in blocking system calls, and the kernel
// wakes this thread when the server answers, with no hand-off between
// threads. Counted as a blocking call: the thread keeps its P while it
// sleeps in read(2), as a C waiter does; with many such threads, the
// library adds Ps (threadprocs.go).
func onThread(resultOut **C.char, lenOut *C.size_t, errOut **C.char, call func() ([]byte, *core.Error)) C.lmcp_status {
	manyOnThreads(blockingCalls.Add(1))
	defer blockingCallDone()
	return callMade(call, resultOut, lenOut, errOut)
}

// callMade makes a blocking call in Go and sets the outputs from its
// outcome, as an export does.
func callMade(call func() ([]byte, *core.Error), resultOut **C.char, lenOut *C.size_t, errOut **C.char) C.lmcp_status {
	data, err := call()
	if err != nil {
		return setErr(errOut, err)
	}
	writeJSON(data, resultOut, lenOut)
	return setErr(errOut, nil)
}

// blockingCall runs a blocking call for a C caller, whose arguments are
// checked: start starts it with a completion, park makes it and waits in
// Go. It returns LMCP_BRIDGE_SYNC_STARTED when the outcome goes to w,
// where the C caller waits for it (lmcp_bridge_sync_finish), or else the
// call's status with the outputs set, as an export does.
func blockingCall(w *C.lmcp_bridge_sync, resultOut **C.char, lenOut *C.size_t, errOut **C.char, opts *core.CallOptions,
	start func(core.DoneFunc) *core.Error, park func() ([]byte, *core.Error)) C.lmcp_status {
	if !waitInC() {
		defer blockingCallDone()
		return callMade(park, resultOut, lenOut, errOut)
	}
	cw := &cWait{w: w, wantErr: errOut != nil}
	defer cw.abandonOnPanic()
	opts.Inline = true // the completion (cw.done) only copies and signals
	if err := start(cw.done); err != nil {
		blockingCallDone() // the completion never runs
		return setErr(errOut, err)
	}
	setErr(errOut, nil)
	return C.LMCP_BRIDGE_SYNC_STARTED
}

// beginCall starts a blocking call whose caller waits for it in steps
// (lmcp_*_call_begin, then lmcp_sync_call_wait on w, caller memory): the
// C half of blockingCall's wait, always in C, since the caller returns
// between the steps. It counts as a blocking call, so that other callers
// leave a P free for it.
func beginCall(w *C.lmcp_bridge_sync, callIDOut *C.lmcp_call_id, errOut **C.char, opts *core.CallOptions,
	start func(core.DoneFunc) (uint64, *core.Error)) C.lmcp_status {
	if w == nil {
		return setErr(errOut, core.Errorf(core.StatusInvalidArgument, "call is NULL"))
	}
	*w = C.lmcp_bridge_sync{} // PENDING: the caller may reuse it
	blockingCalls.Add(1)
	cw := &cWait{w: w, wantErr: true} // lmcp_sync_call_wait frees it when its err_out is NULL
	defer cw.abandonOnPanic()
	opts.Inline = true // the completion (cw.done) only copies and signals
	opts.Handed = true // the caller cancels it by its id
	id, err := start(cw.done)
	if err != nil {
		blockingCallDone() // the completion never runs
		return setErr(errOut, err)
	}
	if callIDOut != nil {
		*callIDOut = C.lmcp_call_id(id)
	}
	return setErr(errOut, nil)
}

// cWait is a blocking call's completion while its C caller waits on w.
type cWait struct {
	w       *C.lmcp_bridge_sync
	wantErr bool // the caller passed err_out: copy an error's JSON
	// uncounted: a submitted call (syncqueue.go), which blockingCalls
	// does not count: its caller holds no P while it waits.
	uncounted bool
	// claim says who owns w: the completion (which fills it), or the
	// export, which abandons it when starting the call panicked, so that a
	// completion coming later never writes into a stack frame gone.
	claim atomic.Uint32
}

const (
	cWaitOpen = iota
	cWaitCompleted
	cWaitAbandoned
)

// done is the call's completion. It runs once, on the goroutine that ends
// the call (the reader, a timer, free's caller), and never blocks. Nothing
// touches w after signalSync: the waiter may be gone.
func (cw *cWait) done(_ uint64, status core.Status, data []byte) {
	if !cw.claim.CompareAndSwap(cWaitOpen, cWaitCompleted) {
		return // abandoned: nobody waits
	}
	w := cw.w
	w.status = C.lmcp_status(status)
	if status == core.StatusOK || cw.wantErr {
		w.json = cBytes(data) // data is JSON: the result, or the error object
		w.len = C.size_t(len(data))
	}
	if !cw.uncounted {
		blockingCallDone()
	}
	signalSync(&w.state)
}

// abandonOnPanic, deferred while the call starts, lets a panic go on to
// the export's recovery (which returns LMCP_E_INTERNAL, and the C caller
// returns without waiting) only once w is nobody's: abandoned before the
// completion claims it, or else filled by the completion, whose copy is
// then freed.
func (cw *cWait) abandonOnPanic() {
	r := recover()
	if r == nil {
		return
	}
	if cw.claim.CompareAndSwap(cWaitOpen, cWaitAbandoned) {
		blockingCallDone()
	} else {
		for atomic.LoadUint32((*uint32)(unsafe.Pointer(&cw.w.state))) != C.LMCP_BRIDGE_SYNC_DONE {
			runtime.Gosched()
		}
		C.free(unsafe.Pointer(cw.w.json))
	}
	panic(r)
}

// signalSync sets the waiter's word to DONE and wakes it when it sleeps.
// After the swap the waiter may return and its stack frame go: a wake that
// then reaches an unrelated futex word at that address is a spurious
// wake-up, which every futex waiter tolerates. FUTEX_WAKE never blocks, so
// the raw syscall (no scheduler hand-off, no cgo call) is enough.
func signalSync(state *C.uint32_t) {
	word := (*uint32)(unsafe.Pointer(state))
	if atomic.SwapUint32(word, C.LMCP_BRIDGE_SYNC_DONE) == C.LMCP_BRIDGE_SYNC_SLEEPING {
		const futexWakePrivate = 1 | 128 // FUTEX_WAKE | FUTEX_PRIVATE_FLAG
		syscall.RawSyscall6(syscall.SYS_FUTEX, uintptr(unsafe.Pointer(word)), futexWakePrivate, 1, 0, 0, 0)
	}
}
