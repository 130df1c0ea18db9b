package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/store"
)

// UniqueKey is a key no earlier run used (a server store outlives a test).
func UniqueKey(t testing.TB) string {
	return fmt.Sprintf("test|%s|%d|%d", t.Name(), os.Getpid(), time.Now().UnixNano())
}

func body(s string) *store.Document { return &store.Document{Body: []byte(s)} }

// RequireDoc compares documents as JSON (PostgreSQL's jsonb spaces them
// its own way).
func RequireDoc(t *testing.T, want, got *store.Document) {
	t.Helper()
	require.NotNil(t, got)
	require.JSONEq(t, string(want.Body), string(got.Body))
	require.Equal(t, want.Lease, got.Lease)
}

// Contract checks that s keeps the store's contract: nothing is version
// 0; a first save wins once; a stale version loses and learns the winner;
// leases travel beside the body; collections and keys are independent; a
// body that is not JSON is refused before anything is written.
func Contract(t *testing.T, s store.Store) {
	t.Helper()
	ctx := context.Background()
	key := UniqueKey(t)
	d, ver, err := s.Load(ctx, "grants", key)
	require.NoError(t, err)
	require.Nil(t, d)
	require.Equal(t, store.Version(0), ver)

	first := &store.Document{Body: []byte(`{"refresh_token":"rt-1","generation":1}`), Lease: &store.Lease{Owner: "a", Until: 42}}
	v1, won, err := s.CompareAndSave(ctx, "grants", key, 0, first)
	require.NoError(t, err)
	require.Nil(t, won)
	require.Greater(t, v1, store.Version(0))

	// A second writer that also read "nothing" loses and learns the winner.
	v, won, err := s.CompareAndSave(ctx, "grants", key, 0, body(`{"refresh_token":"rt-other"}`))
	require.NoError(t, err)
	require.Equal(t, v1, v)
	RequireDoc(t, first, won)

	d, ver, err = s.Load(ctx, "grants", key)
	require.NoError(t, err)
	require.Equal(t, v1, ver)
	RequireDoc(t, first, d)

	// A lease-only write, then one that releases it.
	leased := first.Clone()
	leased.Lease = &store.Lease{Owner: "b", Until: 77}
	vl, won, err := s.CompareAndSave(ctx, "grants", key, v1, leased)
	require.NoError(t, err)
	require.Nil(t, won)
	require.Greater(t, vl, v1)
	d, ver, err = s.Load(ctx, "grants", key)
	require.NoError(t, err)
	require.Equal(t, vl, ver)
	RequireDoc(t, leased, d)
	only, err := store.VersionOf(ctx, s, "grants", key)
	require.NoError(t, err)
	require.Equal(t, vl, only, "the version alone is the loaded one, after a lease-only write too")
	only, err = store.VersionOf(ctx, s, "grants", key+"-none")
	require.NoError(t, err)
	require.Zero(t, only)

	second := body(`{"access_token":"at-2","generation":2}`)
	v2, won, err := s.CompareAndSave(ctx, "grants", key, vl, second)
	require.NoError(t, err)
	require.Nil(t, won)
	require.Greater(t, v2, vl)

	// A stale version loses even though it once was right.
	v, won, err = s.CompareAndSave(ctx, "grants", key, v1, first)
	require.NoError(t, err)
	require.Equal(t, v2, v)
	RequireDoc(t, second, won)

	// Collections and keys are independent.
	for _, ck := range [][2]string{{"pins", key}, {"grants", key + "-other"}} {
		d, ver, err = s.Load(ctx, ck[0], ck[1])
		require.NoError(t, err)
		require.Nil(t, d)
		require.Equal(t, store.Version(0), ver)
	}
	// A body that is not JSON is refused before anything is written.
	_, _, err = s.CompareAndSave(ctx, "pins", key, 0, body(`{not json`))
	require.ErrorContains(t, err, "is not a JSON value")
	_, ver, err = s.Load(ctx, "pins", key)
	require.NoError(t, err)
	require.Equal(t, store.Version(0), ver)
}

// ConcurrentUpdates checks that goroutines incrementing one counter with
// store.Update (load, change, compare-and-save, again on a loss) all
// keep their increments (a store without the compare loses some).
func ConcurrentUpdates(t *testing.T, s store.Store) {
	t.Helper()
	ctx := context.Background()
	key := UniqueKey(t)
	const workers, each = 6, 15
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- Increment(ctx, s, key, each)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	d, _, err := s.Load(ctx, "counters", key)
	require.NoError(t, err)
	require.Equal(t, workers*each, Counter(t, d))
}

// Increment adds 1 to the counter document "counters"/key n times, each
// by store.Update.
func Increment(ctx context.Context, s store.Store, key string, n int) error {
	for i := 0; i < n; i++ {
		_, _, err := store.Update(ctx, s, "counters", key, func(cur *store.Document) (*store.Document, error) {
			var c struct{ N int }
			if cur != nil {
				if err := json.Unmarshal(cur.Body, &c); err != nil {
					return nil, err
				}
			}
			return body(fmt.Sprintf(`{"n":%d}`, c.N+1)), nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// Counter is the count in a counter document.
func Counter(t *testing.T, d *store.Document) int {
	t.Helper()
	require.NotNil(t, d)
	var c struct{ N int }
	require.NoError(t, json.Unmarshal(d.Body, &c))
	return c.N
}
