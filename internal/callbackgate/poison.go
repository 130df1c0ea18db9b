package callbackgate

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"
)

// A recovered panic poisons the gate's owner, as ADBC drivers do: the state
// the panic interrupted is unknown, so every later call fails with an
// internal error instead of running on it. The panic is reported through
// Hooks.Report, once per panic, naming where it happened, the panic value
// and a short stack summary, never swallowed. Free still releases a
// poisoned owner.

// maxPanicText bounds the panic value quoted in the report.
const maxPanicText = 200

// stackFrames is how many frames of the panicking stack the report names.
const stackFrames = 6

// Poisoned returns the message every call of a poisoned owner fails with,
// or "" while it is healthy.
func (g *Gate) Poisoned() string {
	if msg := g.poisoned.Load(); msg != nil {
		return *msg
	}
	return ""
}

// Poison marks the owner poisoned by a panic (r) recovered while serving it
// in where, and reports it. The first panic names the poisoned state: a
// later one is reported too but does not replace it. Call it from the
// deferred recovery (or a function it calls), so that the stack still shows
// where the panic happened.
func (g *Gate) Poison(r any, where string) {
	msg := "the " + g.hooks.Owner + " is unusable: it was poisoned by an earlier internal error (in " + where + ")"
	g.poisoned.CompareAndSwap(nil, &msg)
	if g.hooks.Report != nil {
		g.hooks.Report(panicReport(r, where, g.hooks.Owner))
	}
}

// Recover is deferred at the top of the library's goroutines that serve
// the owner (deliveries, destroys, timers, background work): a panic there
// poisons the owner instead of killing the process.
func (g *Gate) Recover(where string) {
	if r := recover(); r != nil {
		g.Poison(r, where)
	}
}

// panicReport is the report of a panic (r) recovered while serving owner in
// where: the panic value, bounded, and a short stack summary.
func panicReport(r any, where, owner string) string {
	text := fmt.Sprint(r)
	if len(text) > maxPanicText {
		text = text[:maxPanicText] + "..."
	}
	return "internal error in " + where + ": " + text +
		" (a bug: please report it); the " + owner + " is poisoned and every later call fails with LMCP_E_INTERNAL; stack: " + stackSummary()
}

// stackSummary names the innermost frames of the panicking goroutine,
// skipping the runtime's own and the recovery's.
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
		if name != "" && !recoveryFrame(name) {
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

// recoveryFrame reports whether a frame is the runtime's or part of the
// recovery (the owners' poison, Recovered and Panicked methods, the C
// exports' recover helpers, this package's Poison, Recover and report)
// rather than where the panic happened. The words are matched in part, as
// they always were, but not "Poison" alone: it would hide a caller such as
// a test named TestPanicPoisonsHost.
func recoveryFrame(name string) bool {
	if strings.HasPrefix(name, "runtime.") || strings.HasSuffix(name, ".Poison") || strings.Contains(name, "panicReport") {
		return true
	}
	for _, word := range []string{"poison", "recover", "Recover", "Panicked"} {
		if strings.Contains(name, word) {
			return true
		}
	}
	return false
}
