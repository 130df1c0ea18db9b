// Package fixturebin builds a fixture server of this module (a Go main
// package) into a temporary directory, for the tests that run it as a
// separate process the way hosts in other languages do.
package fixturebin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// Build compiles the main package in pkgDir (relative to the calling
// test's directory, e.g. "../fixtures/mcpfixture", or "." for the
// package under test) and returns the binary's path and a function that
// removes it. Compiler output goes to stderr, so a broken fixture shows
// why.
func Build(pkgDir string) (bin string, remove func(), err error) {
	dir, err := os.MkdirTemp("", "fixturebin-")
	if err != nil {
		return "", nil, err
	}
	remove = func() { _ = os.RemoveAll(dir) }
	bin = filepath.Join(dir, filepath.Base(absOr(pkgDir)))
	cmd := exec.Command("go", "build", "-o", bin, pkgDir)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		remove()
		return "", nil, fmt.Errorf("building %s: %w", pkgDir, err)
	}
	return bin, remove, nil
}

// absOr names "." by the directory it stands for.
func absOr(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		return abs
	}
	return dir
}
