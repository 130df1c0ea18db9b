// Package jsonstyle re-serialises JSON the ways other MCP servers write it
// (Python's json.dumps defaults, JSON.stringify with an indent, CRLF line
// breaks, members in reverse order, \u escapes for every non-ASCII
// character, integers spelled 1.0e0): the core's wire tests and the
// interoperability corpus's fixtures (in the tests module) use it to prove
// the client reads any valid JSON. It lives in the runtime module so both
// modules share one copy; no runtime package imports it.
package jsonstyle
