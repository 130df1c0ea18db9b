package core

import (
	"bytes"

	"github.com/lemonmcp/lemonmcp/internal/tracecontext"
)

// attachTrace settles the call's trace context (its own, else the
// client's default), drops what is malformed with a warning (never sent),
// and merges the rest into the call's _meta option, so that every request
// built from the call's params carries it: both eras, page walks, MRTR
// retries and re-sends after a session expiry. Task polls carry it through
// withTraceMeta.
func (c *Client) attachTrace(cl *call) {
	tc := cl.opts.Trace
	if tc.Empty() {
		tc = c.opts.Trace
	}
	clean, problems := tc.Clean()
	for _, p := range problems {
		c.logf("warning", "trace context of %s: %s", cl.method, p)
	}
	cl.trace = clean
	if clean.Empty() {
		return
	}
	cl.opts.Meta = mergeTraceMembers(cl.opts.Meta, clean)
}

// mergeTraceMembers returns the JSON object meta (or nil) with tc's members
// appended; appended last, they win over the same names in meta.
func mergeTraceMembers(meta []byte, tc tracecontext.Context) []byte {
	meta = bytes.TrimSpace(meta)
	buf := make([]byte, 0, len(meta)+160)
	if len(meta) >= 2 {
		inner := bytes.TrimSpace(meta[1 : len(meta)-1])
		buf = append(buf, '{')
		if len(inner) > 0 {
			buf = append(buf, inner...)
			buf = append(buf, ',')
		}
	} else {
		buf = append(buf, '{')
	}
	buf = tracecontext.AppendMembers(buf, tc)
	return append(buf, '}')
}

// withTraceMeta returns params (a non-empty JSON object the library built,
// such as a task poll's) with tc as its _meta; params itself when tc is
// empty.
func withTraceMeta(params []byte, tc tracecontext.Context) []byte {
	if tc.Empty() || len(params) < 2 {
		return params
	}
	buf := make([]byte, 0, len(params)+160)
	buf = append(buf, `{"_meta":{`...)
	buf = tracecontext.AppendMembers(buf, tc)
	buf = append(buf, '}')
	if len(params) > 2 {
		buf = append(buf, ',')
		buf = append(buf, params[1:]...)
	} else {
		buf = append(buf, '}')
	}
	return buf
}
