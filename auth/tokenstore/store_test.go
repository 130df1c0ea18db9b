package tokenstore

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// stores are the stores every contract test runs on; those needing a
// server join when its URL is in the environment (make test-tokenstores
// starts them).
func stores(t *testing.T) map[string]Store {
	t.Helper()
	f, err := OpenFile(filepath.Join(t.TempDir(), "tokens.json"))
	require.NoError(t, err)
	out := map[string]Store{"memory": NewMemory(), "file": f}
	for name, s := range serverStores(t) {
		out[name] = s
	}
	for _, s := range out {
		t.Cleanup(func() { s.Close() })
	}
	return out
}

func uniqueKey(t *testing.T) string {
	return fmt.Sprintf("test|%s|%d|%d", t.Name(), os.Getpid(), time.Now().UnixNano())
}

func TestContract(t *testing.T) {
	ctx := context.Background()
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			key := uniqueKey(t)
			rec, ver, err := s.Load(ctx, key)
			require.NoError(t, err)
			require.Nil(t, rec)
			require.Equal(t, Version(0), ver)

			first := &Record{RefreshToken: "rt-1", Generation: 1, State: StateOK, Lease: &Lease{Owner: "a", Until: 42},
				DPoPJKT: "jkt", DPoPKey: testKeyPEM, Issuer: "https://as"}
			v1, won, err := s.CompareAndSave(ctx, key, 0, first)
			require.NoError(t, err)
			require.Nil(t, won)
			require.Greater(t, v1, Version(0))

			// A second writer that also read "nothing" loses and learns
			// the winner.
			v, won, err := s.CompareAndSave(ctx, key, 0, &Record{RefreshToken: "rt-other"})
			require.NoError(t, err)
			require.Equal(t, v1, v)
			require.Equal(t, first, won)

			rec, ver, err = s.Load(ctx, key)
			require.NoError(t, err)
			require.Equal(t, v1, ver)
			require.Equal(t, first, rec)

			second := &Record{AccessToken: "at-2", RefreshToken: "rt-2", Generation: 2, State: StateOK, ExpiresAt: 99}
			v2, won, err := s.CompareAndSave(ctx, key, v1, second)
			require.NoError(t, err)
			require.Nil(t, won)
			require.Greater(t, v2, v1)

			// A stale version loses even though it once was right.
			v, won, err = s.CompareAndSave(ctx, key, v1, first)
			require.NoError(t, err)
			require.Equal(t, v2, v)
			require.Equal(t, second, won)

			// Keys are independent.
			rec, ver, err = s.Load(ctx, key+"-other")
			require.NoError(t, err)
			require.Nil(t, rec)
			require.Equal(t, Version(0), ver)
		})
	}
}

// TestConcurrentWritersLoseNoUpdate: goroutines increment a generation
// by load + compare-and-save; every increment survives (a store without
// the compare loses some).
func TestConcurrentWritersLoseNoUpdate(t *testing.T) {
	ctx := context.Background()
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			key := uniqueKey(t)
			const workers, each = 8, 25
			var wg sync.WaitGroup
			errs := make(chan error, workers)
			for w := 0; w < workers; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					errs <- increment(ctx, s, key, each)
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				require.NoError(t, err)
			}
			rec, _, err := s.Load(ctx, key)
			require.NoError(t, err)
			require.Equal(t, uint64(workers*each), rec.Generation)
		})
	}
}

func increment(ctx context.Context, s Store, key string, n int) error {
	for i := 0; i < n; {
		rec, ver, err := s.Load(ctx, key)
		if err != nil {
			return err
		}
		next := &Record{}
		if rec != nil {
			next = rec.Clone()
		}
		next.Generation++
		_, won, err := s.CompareAndSave(ctx, key, ver, next)
		if err != nil {
			return err
		}
		if won == nil {
			i++
		}
	}
	return nil
}

// TestFileStoreAcrossProcesses: processes (this test binary re-run)
// increment one file store's generation at once; none is lost.
func TestFileStoreAcrossProcesses(t *testing.T) {
	if path := os.Getenv("TOKENSTORE_CHILD_FILE"); path != "" {
		s, err := OpenFile(path)
		require.NoError(t, err)
		n, _ := strconv.Atoi(os.Getenv("TOKENSTORE_CHILD_N"))
		require.NoError(t, increment(context.Background(), s, "shared", n))
		return
	}
	path := filepath.Join(t.TempDir(), "tokens.json")
	const procs, each = 4, 30
	var cmds []*exec.Cmd
	for i := 0; i < procs; i++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestFileStoreAcrossProcesses$", "-test.count=1")
		cmd.Env = append(os.Environ(), "TOKENSTORE_CHILD_FILE="+path, "TOKENSTORE_CHILD_N="+strconv.Itoa(each))
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &out
		require.NoError(t, cmd.Start())
		cmds = append(cmds, cmd)
		t.Cleanup(func() {
			if cmd.ProcessState == nil {
				_ = cmd.Process.Kill()
				_ = cmd.Wait()
			}
		})
	}
	for _, cmd := range cmds {
		require.NoError(t, cmd.Wait(), "a child failed: %v", cmd.Stdout)
	}
	s, err := OpenFile(path)
	require.NoError(t, err)
	rec, _, err := s.Load(context.Background(), "shared")
	require.NoError(t, err)
	require.Equal(t, uint64(procs*each), rec.Generation)
}

func TestFileStoreFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "tokens.json")
	s, err := OpenFile(path)
	require.NoError(t, err)
	_, _, err = s.CompareAndSave(context.Background(), "k", 0, &Record{RefreshToken: "rt-secret-value", DPoPJKT: "jkt", DPoPKey: testKeyPEM})
	require.NoError(t, err)
	for _, p := range []string{path, path + ".lock"} {
		st, err := os.Stat(p)
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o600), st.Mode().Perm(), p)
	}
	// No temporary file is left behind.
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 2)

	// The key is in the file (mode 0600) and comes back as it went in.
	rec, _, err := s.Load(context.Background(), "k")
	require.NoError(t, err)
	require.Equal(t, testKeyPEM, rec.DPoPKey)

	// A broken file is named, never quoted.
	require.NoError(t, os.WriteFile(path, []byte(`{"grants": rt-secret-value `+testKeyPEM), 0o600))
	_, _, err = s.Load(context.Background(), "k")
	require.ErrorContains(t, err, "not a token store file")
	require.NotContains(t, err.Error(), "rt-secret-value")
	require.NotContains(t, err.Error(), "MIGHAgEAMBMG")
	_, _, err = s.CompareAndSave(context.Background(), "k", 1, &Record{})
	require.Error(t, err)
	require.NotContains(t, err.Error(), "rt-secret-value")
	require.NotContains(t, err.Error(), "MIGHAgEAMBMG")
}

// testKeyPEM is a P-256 private key in PKCS#8 PEM, as a DPoP-bound
// record carries it (generated for these tests only).
const testKeyPEM = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgR8zmf3Ef46liknUN
zZ8UXuIvC1BHxQ59iFWyOgowWgmhRANCAATkofR+7e/gKjZ/Hemir3HB6UqAZrql
a9b83azvDE56zFxecai+X9EBJcCElNmvxQ+jV/sNO9paup4WVjGKplsn
-----END PRIVATE KEY-----
`

// TestRecordPrintsNoSecret: a record printed by mistake (%v, %+v, %#v,
// %s) shows what it is, never its tokens, key or client secret.
func TestRecordPrintsNoSecret(t *testing.T) {
	rec := &Record{AccessToken: "at-secret", RefreshToken: "rt-secret", DPoPJKT: "jkt-1", DPoPKey: testKeyPEM,
		ClientSecret: "cs-secret", Generation: 3, Lease: &Lease{Owner: "o", Until: 9}}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
		out := fmt.Sprintf(verb, rec)
		for _, secret := range []string{"at-secret", "rt-secret", "cs-secret", "PRIVATE KEY", "MIGHAgEAMBMG"} {
			require.NotContains(t, out, secret, verb)
		}
		require.Contains(t, out, "generation 3", verb)
		require.Contains(t, out, "jkt-1", verb)
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		spec Spec
		want string
	}{
		{Spec{Type: "file"}, "path: required"},
		{Spec{Type: "file", Path: filepath.Join(dir, "missing", "t.json")}, "does not exist"},
		{Spec{Type: "file", Path: dir}, "is a directory"},
		{Spec{Type: "floppy"}, `"floppy" is not`},
	} {
		_, err := Open(tc.spec)
		require.ErrorContains(t, err, tc.want)
	}
}

func TestClosedStore(t *testing.T) {
	s, err := OpenFile(filepath.Join(t.TempDir(), "t.json"))
	require.NoError(t, err)
	require.NoError(t, s.Close())
	_, _, err = s.Load(context.Background(), "k")
	require.ErrorIs(t, err, ErrClosed)
	_, _, err = s.CompareAndSave(context.Background(), "k", 0, &Record{})
	require.ErrorIs(t, err, ErrClosed)
}

// TestServerStoreErrors: a server that is not there is reported without
// the password of the URL; a bad URL is named.
func TestServerStoreErrors(t *testing.T) {
	ctx := context.Background()
	port := closedPort(t)
	pg, err := OpenPostgres("postgres://u:hunter2@127.0.0.1:" + port + "/db?sslmode=disable&connect_timeout=5")
	require.NoError(t, err)
	defer pg.Close()
	rd, err := OpenRedis("redis://:hunter2@127.0.0.1:" + port + "/0")
	require.NoError(t, err)
	defer rd.Close()
	for name, s := range map[string]Store{"postgres": pg, "redis": rd} {
		_, _, err := s.Load(ctx, "k")
		require.Error(t, err, name)
		require.NotContains(t, err.Error(), "hunter2", name)
		_, _, err = s.CompareAndSave(ctx, "k", 0, &Record{RefreshToken: "rt-secret"})
		require.Error(t, err, name)
		require.NotContains(t, err.Error(), "hunter2", name)
		require.NotContains(t, err.Error(), "rt-secret", name)
	}
	for _, tc := range []struct{ spec Spec }{
		{Spec{Type: "postgres", URL: "postgres://u:hunter2@h:notaport/db"}},
		{Spec{Type: "redis", URL: "redis://:hunter2@h:6379/notadb"}},
	} {
		_, err := Open(tc.spec)
		require.ErrorContains(t, err, "url: not a valid")
		require.NotContains(t, err.Error(), "hunter2")
	}
}

// closedPort is a loopback port nothing listens on.
func closedPort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	_, port, _ := net.SplitHostPort(l.Addr().String())
	require.NoError(t, l.Close())
	return port
}
