package sandbox

import (
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
// opened.
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

func secretPaths() []string {
	secrets.mu.Lock()
	defer secrets.mu.Unlock()
	return slices.Clone(secrets.paths)
}
