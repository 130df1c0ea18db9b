package hosttests

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lemonmcp/lemonmcp/core"
	"github.com/lemonmcp/lemonmcp/tests/internal/fixturebin"
)

// fixtureBin is the mcpfixture binary, built once for the run.
var fixtureBin string

func TestMain(m *testing.M) {
	bin, remove, err := fixturebin.Build("../fixtures/mcpfixture")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fixtureBin = bin
	code := m.Run()
	remove()
	os.Exit(code)
}

func errOrNil(e *core.Error) error {
	if e == nil {
		return nil
	}
	return e
}

// fixtureProcesses counts the live processes running the fixture binary
// (zombies included: an unreaped child is an orphan too).
func fixtureProcesses() int {
	n := 0
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if _, err := fmt.Sscanf(e.Name(), "%d", new(int)); err != nil {
			continue
		}
		exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe"))
		if err == nil && strings.HasPrefix(exe, fixtureBin) {
			n++
			continue
		}
		cmd, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.HasPrefix(string(cmd), fixtureBin+"\x00") {
			n++
		}
	}
	return n
}
