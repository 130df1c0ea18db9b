package main

import (
	"strings"
	"testing"
	"unsafe"

	"github.com/lemonmcp/lemonmcp/core"
	"github.com/stretchr/testify/require"
)

// TestPanicInHostExportIsReported: a panic in a host export (see
// TestPanicInExportPoisons) is also reported as an "error" log event of the
// host, which names no server.
func TestPanicInHostExportIsReported(t *testing.T) {
	h, key := newTestHost(t)
	logs := make(chan string, 4)
	h.SetEventHandler(func(kind string, payload []byte) {
		if kind == "log" {
			logs <- string(payload)
		}
	}, nil)
	require.EqualValues(t, statusNotFound, lmcp_host_cancel(hostPtr(key), 1), "healthy: no such call")
	var st _Ctype_lmcp_status
	func() {
		defer hosts.recover(&st, nil, hostPtr(key), "lmcp_host_cancel")
		panic("boom")
	}()
	require.EqualValues(t, statusInternal, st)
	report := <-logs
	require.Contains(t, report, `"server":null`)
	require.Contains(t, report, `"level":"error"`)
	require.Contains(t, report, "internal error in lmcp_host_cancel: boom")
	require.Contains(t, report, "the host is poisoned")
}

// cString reads a NUL-terminated C string (test files cannot use cgo).
func goString(p unsafe.Pointer) string {
	var b strings.Builder
	for i := 0; ; i++ {
		c := *(*byte)(unsafe.Add(p, i))
		if c == 0 {
			return b.String()
		}
		b.WriteByte(c)
	}
}

// TestStatusStringIsCoreNames checks lmcp_status_string over every value
// from -20 to 1: it returns core.Status's name (the one table of them),
// a distinct name for each status, "unknown status" for the rest, and the
// same static string on every call.
func TestStatusStringIsCoreNames(t *testing.T) {
	known := map[core.Status]bool{}
	for _, s := range core.Statuses() {
		known[s] = true
	}
	require.Len(t, known, 15, "LMCP_OK and LMCP_E_INVALID_ARGUMENT..LMCP_E_INTERNAL")
	seen := map[string]core.Status{}
	for s := -20; s <= 1; s++ {
		t.Run(core.Status(s).String(), func(t *testing.T) {
			p := lmcp_status_string(_Ctype_lmcp_status(s))
			require.NotNil(t, p)
			name := goString(unsafe.Pointer(p))
			require.Equal(t, core.Status(s).String(), name)
			require.Same(t, p, lmcp_status_string(_Ctype_lmcp_status(s)), "static")
			if !known[core.Status(s)] {
				require.Equal(t, "unknown status", name)
				return
			}
			require.NotEqual(t, "unknown status", name)
			prev, dup := seen[name]
			require.False(t, dup, "statuses %d and %d share the name %q", prev, s, name)
			seen[name] = core.Status(s)
		})
	}
	require.Equal(t, "internal error", goString(unsafe.Pointer(lmcp_status_string(statusInternal))))
	require.Equal(t, "unknown status", goString(unsafe.Pointer(lmcp_status_string(-1<<31))))
}
