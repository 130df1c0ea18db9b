// Package gatewaytests drives the gateway (package gateway) with real
// front clients (the official Go SDK's, LemonMCP's own) over stdio and
// Streamable HTTP, in both eras, in front of real servers (the fixture,
// built on the official Go SDK) in both eras.
package gatewaytests

import (
	"fmt"
	"os"
	"testing"

	"github.com/lemonmcp/lemonmcp/tests/internal/fixturebin"
)

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
