package host

import (
	"strconv"

	"github.com/lemonmcp/lemonmcp/core"

	"github.com/lemonmcp/lemonmcp/internal/callbackgate"
)

// The host's callbacks (completions, events, requests, destroys) run
// through its gate, Host.out, the same internal/callbackgate.Gate a client
// runs its own through: events, requests and completions of many servers
// reach the application as one serial stream, and Free waits them out.

// eventRegistration and requestRegistration are the application's handlers
// with their destroys.
type (
	eventRegistration   = callbackgate.Registration[core.EventHandler]
	requestRegistration = callbackgate.Registration[core.AppRequestHandler]
)

// reportDroppedLogs tells the application how many log events its gate
// dropped because it fell behind.
func (h *Host) reportDroppedLogs(n int) {
	h.emitLog("warning", "dropped "+strconv.Itoa(n)+" log events because the application fell behind")
}
