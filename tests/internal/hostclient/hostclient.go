// Package hostclient builds a ready LemonMCP client from configuration JSON
// exactly as a host does (config.Parse, core.New, Connect, WaitReady), for
// the benchmarks and tests of this module that need no handlers.
package hostclient

import (
	"testing"
	"time"

	"github.com/lemonmcp/lemonmcp/config"
	"github.com/lemonmcp/lemonmcp/core"
)

// Ready returns a connected, ready client; it is closed and freed when the
// test or benchmark ends.
func Ready(tb testing.TB, configJSON string) *core.Client {
	tb.Helper()
	p, perr := config.Parse([]byte(configJSON), "test")
	if perr != nil {
		tb.Fatal(perr)
	}
	c := core.New(p.Options, p.Transport)
	tb.Cleanup(func() {
		c.Close(5 * time.Second)
		c.Free()
	})
	if err := c.Connect(); err != nil {
		tb.Fatal(err)
	}
	if err := c.WaitReady(10 * time.Second); err != nil {
		tb.Fatal(err)
	}
	return c
}
