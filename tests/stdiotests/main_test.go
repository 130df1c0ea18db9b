package stdiotests

import (
	"fmt"
	"os"
	"testing"

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
