package main

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// statusInvalidArgument is LMCP_E_INVALID_ARGUMENT as the header numbers it.
const statusInvalidArgument = -1

// cstr is s as the exports take a C string (test files cannot use cgo; the
// exports only read it).
func cstr(s string) *_Ctype_cchar_t {
	b := append([]byte(s), 0)
	return (*_Ctype_cchar_t)(unsafe.Pointer(&b[0]))
}

// TestHostQueuedCallsRefuse checks what lmcp_host_call_queued and
// lmcp_host_call_tool_queued answer when the call cannot be made: the
// status and a message that names the problem (and nothing is queued: the
// queue stays empty).
func TestHostQueuedCallsRefuse(t *testing.T) {
	_, key := newTestHost(t)
	var q *_Ctype_lmcp_queue
	require.EqualValues(t, statusOK, lmcp_queue_new(&q, nil, nil))
	t.Cleanup(func() { lmcp_queue_free(q) })
	var freedQ *_Ctype_lmcp_queue
	require.EqualValues(t, statusOK, lmcp_queue_new(&freedQ, nil, nil))
	lmcp_queue_free(freedQ)

	call := func(server, method string, queue *_Ctype_lmcp_queue) (_Ctype_lmcp_status, string) {
		var errOut *_Ctype_char
		var srv *_Ctype_cchar_t
		if server != "" {
			srv = cstr(server)
		}
		st := lmcp_host_call_queued(hostPtr(key), srv, cstr(method), nil, 0, nil, 0, queue, 7, nil, &errOut)
		return st, takeErr(errOut)
	}
	tool := func(name string, queue *_Ctype_lmcp_queue) (_Ctype_lmcp_status, string) {
		var errOut *_Ctype_char
		st := lmcp_host_call_tool_queued(hostPtr(key), cstr(name), nil, 0, nil, 0, queue, 7, nil, &errOut)
		return st, takeErr(errOut)
	}
	for _, tc := range []struct {
		name    string
		run     func() (_Ctype_lmcp_status, string)
		status  int
		message string
	}{
		{"no such server", func() (_Ctype_lmcp_status, string) { return call("nope", "ping", q) }, statusNotFound, "no server named"},
		{"disabled server", func() (_Ctype_lmcp_status, string) { return call("off", "ping", q) }, statusInvalidState, "disabled"},
		{"NULL server", func() (_Ctype_lmcp_status, string) { return call("", "ping", q) }, statusInvalidArgument, "server is NULL"},
		{"NULL queue", func() (_Ctype_lmcp_status, string) { return call("off", "ping", nil) }, statusInvalidHandle, "queue handle"},
		{"freed queue", func() (_Ctype_lmcp_status, string) { return tool("off__echo", freedQ) }, statusInvalidHandle, "queue handle"},
		{"no such tool", func() (_Ctype_lmcp_status, string) { return tool("nope__echo", q) }, statusNotFound, "no server offers a tool"},
		{"tool of a disabled server", func() (_Ctype_lmcp_status, string) { return tool("off__echo", q) }, statusInvalidState, "disabled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, msg := tc.run()
			require.EqualValues(t, tc.status, st)
			require.Contains(t, msg, tc.message)
		})
	}
	var batch *_Ctype_lmcp_completion
	var n _Ctype_size_t
	require.EqualValues(t, statusOK, lmcp_queue_pop(q, 0, &batch, &n, nil))
	require.Zero(t, n, "a refused call queues nothing")

	lmcpgo_host_free(hostPtr(key), 0, 0)
	st, msg := tool("off__echo", q)
	require.EqualValues(t, statusInvalidHandle, st, "after free")
	require.Contains(t, msg, "host handle")
}

// takeErr reads and frees an err_out object ("" when there is none).
func takeErr(p *_Ctype_char) string {
	if p == nil {
		return ""
	}
	defer lmcp_free(unsafe.Pointer(p))
	return goString(unsafe.Pointer(p))
}
