package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/lemonmcp/lemonmcp/transport/stdio"
)

// The per-server cache directories (HOME, the npm and uv caches) are kept
// across restarts, so npx and uvx fetch a package once; they are bounded
// and pruned, so they do not grow without end: a server's caches over
// cacheLimit are emptied before it starts (the next start fetches again),
// and those of a server not started for cacheUnused are removed.
//
// A running server holds a shared flock on its cache's cacheLock for as
// long as it runs, and emptying or pruning takes it exclusively without
// waiting: a cache in use (a server up for longer than cacheUnused, or
// the same command line started by another host) is never pulled from
// under its server, whichever process would do it.
const (
	cacheLimit  = 512 << 20
	cacheUnused = 30 * 24 * time.Hour
	// cacheStamp is the file whose modification time is a cache's last start.
	cacheStamp = ".last-start"
	// cacheLock is the file a running server's flock is held on.
	cacheLock = ".in-use"
)

// cacheRoot is where the per-server caches live.
func cacheRoot() string {
	base, err := os.UserCacheDir()
	if err != nil {
		base = filepath.Join(os.TempDir(), "lemonmcp-cache-"+strconv.Itoa(os.Getuid()))
	}
	return filepath.Join(base, "lemonmcp", "sandbox")
}

// privateDirs gives the server its private temporary directory and its
// cache directories, which npx and uvx need writable: per server (by its
// command line), kept across restarts under the user's cache directory.
// The caller runs release when the server has ended (see cacheLock).
func privateDirs(s stdio.Server, tmp string) (env []string, caches string, release func(), err error) {
	root := cacheRoot()
	sum := sha256.Sum256([]byte(s.Path + "\x00" + strings.Join(s.Argv, "\x00")))
	caches = filepath.Join(root, hex.EncodeToString(sum[:8]))
	lock, err := holdCache(caches)
	if err != nil {
		return nil, "", nil, err
	}
	release = func() { _ = lock.Close() }
	vars := map[string]string{
		"TMPDIR":           tmp,
		"HOME":             filepath.Join(caches, "home"),
		"NPM_CONFIG_CACHE": filepath.Join(caches, "npm"),
		"XDG_CACHE_HOME":   filepath.Join(caches, "cache"),
		"UV_CACHE_DIR":     filepath.Join(caches, "uv"),
	}
	for k, dir := range vars {
		if k != "TMPDIR" {
			if err := os.MkdirAll(dir, 0o700); err != nil {
				release()
				return nil, "", nil, err
			}
		}
	}
	pruneCaches(root, caches, time.Now())
	for _, kv := range s.Env {
		k, _, _ := strings.Cut(kv, "=")
		if _, ours := vars[k]; !ours {
			env = append(env, kv)
		}
	}
	for k, v := range vars {
		env = append(env, k+"="+v)
	}
	return env, caches, release, nil
}

// holdCache makes dir and returns its lock file with a shared flock held.
// When no other server holds it, the cache is first emptied if it is over
// cacheLimit, and its stamp renewed before the lock is shared, so a
// pruner that takes the lock in between sees a fresh stamp.
func holdCache(dir string) (*os.File, error) {
	for {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, err
		}
		f, err := openLock(dir)
		if err != nil {
			return nil, err
		}
		fd := int(f.Fd())
		alone := syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB) == nil
		if !alone {
			// Another server runs from this cache; an exclusive holder
			// (emptying, pruning) keeps it only for that step.
			if err := flockRetry(fd, syscall.LOCK_SH); err != nil {
				_ = f.Close()
				return nil, err
			}
		}
		if !linked(f, filepath.Join(dir, cacheLock)) {
			// A pruner removed the cache while we waited: make it anew.
			_ = f.Close()
			continue
		}
		if alone {
			if size(dir) > cacheLimit {
				emptyCache(dir)
			}
			stamp(dir)
			if err := flockRetry(fd, syscall.LOCK_SH); err != nil {
				_ = f.Close()
				return nil, err
			}
		} else {
			stamp(dir)
		}
		return f, nil
	}
}

func flockRetry(fd, how int) error {
	for {
		if err := syscall.Flock(fd, how); err != syscall.EINTR {
			return err
		}
	}
}

// linked reports whether f is still the file at path.
func linked(f *os.File, path string) bool {
	held, err := f.Stat()
	if err != nil {
		return false
	}
	now, err := os.Lstat(path)
	return err == nil && os.SameFile(held, now)
}

// The cache directory is the server's to write, so what the library
// opens there may have been replaced by a symlink to a file of the user's:
// nothing there is followed (O_NOFOLLOW, Lstat), and a stamp or lock file
// that is not one is removed, not written through.

// openLock opens dir's lock file.
func openLock(dir string) (*os.File, error) {
	path := filepath.Join(dir, cacheLock)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0o600)
	if err == nil {
		if fi, serr := f.Stat(); serr == nil && fi.Mode().IsRegular() {
			return f, nil
		}
		_ = f.Close()
	}
	// A symlink, a FIFO, a directory: made by the server, never used.
	if err := os.RemoveAll(path); err != nil {
		return nil, err
	}
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
}

// stamp marks dir as started now: a new file, whatever was there.
func stamp(dir string) {
	path := filepath.Join(dir, cacheStamp)
	_ = os.RemoveAll(path)
	if f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600); err == nil {
		_ = f.Close()
	}
}

// emptyCache removes what dir holds but its lock file, which is held.
func emptyCache(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if e.Name() != cacheLock {
			_ = os.RemoveAll(filepath.Join(dir, e.Name()))
		}
	}
}

// size is the bytes of the regular files beneath dir.
func size(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// pruneCaches removes the caches beneath root, but keep, last started
// before now-cacheUnused and not in use (cacheLock). A cache without a
// stamp is aged by its directory.
func pruneCaches(root, keep string, now time.Time) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return
	}
	for _, e := range entries {
		dir := filepath.Join(root, e.Name())
		if dir == keep || !e.IsDir() || !unused(dir, now) {
			continue
		}
		f, err := openLock(dir)
		if err != nil {
			continue
		}
		// Taken exclusively, and the stamp read again under the lock: a
		// server that started meanwhile wrote it. (Not the directory's
		// age: opening the lock file has just renewed that.)
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil && !stampedSince(dir, now.Add(-cacheUnused)) {
			_ = os.RemoveAll(dir)
		}
		_ = f.Close()
	}
}

// unused reports whether the cache dir was last started before
// now-cacheUnused.
func unused(dir string, now time.Time) bool {
	fi, err := os.Lstat(filepath.Join(dir, cacheStamp))
	if err != nil {
		if fi, err = os.Lstat(dir); err != nil {
			return false
		}
	}
	return now.Sub(fi.ModTime()) > cacheUnused
}

// stampedSince reports whether the cache dir was started after t.
func stampedSince(dir string, t time.Time) bool {
	fi, err := os.Lstat(filepath.Join(dir, cacheStamp))
	return err == nil && fi.ModTime().After(t)
}
