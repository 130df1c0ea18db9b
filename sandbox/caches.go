package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/lemonmcp/lemonmcp/transport/stdio"
)

// The per-server cache directories (HOME, the npm and uv caches) are kept
// across restarts, so npx and uvx fetch a package once; they are bounded
// and pruned, so they do not grow without end: a server's caches over
// cacheLimit are emptied before it starts (the next start fetches again),
// and those of a server not started for cacheUnused are removed.
const (
	cacheLimit  = 512 << 20
	cacheUnused = 30 * 24 * time.Hour
	// cacheStamp is the file whose modification time is a cache's last use.
	cacheStamp = ".last-start"
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
func privateDirs(s stdio.Server, tmp string) (env []string, caches string, err error) {
	root := cacheRoot()
	sum := sha256.Sum256([]byte(s.Path + "\x00" + strings.Join(s.Argv, "\x00")))
	caches = filepath.Join(root, hex.EncodeToString(sum[:8]))
	if size(caches) > cacheLimit {
		_ = os.RemoveAll(caches)
	}
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
				return nil, "", err
			}
		}
	}
	if err := os.WriteFile(filepath.Join(caches, cacheStamp), nil, 0o600); err == nil {
		now := time.Now()
		_ = os.Chtimes(filepath.Join(caches, cacheStamp), now, now)
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
	return env, caches, nil
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
// before now-cacheUnused. A cache without a stamp is aged by its
// directory.
func pruneCaches(root, keep string, now time.Time) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return
	}
	for _, e := range entries {
		dir := filepath.Join(root, e.Name())
		if dir == keep || !e.IsDir() {
			continue
		}
		fi, err := os.Stat(filepath.Join(dir, cacheStamp))
		if err != nil {
			if fi, err = os.Stat(dir); err != nil {
				continue
			}
		}
		if now.Sub(fi.ModTime()) > cacheUnused {
			_ = os.RemoveAll(dir)
		}
	}
}
