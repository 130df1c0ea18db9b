package stdiotests

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// fixtureBin is the mcpfixture binary, built once for the run.
var fixtureBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "stdiotests-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fixtureBin = filepath.Join(dir, "mcpfixture")
	build := exec.Command("go", "build", "-o", fixtureBin, "../fixtures/mcpfixture")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building mcpfixture:", err)
		os.Exit(1)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}
