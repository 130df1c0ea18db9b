// Package jsonstyle re-serialises JSON the ways other MCP servers write it
// (Python's json.dumps defaults, JSON.stringify with an indent, CRLF line
// breaks, members in reverse order, \u escapes for every non-ASCII
// character, integers spelled 1.0e0): the interoperability corpus's
// fixtures use it to prove the client reads any valid JSON.
package jsonstyle
