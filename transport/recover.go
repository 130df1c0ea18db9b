package transport

import (
	"fmt"
	"runtime/debug"
)

// maxPanicText bounds the panic value quoted in the log line.
const maxPanicText = 200

// PanicSink is implemented by sinks that take a recovered panic themselves:
// the core poisons its client (every later call fails with an internal
// error) and reports the panic with a stack summary.
type PanicSink interface {
	Panicked(where string, value any)
}

// Recover is deferred at the top of every goroutine a transport starts. The
// library runs inside the host's process, where an unrecovered panic kills
// the host: a bug in a transport (or in a host-supplied http.RoundTripper)
// must cost the connection, not the process. It reports the panic to sink
// as an error log line naming where it happened (the panic value is
// shortened; the stack goes to the debug level), then runs then, which puts
// the transport into a defined state: fail the request, or close.
func Recover(sink Sink, where string, then func()) {
	r := recover()
	if r == nil {
		return
	}
	text := fmt.Sprint(r)
	if len(text) > maxPanicText {
		text = text[:maxPanicText] + "..."
	}
	if ps, ok := sink.(PanicSink); ok {
		ps.Panicked(where, r) // the core poisons its client and reports it
	} else if sink != nil {
		sink.Log(LogLine{Level: "error", Source: "transport", Text: fmt.Sprintf("internal error in %s: %s (a bug: please report it)", where, text)})
		sink.Log(LogLine{Level: "debug", Source: "transport", Text: string(debug.Stack())})
	}
	if then != nil {
		then()
	}
}
