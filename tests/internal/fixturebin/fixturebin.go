// Package fixturebin builds a fixture server of this module (a Go main
// package) into a temporary directory, for the tests that run it as a
// separate process the way hosts in other languages do.
package fixturebin

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
)

// PrebuiltEnv names a directory of fixture binaries already built from this
// tree (`make fixtures` writes build/fixtures/; make test-fixtures sets it),
// so that the suite's packages copy them instead of each linking its own.
const PrebuiltEnv = "LEMONMCP_FIXTURES_DIR"

// Build compiles the main package in pkgDir (relative to the calling
// test's directory, e.g. "../fixtures/mcpfixture", or "." for the
// package under test) and returns the binary's path and a function that
// removes it. Compiler output goes to stderr, so a broken fixture shows
// why. When $LEMONMCP_FIXTURES_DIR holds a binary of that name, it is
// copied instead. Either way the binary's path is this run's own, so a
// test can tell its own fixture processes from any other test's.
func Build(pkgDir string) (bin string, remove func(), err error) {
	dir, err := os.MkdirTemp("", "fixturebin-")
	if err != nil {
		return "", nil, err
	}
	remove = func() { _ = os.RemoveAll(dir) }
	name := filepath.Base(absOr(pkgDir))
	bin = filepath.Join(dir, name)
	if pre := os.Getenv(PrebuiltEnv); pre != "" {
		if err := copyExecutable(filepath.Join(pre, name), bin); err != nil {
			remove()
			return "", nil, fmt.Errorf("copying the prebuilt %s ($%s): %w", name, PrebuiltEnv, err)
		}
		return bin, remove, nil
	}
	cmd := exec.Command("go", "build", "-o", bin, pkgDir)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		remove()
		return "", nil, fmt.Errorf("building %s: %w", pkgDir, err)
	}
	return bin, remove, nil
}

func copyExecutable(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// absOr names "." by the directory it stands for.
func absOr(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		return abs
	}
	return dir
}
