package tokenstore

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// serverStores are the stores backed by servers named in the environment
// (make test-tokenstores starts private ones and sets
// LEMONMCP_REQUIRE_STORES, so that a missing server fails instead of
// leaving the stores out).
func serverStores(t *testing.T) map[string]Store {
	t.Helper()
	out := map[string]Store{}
	if u := os.Getenv("LEMONMCP_TEST_POSTGRES_URL"); u != "" {
		s, err := OpenPostgres(u)
		require.NoError(t, err)
		out["postgres"] = s
	}
	if u := os.Getenv("LEMONMCP_TEST_REDIS_URL"); u != "" {
		s, err := OpenRedis(u)
		require.NoError(t, err)
		out["redis"] = s
	}
	if os.Getenv("LEMONMCP_REQUIRE_STORES") != "" {
		require.Len(t, out, 2, "LEMONMCP_TEST_POSTGRES_URL and LEMONMCP_TEST_REDIS_URL must name servers")
	}
	return out
}

// benchServerStores are the server stores of the environment, for the
// benchmark.
func benchServerStores(b *testing.B) map[string]Store {
	out := map[string]Store{}
	if u := os.Getenv("LEMONMCP_TEST_POSTGRES_URL"); u != "" {
		if s, err := OpenPostgres(u); err == nil {
			out["postgres"] = s
		}
	}
	if u := os.Getenv("LEMONMCP_TEST_REDIS_URL"); u != "" {
		if s, err := OpenRedis(u); err == nil {
			out["redis"] = s
		}
	}
	return out
}
