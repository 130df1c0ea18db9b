package main

import (
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/lemonmcp/lemonmcp/core"
	"github.com/lemonmcp/lemonmcp/host"
	"github.com/stretchr/testify/require"
)

// More status values as the C header numbers them.
const (
	statusOK           = 0
	statusInvalidState = -3
)

// newTestHost registers a host of one disabled server (nothing to start),
// as lmcp_host_new would, and returns it with its handle key.
func newTestHost(t *testing.T) (*host.Host, unsafe.Pointer) {
	h, err := host.Parse([]byte(`{"mcpServers":{"off":{"command":"/nonexistent/lmcp-test","enabled":false}}}`), "test")
	require.Nil(t, err)
	key := hosts.registry.Save(h)
	t.Cleanup(func() { lmcp_host_free(hostPtr(key)) })
	return h, key
}

func hostPtr(key unsafe.Pointer) *_Ctype_lmcp_host { return (*_Ctype_lmcp_host)(key) }

// TestHostExportsRaceFree calls host exports from many goroutines while the
// handle is freed: each call answers as a live host or as a freed handle
// (INVALID_HANDLE), never anything else, and -race sees no data race.
func TestHostExportsRaceFree(t *testing.T) {
	for it := 0; it < 20; it++ {
		_, key := newTestHost(t)
		var wg sync.WaitGroup
		got := make(chan int, 8000)
		for g := 0; g < 4; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 500; i++ {
					switch (g + i) % 4 {
					case 0:
						got <- int(lmcp_host_cancel(hostPtr(key), 1))
					case 1:
						got <- int(lmcp_host_respond(hostPtr(key), 7, statusOK, nil, 0, nil))
					case 2:
						got <- int(lmcp_host_connect(hostPtr(key), nil))
					default:
						got <- int(lmcp_host_wait_ready(hostPtr(key), 0, nil))
					}
				}
			}()
		}
		lmcp_host_free(hostPtr(key))
		wg.Wait()
		close(got)
		for st := range got {
			require.Contains(t, []int{statusOK, statusNotFound, statusInvalidState, statusInvalidHandle}, st)
		}
		require.EqualValues(t, statusInvalidHandle, lmcp_host_cancel(hostPtr(key), 1), "after free")
	}
}

// TestPanicInHostExportPoisonsHost runs a host export's panic recovery
// (handleKind.recover) with a panic: the export returns LMCP_E_INTERNAL, every
// later call on that host does too, naming the earlier failure, and the
// panic is reported as an "error" log event of the host.
func TestPanicInHostExportPoisonsHost(t *testing.T) {
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
	require.EqualValues(t, statusInternal, lmcp_host_cancel(hostPtr(key), 1), "poisoned: every later call")
	require.EqualValues(t, statusInternal, lmcp_host_connect(hostPtr(key), nil))
	require.NotNil(t, h.Poisoned())
	require.Contains(t, h.Poisoned().Message, "poisoned by an earlier internal error (in lmcp_host_cancel)")
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
