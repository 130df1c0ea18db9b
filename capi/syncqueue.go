package main

/*
#cgo CFLAGS: -I${SRCDIR}/../include
#include "bridge.h"
*/
import "C"

import (
	"os"
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/lemonmcp/lemonmcp/core"
)

// The blocking calls of networked clients that can neither exchange nor
// POST on the caller's thread (core.SyncSubmit: an HTTP transport given an
// http.Client of the embedder's) are submitted: the C thread pushes them
// on a stack and waits in C, and a goroutine serves them
// (lmcp_bridge_submit in bridge.h says why). Streamable HTTP and legacy
// HTTP+SSE with their own clients, the only ones a configuration makes,
// are served on the thread instead (client.go). The submitter is that
// goroutine; it starts with the first such call and then waits on its
// eventfd in the netpoller, as any goroutine waiting on a socket, for the
// rest of the process.
var submitter struct {
	once sync.Once
	ok   bool // the eventfd was made: calls may be submitted
}

// submitReady starts the submitter when needed and reports whether calls
// may be submitted; when the eventfd cannot be made, blocking calls are
// started in Go as before.
func submitReady() bool {
	submitter.once.Do(func() {
		fd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
		if err != nil {
			return
		}
		// A nonblocking descriptor: os.File reads it through the
		// netpoller, so the waiting goroutine holds no thread.
		f := os.NewFile(uintptr(fd), "lemonmcp-submissions")
		atomic.StoreInt32((*int32)(unsafe.Pointer(&C.lmcp_bridge_submit_fd)), int32(fd))
		submitter.ok = true
		go serveSubmissions(f)
	})
	return submitter.ok
}

// submits tells the Go half of a blocking call whose client (or server)
// is to be submitted (core.SyncSubmit) to answer LMCP_BRIDGE_SYNC_SUBMIT:
// while fewer blocking calls are under way than there are Ps
// (lmcp_bridge_blocking counted this one in), and once the submitter runs.
func submits() bool {
	return atomic.LoadInt32((*int32)(unsafe.Pointer(&C.lmcp_bridge_blocking_calls))) < procs.Load() && submitReady()
}

// submitted takes the whole stack of submitted calls into calls (reused),
// oldest first.
func submitted(calls []*C.lmcp_bridge_submit) []*C.lmcp_bridge_submit {
	calls = calls[:0]
	head := (*C.lmcp_bridge_submit)(atomic.SwapPointer((*unsafe.Pointer)(unsafe.Pointer(&C.lmcp_bridge_submitted)), nil))
	for s := head; s != nil; s = s.next {
		calls = append(calls, s)
	}
	for i, j := 0, len(calls)-1; i < j; i, j = i+1, j-1 {
		calls[i], calls[j] = calls[j], calls[i]
	}
	return calls
}

// serveSubmissions is the submitter: each wake-up, it hands every call
// submitted since the last one to an idle worker, or to a new one. A read
// error (none is expected of an eventfd) does not stop it: it drains the
// stack anyway, so no caller is left waiting.
func serveSubmissions(f *os.File) {
	var buf [8]byte
	var calls []*C.lmcp_bridge_submit
	for {
		_, _ = f.Read(buf[:])
		calls = submitted(calls)
		for _, s := range calls {
			select {
			case submitWork <- s:
			default:
				submitWorkers.Add(1)
				go submitWorker(s)
			}
		}
	}
}

// The workers that make submitted calls. They are kept, not started per
// call: an HTTP exchange needs a deeper stack than a new goroutine has,
// and growing it again on every call cost about a tenth of the call's CPU.
// Calls are submitted only while fewer blocking calls are under way than
// there are Ps, so a few workers serve them all; past maxSubmitWorkers
// (a burst), a worker ends after its call.
var (
	submitWork    = make(chan *C.lmcp_bridge_submit)
	submitWorkers atomic.Int32
)

func maxSubmitWorkers() int32 { return 2*procs.Load() + 2 }

func submitWorker(s *C.lmcp_bridge_submit) {
	for {
		serveSubmitted(s)
		if n := submitWorkers.Load(); n > maxSubmitWorkers() && submitWorkers.CompareAndSwap(n, n-1) {
			return
		}
		s = <-submitWork
	}
}

// serveSubmitted makes one submitted call and hands its outcome to the
// waiting thread. A panic poisons the call's object, as in an export, and
// the caller gets LMCP_E_INTERNAL unless its call had completed already.
// Nothing reads s once the call may have completed (its caller may have
// returned, and s was on its stack): what the recovery needs is read first.
func serveSubmitted(s *C.lmcp_bridge_submit) {
	op, handle := s.op, s.handle
	if atomic.LoadInt32((*int32)(unsafe.Pointer(&C.lmcp_bridge_blocking_calls))) == 1 {
		setProcs() // a lone call, as in waitInC: GOMAXPROCS may have changed
	}
	cw := &cWait{w: &s.w, wantErr: s.want_err != 0, uncounted: true}
	defer func() {
		if r := recover(); r != nil {
			name := submitExport(op)
			if op == C.LMCP_BRIDGE_OP_CLIENT_CALL {
				if c, ok := clients.registry.Get(handle); ok {
					c.Recovered(r, name)
				}
			} else if h, ok := hosts.registry.Get(handle); ok {
				h.Recovered(r, name)
			}
			e := core.Errorf(core.StatusInternal, "internal error in %s: %v", name, r)
			cw.done(0, e.Status, e.JSON())
		}
	}()
	if err := startSubmitted(s, cw); err != nil {
		cw.done(0, err.Status, err.JSON())
	}
}

// submitExport names the export a submitted call stands for.
func submitExport(op C.int32_t) string {
	switch op {
	case C.LMCP_BRIDGE_OP_CLIENT_CALL:
		return "lmcp_client_call_sync"
	case C.LMCP_BRIDGE_OP_HOST_CALL_TOOL:
		return "lmcp_host_call_tool_sync"
	}
	return "lmcp_host_call_sync"
}

// startSubmitted checks a submitted call's arguments as its export does
// and makes it; an error means the completion will not run. The worker
// does nothing else until the completion has run, so the call is Waiting:
// over HTTP the exchange runs on the worker, as on a Go caller's
// goroutine.
func startSubmitted(s *C.lmcp_bridge_submit, cw *cWait) *core.Error {
	switch s.op {
	case C.LMCP_BRIDGE_OP_CLIENT_CALL:
		c, m, p, opts, err := clientCall((*C.lmcp_client)(s.handle), s.name, s.params, s.params_len, s.options, s.options_len)
		if err != nil {
			return err
		}
		if c.SyncRoute() == core.SyncSubmit {
			s.networked = 1
		}
		opts.Inline, opts.Waiting = true, true
		_, err = c.Call(m, p, opts, cw.done)
		return err
	case C.LMCP_BRIDGE_OP_HOST_CALL_TOOL:
		h, tool, a, opts, err := hostToolCall((*C.lmcp_host)(s.handle), s.name, s.params, s.params_len, s.options, s.options_len)
		if err != nil {
			return err
		}
		if h.ToolSyncRoute(tool) == core.SyncSubmit {
			s.networked = 1
		}
		opts.Inline, opts.Waiting = true, true
		_, err = h.CallTool(tool, a, opts, cw.done)
		return err
	case C.LMCP_BRIDGE_OP_HOST_CALL:
		h, srv, m, p, opts, err := hostServerCall((*C.lmcp_host)(s.handle), s.server, s.name, s.params, s.params_len, s.options, s.options_len)
		if err != nil {
			return err
		}
		if h.SyncRoute(srv) == core.SyncSubmit {
			s.networked = 1
		}
		opts.Inline, opts.Waiting = true, true
		_, err = h.Call(srv, m, p, opts, cw.done)
		return err
	}
	return core.Errorf(core.StatusInternal, "unknown submitted call %d", int(s.op))
}
