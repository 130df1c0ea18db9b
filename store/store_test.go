package store_test

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/store"
	"github.com/lemonmcp/lemonmcp/store/storetest"
)

func uniqueKey(t *testing.T) string { return storetest.UniqueKey(t) }

func body(s string) *store.Document { return &store.Document{Body: []byte(s)} }

// TestContract: every backend, sealed or not, keeps the contract
// (storetest.Contract).
func TestContract(t *testing.T) {
	for name, s := range storetest.All(t) {
		t.Run(name, func(t *testing.T) { storetest.Contract(t, s) })
	}
}

// TestConcurrentUpdatesAllKept: goroutines increment one counter with
// store.Update; every increment survives, on every backend
// (storetest.ConcurrentUpdates).
func TestConcurrentUpdatesAllKept(t *testing.T) {
	for name, s := range storetest.All(t) {
		t.Run(name, func(t *testing.T) { storetest.ConcurrentUpdates(t, s) })
	}
}

// TestFileStoreAcrossProcesses: processes (this test binary re-run)
// increment one file store's counter at once; none is lost.
func TestFileStoreAcrossProcesses(t *testing.T) {
	if path := os.Getenv("STORE_CHILD_FILE"); path != "" {
		s, err := store.OpenFile(path)
		require.NoError(t, err)
		n, _ := strconv.Atoi(os.Getenv("STORE_CHILD_N"))
		require.NoError(t, storetest.Increment(context.Background(), s, "shared", n))
		return
	}
	path := filepath.Join(t.TempDir(), "store.json")
	const procs, each = 4, 30
	var cmds []*exec.Cmd
	for i := 0; i < procs; i++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestFileStoreAcrossProcesses$", "-test.count=1")
		cmd.Env = append(os.Environ(), "STORE_CHILD_FILE="+path, "STORE_CHILD_N="+strconv.Itoa(each))
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
	s, err := store.OpenFile(path)
	require.NoError(t, err)
	d, _, err := s.Load(context.Background(), "counters", "shared")
	require.NoError(t, err)
	require.Equal(t, procs*each, storetest.Counter(t, d))
}

// TestFileStoreFiles: the file and its lock are mode 0600, nothing
// temporary is left, and a broken file is named, never quoted nor
// overwritten.
func TestFileStoreFiles(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "store.json")
	s, err := store.OpenFile(path)
	require.NoError(t, err)
	_, _, err = s.CompareAndSave(ctx, "grants", "k", 0, body(`{"refresh_token":"rt-secret-value"}`))
	require.NoError(t, err)
	for _, p := range []string{path, path + ".lock"} {
		st, err := os.Stat(p)
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o600), st.Mode().Perm(), p)
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 2)

	for _, broken := range []string{`{"grants": rt-secret-value `, `{"format": 2, "collections": {"x": "rt-secret-value"}}`, `["rt-secret-value"]`} {
		require.NoError(t, os.WriteFile(path, []byte(broken), 0o600))
		_, _, err = s.Load(ctx, "grants", "k")
		require.ErrorContains(t, err, path)
		require.NotContains(t, err.Error(), "rt-secret-value")
		_, _, err = s.CompareAndSave(ctx, "grants", "k", 1, body(`{}`))
		require.Error(t, err)
		require.NotContains(t, err.Error(), "rt-secret-value")
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		require.Equal(t, broken, string(data), "a broken file was rewritten")
	}
}

// TestFileStoreReadsEarlierFormats: a token store file and a pin file of
// earlier releases read as the collections "grants" and "pins" (the
// token store's lease out of its record), and the next write keeps what
// they held.
func TestFileStoreReadsEarlierFormats(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens.json")
	require.NoError(t, os.WriteFile(tokens, []byte(`{"grants":{"k":{"version":7,"record":{"access_token":"at","generation":3,"lease":{"owner":"old","until":99},"state":"ok"}}}}`), 0o600))
	s, err := store.OpenFile(tokens)
	require.NoError(t, err)
	defer s.Close()
	d, ver, err := s.Load(ctx, "grants", "k")
	require.NoError(t, err)
	require.Equal(t, store.Version(7), ver)
	storetest.RequireDoc(t, &store.Document{Body: []byte(`{"access_token":"at","generation":3,"state":"ok"}`), Lease: &store.Lease{Owner: "old", Until: 99}}, d)
	v, won, err := s.CompareAndSave(ctx, "grants", "k2", 0, body(`{"generation":1}`))
	require.NoError(t, err)
	require.Nil(t, won)
	require.Equal(t, store.Version(1), v)
	d, ver, err = s.Load(ctx, "grants", "k")
	require.NoError(t, err)
	require.Equal(t, store.Version(7), ver, "the earlier grant survives the next write")
	require.Equal(t, "old", d.Lease.Owner)

	pins := filepath.Join(dir, "pins.json")
	require.NoError(t, os.WriteFile(pins, []byte(`{"version":1,"servers":{"sha256:abc":{"name":"fs","kinds":{"tools":{}}}}}`), 0o600))
	p, err := store.OpenFile(pins)
	require.NoError(t, err)
	defer p.Close()
	d, ver, err = p.Load(ctx, "pins", "sha256:abc")
	require.NoError(t, err)
	require.Equal(t, store.Version(1), ver)
	require.JSONEq(t, `{"name":"fs","kinds":{"tools":{}}}`, string(d.Body))

	require.NoError(t, os.WriteFile(pins, []byte(`{"version":9,"servers":{}}`), 0o600))
	_, _, err = p.Load(ctx, "pins", "sha256:abc")
	require.ErrorContains(t, err, "a pin file of a version this library does not read")
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		spec store.Spec
		want string
	}{
		{store.Spec{Type: "file"}, "path: required"},
		{store.Spec{Type: "file", Path: filepath.Join(dir, "missing", "t.json")}, "does not exist"},
		{store.Spec{Type: "file", Path: dir}, "is a directory"},
		{store.Spec{Type: "floppy"}, `"floppy" is not`},
		{store.Spec{Type: "app"}, `needs the application's store_load / store_save`},
		{store.Spec{Type: "memory", Encryption: &store.Encryption{KeyEnv: "LEMONMCP_TEST_UNSET_KEY"}}, "LEMONMCP_TEST_UNSET_KEY is not set"},
	} {
		_, err := store.Open(tc.spec, nil)
		require.ErrorContains(t, err, tc.want)
	}
}

func TestClosedStore(t *testing.T) {
	s, err := store.OpenFile(filepath.Join(t.TempDir(), "t.json"))
	require.NoError(t, err)
	require.NoError(t, s.Close())
	_, _, err = s.Load(context.Background(), "grants", "k")
	require.ErrorIs(t, err, store.ErrClosed)
	_, _, err = s.CompareAndSave(context.Background(), "grants", "k", 0, body(`{}`))
	require.ErrorIs(t, err, store.ErrClosed)
}

// TestServerStoreErrors: a server that is not there is reported without
// the password of the URL; a bad URL is named.
func TestServerStoreErrors(t *testing.T) {
	ctx := context.Background()
	port := closedPort(t)
	pg, err := store.OpenPostgres("postgres://u:hunter2@127.0.0.1:" + port + "/db?sslmode=disable&connect_timeout=5")
	require.NoError(t, err)
	defer pg.Close()
	rd, err := store.OpenRedis("redis://:hunter2@127.0.0.1:" + port + "/0")
	require.NoError(t, err)
	defer rd.Close()
	for name, s := range map[string]store.Store{"postgres": pg, "redis": rd} {
		_, _, err := s.Load(ctx, "grants", "k")
		require.Error(t, err, name)
		require.NotContains(t, err.Error(), "hunter2", name)
		_, _, err = s.CompareAndSave(ctx, "grants", "k", 0, body(`{"refresh_token":"rt-secret"}`))
		require.Error(t, err, name)
		require.NotContains(t, err.Error(), "hunter2", name)
		require.NotContains(t, err.Error(), "rt-secret", name)
	}
	for _, spec := range []store.Spec{
		{Type: "postgres", URL: "postgres://u:hunter2@h:notaport/db"},
		{Type: "redis", URL: "redis://:hunter2@h:6379/notadb"},
	} {
		_, err := store.Open(spec, nil)
		require.ErrorContains(t, err, "url: not a valid")
		require.NotContains(t, err.Error(), "hunter2")
	}
}

// TestAppStoreAnswers: the application's malformed answers are named,
// never trusted.
func TestAppStoreAnswers(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name, load, save, want string
	}{
		{"load not an object", `[1]`, `{}`, `answer to store_load is not`},
		{"load version without document", `{"version":3}`, `{}`, `has version 3 but no document`},
		{"load document without body", `{"version":3,"document":{"lease":null}}`, `{}`, `has version 3 but no document`},
		{"save without version", `{"version":0}`, `{}`, `answer to store_save is not`},
		{"save version not above", `{"version":0}`, `{"version":0}`, `must give a version above`},
		{"conflict at the expected version", `{"version":0}`, `{"conflict":true,"version":0}`, `gives the expected version 0 back`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := store.NewApp(func(_ context.Context, kind string, _ []byte) ([]byte, error) {
				if kind == store.AppLoad {
					return []byte(tc.load), nil
				}
				return []byte(tc.save), nil
			})
			_, _, err := s.Load(ctx, "grants", "k")
			if err == nil {
				_, _, err = s.CompareAndSave(ctx, "grants", "k", 0, body(`{}`))
			}
			require.ErrorContains(t, err, tc.want)
		})
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
