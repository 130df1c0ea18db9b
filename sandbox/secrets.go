package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"sync"
)

// The library's own secrets (a token store file, a pin file) must never be
// readable to a server it confines, whether the policy lists them or not.
// Whoever opens such a file names it here once; every confined start of
// the process denies them all, existing or not (one written after the
// server started stays out of its reach too).
var secrets struct {
	mu    sync.Mutex
	paths []string
}

// DenySecret adds paths to the files every confined server is denied; a
// relative path is taken from the working directory, as the file is
// opened. The helper hides a secret by shadowing its directory, which
// must exist when a server starts (the token store's must exist when the
// configuration is read; the host makes its pin file's).
func DenySecret(paths ...string) {
	secrets.mu.Lock()
	defer secrets.mu.Unlock()
	for _, p := range paths {
		if p == "" {
			continue
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			continue
		}
		p = abs
		if !slices.Contains(secrets.paths, p) {
			secrets.paths = append(secrets.paths, p)
		}
	}
}

// secretPaths are the secrets a start denies: those whose directory
// still exists (a host's temporary directory removed since holds none).
func secretPaths() []string {
	secrets.mu.Lock()
	defer secrets.mu.Unlock()
	var out []string
	for _, p := range secrets.paths {
		if fi, err := os.Stat(filepath.Dir(p)); err == nil && fi.IsDir() {
			out = append(out, p)
		}
	}
	return out
}
