package main

import (
	"sync"
	"testing"
	"unsafe"

	"github.com/lemonmcp/lemonmcp/core"
	"github.com/lemonmcp/lemonmcp/transport/memory"
	"github.com/stretchr/testify/require"
)

// Status values as the C header numbers them (test files cannot use cgo).
const (
	statusInvalidHandle = -2
	statusNotFound      = -4
	statusInternal      = -14
)

// newTestClient registers a client over an in-memory pair, as
// lmcp_client_new would, and returns it with its handle key.
func newTestClient(t *testing.T) (*core.Client, unsafe.Pointer) {
	tr, _ := memory.NewPair(64)
	c := core.New(core.DefaultOptions("test"), tr)
	key := clients.registry.Save(c)
	t.Cleanup(func() { lmcp_client_free(clientPtr(key)) })
	return c, key
}

func clientPtr(key unsafe.Pointer) *_Ctype_lmcp_client { return (*_Ctype_lmcp_client)(key) }

// TestExportsRaceFree calls an export from many goroutines while the handle
// is freed: each call answers as a live client (no such call: NOT_FOUND) or
// as a freed handle (INVALID_HANDLE), never anything else, and -race sees no
// data race.
func TestExportsRaceFree(t *testing.T) {
	for it := 0; it < 20; it++ {
		_, key := newTestClient(t)
		var wg sync.WaitGroup
		got := make(chan int, 4000)
		for g := 0; g < 4; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 500; i++ {
					got <- int(lmcp_client_cancel(clientPtr(key), 1))
				}
			}()
		}
		lmcp_client_free(clientPtr(key))
		wg.Wait()
		close(got)
		for st := range got {
			require.Contains(t, []int{statusNotFound, statusInvalidHandle}, st)
		}
		require.EqualValues(t, statusInvalidHandle, lmcp_client_cancel(clientPtr(key), 1), "after free")
	}
}

// TestPanicInExportPoisonsClient runs an export's panic recovery
// (handleKind.recover) with a panic: the export returns LMCP_E_INTERNAL, and every
// later call on that client does too, with a message saying why.
func TestPanicInExportPoisonsClient(t *testing.T) {
	c, key := newTestClient(t)
	st := lmcp_client_cancel(clientPtr(key), 1)
	require.EqualValues(t, statusNotFound, st, "healthy: no such call")
	func() {
		defer clients.recover(&st, nil, clientPtr(key), "lmcp_client_cancel")
		panic("boom")
	}()
	require.EqualValues(t, statusInternal, st)
	require.EqualValues(t, statusInternal, lmcp_client_cancel(clientPtr(key), 1), "poisoned: every later call")
	require.NotNil(t, c.Poisoned())
	require.Contains(t, c.Poisoned().Message, "poisoned by an earlier internal error (in lmcp_client_cancel)")
}
