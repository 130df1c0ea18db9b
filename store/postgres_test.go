package store

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// TestPostgresConcurrentCreate: many stores (as many processes) use a
// database without the table for the first time at the same instant;
// every one succeeds. CREATE TABLE IF NOT EXISTS alone lets concurrent
// creators fail with a unique violation on pg_type; the advisory lock
// makes them take turns. Each round runs in a fresh schema (search_path),
// so the real table name is created afresh without touching the table
// other tests use.
func TestPostgresConcurrentCreate(t *testing.T) {
	base := os.Getenv("LEMONMCP_TEST_POSTGRES_URL")
	if base == "" {
		if os.Getenv("LEMONMCP_REQUIRE_STORES") != "" {
			t.Fatal("LEMONMCP_TEST_POSTGRES_URL must name a server")
		}
		t.Skip("LEMONMCP_TEST_POSTGRES_URL names no server (make test-tokenstores starts one)")
	}
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, base)
	require.NoError(t, err)
	defer admin.Close(ctx)
	const rounds, creators = 4, 8
	for round := 0; round < rounds; round++ {
		schema := fmt.Sprintf("lemonmcp_create_%d_%d_%d", os.Getpid(), time.Now().UnixNano(), round)
		_, err := admin.Exec(ctx, "CREATE SCHEMA "+schema)
		require.NoError(t, err)
		t.Cleanup(func() { _, _ = admin.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE") })
		u, err := url.Parse(base)
		require.NoError(t, err)
		q := u.Query()
		q.Set("search_path", schema)
		u.RawQuery = q.Encode()

		var stores []*Postgres
		for i := 0; i < creators; i++ {
			s, err := OpenPostgres(u.String())
			require.NoError(t, err)
			defer s.Close()
			// Connected beforehand, so the creators meet at the statement.
			require.NoError(t, s.pool.Ping(ctx))
			stores = append(stores, s)
		}
		start := make(chan struct{})
		errs := make(chan error, creators)
		var wg sync.WaitGroup
		for i, s := range stores {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				_, _, err := s.CompareAndSave(ctx, "grants", fmt.Sprintf("k%d", i), 0, gen(1, nil))
				errs <- err
			}()
		}
		close(start)
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err, "round %d", round)
		}
		var n int
		require.NoError(t, admin.QueryRow(ctx, "SELECT count(*) FROM "+schema+"."+PostgresTable).Scan(&n))
		require.Equal(t, creators, n)
	}
}
