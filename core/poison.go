package core

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"
)

// A recovered panic poisons its client, as ADBC drivers do: the state the
// panic interrupted is unknown, so every later call fails with
// StatusInternal instead of running on it. The panic is reported once as an
// "error" log event naming where it happened, the panic value and a short
// stack summary, never swallowed.

// maxPanicText bounds the panic value quoted in the report.
const maxPanicText = 200

// stackFrames is how many frames of the panicking stack the report names.
const stackFrames = 6

// Poisoned returns the error every call of a poisoned client fails with, or
// nil while the client is healthy.
func (c *Client) Poisoned() *Error { return c.poisoned.Load() }

// Recovered poisons the client after a panic the caller recovered (r) while
// serving it in where, and reports it. The C exports call it from their
// deferred recovery; it must be called from the deferred function itself,
// so that the stack still shows where the panic happened.
func (c *Client) Recovered(r any, where string) { c.poison(r, where) }

// Panicked implements the transport's panic sink: a transport goroutine
// recovered a panic.
func (c *Client) Panicked(where string, r any) { c.poison(r, where) }

// recoverPanic is deferred at the top of the library's goroutines that serve
// the client (timers, host request goroutines, background sends).
func (c *Client) recoverPanic(where string) {
	if r := recover(); r != nil {
		c.poison(r, where)
	}
}

func (c *Client) poison(r any, where string) {
	c.poisoned.CompareAndSwap(nil, &Error{Status: StatusInternal,
		Message: "the client is unusable: it was poisoned by an earlier internal error (in " + where + ")"})
	c.emitLog("error", "library", PanicMessage(r, where, "client"))
}

// PanicMessage is the report of a panic (r) recovered while serving what (a
// "client", a "host") in where: the panic value, bounded, and a short stack
// summary. Call it from the deferred recovery, so that the stack still shows
// where the panic happened.
func PanicMessage(r any, where, what string) string {
	text := fmt.Sprint(r)
	if len(text) > maxPanicText {
		text = text[:maxPanicText] + "..."
	}
	return "internal error in " + where + ": " + text +
		" (a bug: please report it); the " + what + " is poisoned and every later call fails with LMCP_E_INTERNAL; stack: " + stackSummary()
}

// stackSummary names the innermost frames of the panicking goroutine,
// skipping the runtime's own and this file's.
func stackSummary() string {
	pcs := make([]uintptr, 32)
	n := runtime.Callers(2, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	var out []string
	for len(out) < stackFrames {
		f, more := frames.Next()
		name := f.Function
		if i := strings.LastIndex(name, "/"); i >= 0 {
			name = name[i+1:]
		}
		skip := strings.HasPrefix(name, "runtime.") || strings.Contains(name, "poison") ||
			strings.Contains(name, "recover") || strings.Contains(name, "Recover") || strings.Contains(name, "Panicked") || strings.Contains(name, "PanicMessage")
		if name != "" && !skip {
			file := f.File
			if i := strings.LastIndex(file, "/"); i >= 0 {
				file = file[i+1:]
			}
			out = append(out, name+" ("+file+":"+strconv.Itoa(f.Line)+")")
		}
		if !more {
			break
		}
	}
	if len(out) == 0 {
		return "unavailable"
	}
	return strings.Join(out, " < ")
}
