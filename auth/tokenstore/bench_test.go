package tokenstore

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/store"
	"github.com/lemonmcp/lemonmcp/store/storetest"
)

// BenchmarkRefreshCycle is what one refresh costs in store operations,
// on each store: the reload before refreshing, the reload and the
// compare-and-save that claim the lease, and the compare-and-save that
// commits the new tokens and releases it (the token request itself is
// not counted). make bench-tokenstores runs it against private servers,
// with the file store in TOKENSTORE_BENCH_DIR (a directory on the disk:
// the temporary directory may be a tmpfs, where a sync costs nothing).
func BenchmarkRefreshCycle(b *testing.B) {
	dir := b.TempDir()
	if d := os.Getenv("TOKENSTORE_BENCH_DIR"); d != "" {
		require.NoError(b, os.MkdirAll(d, 0o700))
		var err error
		dir, err = os.MkdirTemp(d, "bench-")
		require.NoError(b, err)
		b.Cleanup(func() { _ = os.RemoveAll(dir) })
	}
	f, err := store.OpenFile(filepath.Join(dir, "tokens.json"))
	if err != nil {
		b.Fatal(err)
	}
	all := map[string]store.Store{"memory": store.NewMemory(), "file": f}
	for name, s := range storetest.ServerBackends(b) {
		all[name] = s
	}
	for _, s := range all {
		b.Cleanup(func() { _ = s.Close() })
	}
	b.Setenv("LEMONMCP_BENCH_STORE_KEY", storetest.NewKey())
	for _, name := range []string{"memory", "file", "postgres", "redis"} {
		inner, ok := all[name]
		if !ok {
			continue
		}
		sealed, err := store.NewSealed(inner, store.Encryption{KeyEnv: "LEMONMCP_BENCH_STORE_KEY"})
		if err != nil {
			b.Fatal(err)
		}
		for _, v := range []struct {
			name string
			s    Grants
		}{{name, Grants{Store: inner}}, {name + "+sealed", Grants{Store: sealed}}} {
			benchRefresh(b, v.name, v.s)
		}
	}
}

func benchRefresh(b *testing.B, name string, s Grants) {
	b.Run("load/"+name, func(b *testing.B) {
		ctx := context.Background()
		key := fmt.Sprintf("bench-load-%d", time.Now().UnixNano())
		rec := &Record{AccessToken: "at", RefreshToken: "rt", Generation: 1, State: StateOK, Issuer: "https://as.example.com", Resource: "https://mcp.example.com/mcp"}
		if _, _, err := s.CompareAndSave(ctx, key, 0, rec); err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if _, _, err := s.Load(ctx, key); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("refresh/"+name, func(b *testing.B) {
		ctx := context.Background()
		key := fmt.Sprintf("bench-%d", time.Now().UnixNano())
		rec := &Record{AccessToken: "at", RefreshToken: "rt", Generation: 1, State: StateOK, Issuer: "https://as.example.com", Resource: "https://mcp.example.com/mcp"}
		if _, _, err := s.CompareAndSave(ctx, key, 0, rec); err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if _, _, err := s.Load(ctx, key); err != nil { // reload before refreshing
				b.Fatal(err)
			}
			cur, ver, err := s.Load(ctx, key) // claim: read ...
			if err != nil {
				b.Fatal(err)
			}
			claimed := cur.Clone()
			claimed.Lease = &Lease{Owner: "bench", Until: time.Now().Add(10 * time.Second).UnixMilli()}
			ver, won, err := s.CompareAndSave(ctx, key, ver, claimed) // ... and compare-and-save
			if err != nil || won != nil {
				b.Fatal("claim failed", err)
			}
			next := claimed.Clone()
			next.Lease, next.Generation = nil, next.Generation+1
			if _, won, err := s.CompareAndSave(ctx, key, ver, next); err != nil || won != nil { // commit
				b.Fatal("commit failed", err)
			}
		}
	})
}
