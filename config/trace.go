package config

import (
	"strings"

	"github.com/lemonmcp/lemonmcp/core"
	"github.com/lemonmcp/lemonmcp/internal/jsonx"
	"github.com/lemonmcp/lemonmcp/internal/tracecontext"
)

// parseTrace reads the client's default trace context:
// "trace": {"traceparent","tracestate","baggage"}. A configuration is
// static, so a malformed value is an error here (a call's own trace
// context is dropped with a warning instead: see core.CallOptions.Trace).
func parseTrace(root *object, p *Parsed) *core.Error {
	o, ok, err := root.sub("trace")
	if !ok || err != nil {
		return err
	}
	var tc tracecontext.Context
	for _, f := range []struct {
		key string
		dst *string
	}{{"traceparent", &tc.TraceParent}, {"tracestate", &tc.TraceState}, {"baggage", &tc.Baggage}} {
		if *f.dst, _, err = o.str(f.key); err != nil {
			return err
		}
	}
	if err := o.finish(); err != nil {
		return err
	}
	if _, problems := tc.Clean(); len(problems) > 0 {
		return invalid(root.at("trace"), strings.Replace(problems[0], " was dropped", " is malformed", 1))
	}
	p.Options.Trace = tc
	return nil
}

// readCallTrace reads a call's "trace" option, an object of strings; their
// W3C syntax is checked by the core, which drops a malformed part with a
// warning rather than failing the call.
func readCallTrace(it *jsonx.Iterator) (tracecontext.Context, *core.Error) {
	var tc tracecontext.Context
	if it.WhatIsNext() != jsonx.KindObject {
		return tc, core.Errorf(core.StatusInvalidArgument, "options.trace must be a JSON object")
	}
	for field := it.ReadObject(); field != ""; field = it.ReadObject() {
		var dst *string
		switch field {
		case "traceparent":
			dst = &tc.TraceParent
		case "tracestate":
			dst = &tc.TraceState
		case "baggage":
			dst = &tc.Baggage
		default:
			return tc, core.Errorf(core.StatusInvalidArgument, "options.trace.%s is not a known field (traceparent, tracestate, baggage)", field)
		}
		if it.WhatIsNext() != jsonx.KindString {
			return tc, core.Errorf(core.StatusInvalidArgument, "options.trace.%s must be a string", field)
		}
		*dst = it.ReadString()
	}
	return tc, nil
}
