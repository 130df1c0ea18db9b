// Package hostvalidate checks the requests a server sends for the host
// (elicitation/create, sampling/createMessage) and the answers the host
// gives (elicitations, sampling results, roots), before either side sees
// the other's data. It holds only pure functions over JSON: what a request
// must hold, what an answer must hold, and the redacted summary of a
// sampling request (counts, roles, a canonical hash; never its text).
//
// The engine in core decides what happens around these checks (which
// capabilities were declared, the sampling policy, asking the host, the
// timeouts); it passes what it declared in as plain values. A check returns
// a message that names the problem, or "" when the value is valid: core
// turns a refused request into a -32602 error for the server and a refused
// answer into LMCP_E_INVALID_ARGUMENT for the host.
package hostvalidate
