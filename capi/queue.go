package main

/*
#cgo CFLAGS: -I${SRCDIR}/../include
#include "bridge.h"
*/
import "C"

import (
	"sync"
	"unsafe"

	"github.com/lemonmcp/lemonmcp/core"
	"github.com/lemonmcp/lemonmcp/internal/cqueue"
	"github.com/lemonmcp/lemonmcp/internal/handles"
)

// queues maps the hosts' lmcp_queue pointers to completion queues; freed
// handles stay behind as tombstones, as for clients. A queue is no
// handleKind: it has no callbacks and cannot be poisoned.
var queues handles.Registry[cqueue.Queue]

func lookupQueue(p *C.lmcp_queue) (*cqueue.Queue, *core.Error) {
	q, ok := queues.Get(unsafe.Pointer(p))
	if !ok {
		return nil, core.Errorf(core.StatusInvalidHandle, "the queue handle is NULL, unknown, or freed")
	}
	return q, nil
}

// lookupQueued resolves the handle and the queue of a call made with a
// *_queued export (lmcp_client_call_queued, lmcp_host_call_queued, ...).
func (k *handleKind[T, P, H]) lookupQueued(h H, queue *C.lmcp_queue) (P, *cqueue.Queue, *core.Error) {
	obj, err := k.lookup(h)
	if err != nil {
		return nil, nil, err
	}
	q, err := lookupQueue(queue)
	if err != nil {
		return nil, nil, err
	}
	return obj, q, nil
}

//export lmcp_queue_new
func lmcp_queue_new(queueOut **C.lmcp_queue, fdOut *C.int, errOut **C.char) (st C.lmcp_status) {
	defer recoverExport(&st, errOut, "lmcp_queue_new")
	if queueOut == nil {
		return setErr(errOut, core.Errorf(core.StatusInvalidArgument, "queue_out is NULL"))
	}
	*queueOut = nil
	q, err := cqueue.New()
	if err != nil {
		return setErr(errOut, core.Errorf(core.StatusInternal, "%s", err.Error()))
	}
	if fdOut != nil {
		*fdOut = C.int(q.FD())
	}
	*queueOut = (*C.lmcp_queue)(queues.Save(q))
	return setErr(errOut, nil)
}

//export lmcp_client_call_queued
func lmcp_client_call_queued(client *C.lmcp_client, method *C.cchar_t, params *C.cchar_t, plen C.size_t, options *C.cchar_t, olen C.size_t, queue *C.lmcp_queue, tag C.uint64_t, callIDOut *C.lmcp_call_id, errOut **C.char) (st C.lmcp_status) {
	defer clients.recover(&st, errOut, client, "lmcp_client_call_queued")
	c, q, err := clients.lookupQueued(client, queue)
	if err != nil {
		return setErr(errOut, err)
	}
	m, p, opts, err := callArgs(method, params, plen, options, olen)
	if err != nil {
		return setErr(errOut, err)
	}
	// The push goes through the client's delivery goroutine, like a done
	// callback: so a completion is queued after the callbacks of the
	// client's earlier events (a call's last progress) have returned, and
	// lmcp_client_free returns only once the cancelled completions are in.
	opts.QueuesDone = true
	id, err := startQueued(c.SyncRoute(), q, tag, func(done core.DoneFunc) (uint64, *core.Error) {
		return c.Call(m, p, opts, done)
	})
	return callStarted(id, err, callIDOut, errOut)
}

// lmcp_client_hold_sends and lmcp_client_release_sends bracket a burst of
// calls whose requests go out together (core.Client.HoldSends).
//
//export lmcp_client_hold_sends
func lmcp_client_hold_sends(client *C.lmcp_client) (st C.lmcp_status) {
	defer clients.recover(&st, nil, client, "lmcp_client_hold_sends")
	return clients.with(client, nil, func(c *core.Client) *core.Error {
		c.HoldSends()
		return nil
	})
}

//export lmcp_client_release_sends
func lmcp_client_release_sends(client *C.lmcp_client) (st C.lmcp_status) {
	defer clients.recover(&st, nil, client, "lmcp_client_release_sends")
	return clients.with(client, nil, func(c *core.Client) *core.Error {
		c.ReleaseSends()
		return nil
	})
}

// queuedDone is the completion of a call made with a *_queued export: it
// queues the call's completion, carrying tag, in q.
func queuedDone(q *cqueue.Queue, tag C.uint64_t) core.DoneFunc {
	t := uint64(tag)
	return func(callID uint64, status core.Status, data []byte) {
		q.Push(cqueue.Completion{Tag: t, CallID: callID, Status: int32(status), Data: data})
	}
}

// startQueued starts a queued call with start, its completion pushed
// into q with tag. A call to a server reached by network (route: not
// core.SyncWaitOutside) is counted in flight from its start to its
// completion, so that Ps are added while a thread outside Go keeps many in
// flight (queuedOnNetwork); a call that does not start is counted out at
// once (its completion never runs).
func startQueued(route core.SyncRoute, q *cqueue.Queue, tag C.uint64_t, start func(core.DoneFunc) (uint64, *core.Error)) (uint64, *core.Error) {
	if route == core.SyncWaitOutside {
		return start(queuedDone(q, tag))
	}
	queuedOnNetwork()
	t := uint64(tag)
	id, err := start(func(callID uint64, status core.Status, data []byte) {
		queuedOnNetworkDone()
		q.Push(cqueue.Completion{Tag: t, CallID: callID, Status: int32(status), Data: data})
	})
	if err != nil {
		queuedOnNetworkDone()
	}
	return id, err
}

// popped holds the completions of one pop while they are copied out.
var popped = sync.Pool{New: func() any { s := make([]cqueue.Completion, 0, 64); return &s }}

//export lmcp_queue_pop
func lmcp_queue_pop(queue *C.lmcp_queue, max C.size_t, batchOut **C.lmcp_completion, countOut *C.size_t, sizeOut *C.size_t) (st C.lmcp_status) {
	defer recoverExport(&st, nil, "lmcp_queue_pop")
	if batchOut == nil || countOut == nil {
		return C.LMCP_E_INVALID_ARGUMENT
	}
	*batchOut, *countOut = nil, 0
	if sizeOut != nil {
		*sizeOut = 0
	}
	q, err := lookupQueue(queue)
	if err != nil {
		return C.lmcp_status(err.Status)
	}
	limit := int(max)
	if uint64(max) > 1<<30 {
		limit = 1 << 30
	}
	sp := popped.Get().(*[]cqueue.Completion)
	items, ok := q.Pop((*sp)[:0], limit)
	defer func() {
		clear(items)
		*sp = items[:0]
		popped.Put(sp)
	}()
	if !ok {
		return C.LMCP_E_INVALID_HANDLE // freed while this pop was on its way in
	}
	if len(items) == 0 {
		return C.LMCP_OK
	}
	batch, size := encodeBatch(items)
	*batchOut, *countOut = batch, C.size_t(len(items))
	if sizeOut != nil {
		*sizeOut = size
	}
	return C.LMCP_OK
}

// encodeBatch lays items out in one C allocation: the lmcp_completion array,
// then each JSON text NUL-terminated, which the array's json fields point
// into. The host frees it with one lmcp_free.
func encodeBatch(items []cqueue.Completion) (*C.lmcp_completion, C.size_t) {
	head := uintptr(len(items)) * C.sizeof_lmcp_completion
	size := head
	for _, it := range items {
		size += uintptr(len(it.Data)) + 1
	}
	base := C.malloc(C.size_t(size))
	recs := unsafe.Slice((*C.lmcp_completion)(base), len(items))
	text := unsafe.Slice((*byte)(base), size)
	off := head
	for i, it := range items {
		copy(text[off:], it.Data)
		text[off+uintptr(len(it.Data))] = 0
		recs[i] = C.lmcp_completion{
			tag:     C.uint64_t(it.Tag),
			call_id: C.lmcp_call_id(it.CallID),
			status:  C.lmcp_status(it.Status),
			json:    (*C.char)(unsafe.Add(base, off)),
			len:     C.size_t(len(it.Data)),
		}
		off += uintptr(len(it.Data)) + 1
	}
	return (*C.lmcp_completion)(base), C.size_t(size)
}

//export lmcp_queue_free
func lmcp_queue_free(queue *C.lmcp_queue) {
	var st C.lmcp_status
	defer recoverExport(&st, nil, "lmcp_queue_free")
	if q, ok := queues.Release(unsafe.Pointer(queue)); ok {
		q.Close()
	}
}
