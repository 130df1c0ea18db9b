package hosttests

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/lemonmcp/lemonmcp/core"
	"github.com/lemonmcp/lemonmcp/tests/internal/fixturebin"
)

// fixtureBin is the mcpfixture binary, built once for the run;
// rugpullBin the server that changes its definitions on a signal.
var fixtureBin, rugpullBin string

func TestMain(m *testing.M) {
	if os.Getenv(approverConfigEnv) != "" {
		// An approver process (pinstore_test.go): its configuration names
		// the parent's server binary; nothing to build.
		os.Exit(m.Run())
	}
	bin, remove, err := fixturebin.Build("../fixtures/mcpfixture")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fixtureBin = bin
	rugpull, removeRugpull, err := fixturebin.Build("../fixtures/rugpull")
	if err != nil {
		remove()
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	rugpullBin = rugpull
	code := m.Run()
	remove()
	removeRugpull()
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
func fixtureProcesses() int { return len(fixturePIDs()) }

func fixturePIDs() []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe"))
		if err == nil && strings.HasPrefix(exe, fixtureBin) {
			pids = append(pids, pid)
			continue
		}
		cmd, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.HasPrefix(string(cmd), fixtureBin+"\x00") {
			pids = append(pids, pid)
			continue
		}
		// A zombie has neither exe nor cmdline: an unreaped child of ours
		// that ran the fixture still shows its name and parent in stat.
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err == nil && strings.Contains(string(stat), "("+filepath.Base(fixtureBin)+")") {
			if f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:])); len(f) > 1 && f[1] == strconv.Itoa(os.Getpid()) {
				pids = append(pids, pid)
			}
		}
	}
	return pids
}
