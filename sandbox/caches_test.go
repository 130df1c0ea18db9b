package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/transport/stdio"
)

// TestCachesBoundedAndPruned: a server's cache directories are kept across
// its restarts, emptied before a start once they hold more than
// cacheLimit, and those of another server not started for cacheUnused are
// removed (by their stamp, or by the directory's age without one), while
// recent ones and those in use stay. An env entry cannot point a cache
// elsewhere.
func TestCachesBoundedAndPruned(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	root := cacheRoot()
	server := stdio.Server{Path: "/usr/bin/npx", Argv: []string{"npx", "-y", "some-server"},
		Env: []string{"PATH=/bin", "HOME=/home/elsewhere", "NPM_CONFIG_CACHE=/elsewhere"}}
	// start starts the server, which has ended by the time it returns.
	start := func() (map[string]string, string) {
		t.Helper()
		env, caches, release, err := privateDirs(server, t.TempDir())
		require.NoError(t, err)
		release()
		vars := map[string]string{}
		for _, kv := range env {
			k, v, _ := strings.Cut(kv, "=")
			_, dup := vars[k]
			require.False(t, dup, "%s twice", k)
			vars[k] = v
		}
		return vars, caches
	}
	vars, caches := start()
	require.Equal(t, root, filepath.Dir(caches))
	require.Equal(t, filepath.Join(caches, "home"), vars["HOME"], "env cannot move the caches")
	require.Equal(t, filepath.Join(caches, "npm"), vars["NPM_CONFIG_CACHE"])
	require.Equal(t, "/bin", vars["PATH"])

	// sparse writes a file of n bytes without using the disk.
	sparse := func(path string, n int64) {
		t.Helper()
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
		f, err := os.Create(path)
		require.NoError(t, err)
		require.NoError(t, f.Truncate(n))
		require.NoError(t, f.Close())
	}
	// Within the bound: kept across a restart (npx fetches once).
	kept := filepath.Join(vars["NPM_CONFIG_CACHE"], "_cacache", "package")
	sparse(kept, 64<<20)
	_, again := start()
	require.Equal(t, caches, again)
	require.FileExists(t, kept)

	// Past the bound: emptied before the next start, which gets its
	// directories back; but not while another start of the same command
	// line (another host) still runs from it.
	_, running, releaseRunning, err := privateDirs(server, t.TempDir())
	require.NoError(t, err)
	require.Equal(t, caches, running)
	sparse(filepath.Join(vars["UV_CACHE_DIR"], "wheels", "big"), cacheLimit)
	start()
	require.FileExists(t, kept, "a cache in use was emptied under its server")
	releaseRunning()
	vars, _ = start()
	require.NoFileExists(t, kept, "a cache over the bound was kept")
	require.NoFileExists(t, filepath.Join(vars["UV_CACHE_DIR"], "wheels", "big"))
	require.DirExists(t, vars["NPM_CONFIG_CACHE"])
	require.DirExists(t, vars["HOME"])

	// Other servers' caches: pruned by their last start.
	now := time.Now()
	other := func(name string, lastStart time.Duration, stamp bool) string {
		dir := filepath.Join(root, name)
		require.NoError(t, os.MkdirAll(filepath.Join(dir, "npm"), 0o700))
		at := now.Add(-lastStart)
		if stamp {
			require.NoError(t, os.WriteFile(filepath.Join(dir, cacheStamp), nil, 0o600))
			require.NoError(t, os.Chtimes(filepath.Join(dir, cacheStamp), at, at))
		} else {
			require.NoError(t, os.Chtimes(dir, at, at))
		}
		return dir
	}
	tests := []struct {
		name      string
		lastStart time.Duration
		stamp     bool
		inUse     bool
		kept      bool
	}{
		{name: "started yesterday", lastStart: 24 * time.Hour, stamp: true, kept: true},
		{name: "unused for longer than cacheUnused", lastStart: cacheUnused + time.Hour, stamp: true},
		{name: "no stamp, an old directory", lastStart: cacheUnused + time.Hour},
		{name: "no stamp, a recent directory", lastStart: time.Hour, kept: true},
		// A server up for longer than cacheUnused: its stamp is old, but
		// it holds its cache.
		{name: "in use, started long ago", lastStart: cacheUnused + time.Hour, stamp: true, inUse: true, kept: true},
	}
	dirs := make([]string, len(tests))
	for i, tc := range tests {
		dirs[i] = other("other"+string(rune('a'+i)), tc.lastStart, tc.stamp)
		if tc.inUse {
			f, err := os.OpenFile(filepath.Join(dirs[i], cacheLock), os.O_RDWR|os.O_CREATE, 0o600)
			require.NoError(t, err)
			require.NoError(t, syscall.Flock(int(f.Fd()), syscall.LOCK_SH))
			t.Cleanup(func() { _ = f.Close() })
		}
	}
	// The starting server's own cache is never pruned, however old its
	// stamp: the start renews it.
	old := now.Add(-2 * cacheUnused)
	require.NoError(t, os.Chtimes(filepath.Join(caches, cacheStamp), old, old))
	start()
	require.DirExists(t, caches)
	fi, err := os.Stat(filepath.Join(caches, cacheStamp))
	require.NoError(t, err)
	require.True(t, fi.ModTime().After(old), "the start did not renew its stamp")
	for i, tc := range tests {
		_, err := os.Stat(dirs[i])
		require.Equal(t, tc.kept, err == nil, "%s: kept %v (%v)", tc.name, tc.kept, err)
	}
}

// TestCachesFollowNoLinkTheServerMade: a confined server may write its own
// cache directory, so it can put symlinks or other files where the library
// keeps the stamp and the lock. A start must neither write through them to
// the user's files (truncating one, creating one) nor hang on a FIFO.
func TestCachesFollowNoLinkTheServerMade(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	server := stdio.Server{Path: "/usr/bin/npx", Argv: []string{"npx", "-y", "hostile-server"}}
	_, caches, release, err := privateDirs(server, t.TempDir())
	require.NoError(t, err)
	release()

	outside := t.TempDir()
	victim := filepath.Join(outside, "bashrc")
	require.NoError(t, os.WriteFile(victim, []byte("the user's file"), 0o600))
	created := filepath.Join(outside, "created")
	tests := []struct {
		name  string
		plant func(t *testing.T)
	}{
		{name: "the stamp a symlink to a user's file", plant: func(t *testing.T) {
			replace(t, filepath.Join(caches, cacheStamp), func(p string) error { return os.Symlink(victim, p) })
		}},
		{name: "the lock a symlink to a user's file", plant: func(t *testing.T) {
			replace(t, filepath.Join(caches, cacheLock), func(p string) error { return os.Symlink(victim, p) })
		}},
		{name: "the lock a symlink to a file to create", plant: func(t *testing.T) {
			replace(t, filepath.Join(caches, cacheLock), func(p string) error { return os.Symlink(created, p) })
		}},
		{name: "the stamp a symlink to a file to create", plant: func(t *testing.T) {
			replace(t, filepath.Join(caches, cacheStamp), func(p string) error { return os.Symlink(created, p) })
		}},
		{name: "the lock a FIFO", plant: func(t *testing.T) {
			replace(t, filepath.Join(caches, cacheLock), func(p string) error { return syscall.Mkfifo(p, 0o600) })
		}},
		{name: "the lock a directory", plant: func(t *testing.T) {
			replace(t, filepath.Join(caches, cacheLock), func(p string) error { return os.Mkdir(p, 0o700) })
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.plant(t)
			_, again, release, err := privateDirs(server, t.TempDir())
			require.NoError(t, err)
			release()
			require.Equal(t, caches, again)
			got, err := os.ReadFile(victim)
			require.NoError(t, err)
			require.Equal(t, "the user's file", string(got), "written through a link")
			require.NoFileExists(t, created, "created through a link")
			for _, name := range []string{cacheStamp, cacheLock} {
				fi, err := os.Lstat(filepath.Join(caches, name))
				require.NoError(t, err)
				require.True(t, fi.Mode().IsRegular(), "%s is %v", name, fi.Mode())
			}
		})
	}
}

// replace puts at path what make makes there, in place of what was.
func replace(t *testing.T, path string, make func(string) error) {
	t.Helper()
	require.NoError(t, os.RemoveAll(path))
	require.NoError(t, make(path))
}
