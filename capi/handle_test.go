package main

import (
	"sync"
	"testing"
	"unsafe"

	"github.com/lemonmcp/lemonmcp/core"
	"github.com/lemonmcp/lemonmcp/host"
	"github.com/lemonmcp/lemonmcp/transport/memory"
	"github.com/stretchr/testify/require"
)

// Status values as the C header numbers them (test files cannot use cgo).
const (
	statusOK            = 0
	statusInvalidHandle = -2
	statusInvalidState  = -3
	statusNotFound      = -4
	statusInternal      = -14
)

func clientPtr(key unsafe.Pointer) *_Ctype_lmcp_client { return (*_Ctype_lmcp_client)(key) }
func hostPtr(key unsafe.Pointer) *_Ctype_lmcp_host     { return (*_Ctype_lmcp_host)(key) }

// newTestClient registers a client over an in-memory pair, as
// lmcp_client_new would, and returns it with its handle key.
func newTestClient(t *testing.T) (*core.Client, unsafe.Pointer) {
	tr, _ := memory.NewPair(64)
	c := core.New(core.DefaultOptions("test"), tr)
	key := clients.registry.Save(c)
	t.Cleanup(func() { lmcp_client_free(clientPtr(key)) })
	return c, key
}

// newTestHost registers a host of one disabled server (nothing to start),
// as lmcp_host_new would, and returns it with its handle key.
func newTestHost(t *testing.T) (*host.Host, unsafe.Pointer) {
	h, err := host.Parse([]byte(`{"mcpServers":{"off":{"command":"/nonexistent/lmcp-test","enabled":false}}}`), "test")
	require.Nil(t, err)
	key := hosts.registry.Save(h)
	t.Cleanup(func() { lmcp_host_free(hostPtr(key)) })
	return h, key
}

// handleCase is one handle kind as these tests drive it.
type handleCase struct {
	name string
	// open registers a new object and returns its key and its poisoning.
	open func(t *testing.T) (unsafe.Pointer, func() *core.Error)
	free func(key unsafe.Pointer)
	// ops are exports that a live object answers with one of live.
	ops  []func(key unsafe.Pointer) int
	live []int
	// recoverFrom runs the kind's panic recovery around a panic in export.
	recoverFrom func(key unsafe.Pointer, export string) _Ctype_lmcp_status
	// cancel is lmcp_<kind>_cancel.
	cancel func(key unsafe.Pointer) int
}

var handleCases = []handleCase{
	{
		name: "client",
		open: func(t *testing.T) (unsafe.Pointer, func() *core.Error) {
			c, key := newTestClient(t)
			return key, c.Poisoned
		},
		free: func(key unsafe.Pointer) { lmcp_client_free(clientPtr(key)) },
		ops: []func(key unsafe.Pointer) int{
			func(key unsafe.Pointer) int { return int(lmcp_client_cancel(clientPtr(key), 1)) },
			func(key unsafe.Pointer) int {
				var s _Ctype_lmcp_state
				return int(lmcp_client_state(clientPtr(key), &s))
			},
		},
		live: []int{statusOK, statusNotFound},
		recoverFrom: func(key unsafe.Pointer, export string) (st _Ctype_lmcp_status) {
			defer clients.recover(&st, nil, clientPtr(key), export)
			panic("boom")
		},
		cancel: func(key unsafe.Pointer) int { return int(lmcp_client_cancel(clientPtr(key), 1)) },
	},
	{
		name: "host",
		open: func(t *testing.T) (unsafe.Pointer, func() *core.Error) {
			h, key := newTestHost(t)
			return key, h.Poisoned
		},
		free: func(key unsafe.Pointer) { lmcp_host_free(hostPtr(key)) },
		ops: []func(key unsafe.Pointer) int{
			func(key unsafe.Pointer) int { return int(lmcp_host_cancel(hostPtr(key), 1)) },
			func(key unsafe.Pointer) int { return int(lmcp_host_respond(hostPtr(key), 7, statusOK, nil, 0, nil)) },
			func(key unsafe.Pointer) int { return int(lmcp_host_connect(hostPtr(key), nil)) },
			func(key unsafe.Pointer) int { return int(lmcp_host_wait_ready(hostPtr(key), 0, nil)) },
		},
		live: []int{statusOK, statusNotFound, statusInvalidState},
		recoverFrom: func(key unsafe.Pointer, export string) (st _Ctype_lmcp_status) {
			defer hosts.recover(&st, nil, hostPtr(key), export)
			panic("boom")
		},
		cancel: func(key unsafe.Pointer) int { return int(lmcp_host_cancel(hostPtr(key), 1)) },
	},
}

// TestExportsRaceFree calls a kind's exports from many goroutines while the
// handle is freed: each call answers as a live object or as a freed handle
// (INVALID_HANDLE), never anything else, and -race sees no data race.
func TestExportsRaceFree(t *testing.T) {
	for _, tc := range handleCases {
		t.Run(tc.name, func(t *testing.T) {
			for it := 0; it < 20; it++ {
				key, _ := tc.open(t)
				var wg sync.WaitGroup
				got := make(chan int, 4*500)
				for g := 0; g < 4; g++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for i := 0; i < 500; i++ {
							got <- tc.ops[(g+i)%len(tc.ops)](key)
						}
					}()
				}
				tc.free(key)
				wg.Wait()
				close(got)
				for st := range got {
					require.Contains(t, append([]int{statusInvalidHandle}, tc.live...), st)
				}
				require.EqualValues(t, statusInvalidHandle, tc.cancel(key), "after free")
			}
		})
	}
}

// TestPanicInExportPoisons runs a kind's panic recovery
// (handleKind.recover) with a panic: the export returns LMCP_E_INTERNAL,
// and every later call on that object does too, with a message naming the
// earlier failure.
func TestPanicInExportPoisons(t *testing.T) {
	for _, tc := range handleCases {
		t.Run(tc.name, func(t *testing.T) {
			key, poisoned := tc.open(t)
			require.EqualValues(t, statusNotFound, tc.cancel(key), "healthy: no such call")
			export := "lmcp_" + tc.name + "_cancel"
			require.EqualValues(t, statusInternal, tc.recoverFrom(key, export))
			require.EqualValues(t, statusInternal, tc.cancel(key), "poisoned: every later call")
			for _, op := range tc.ops {
				require.EqualValues(t, statusInternal, op(key))
			}
			require.NotNil(t, poisoned())
			require.Contains(t, poisoned().Message, "poisoned by an earlier internal error (in "+export+")")
		})
	}
}
