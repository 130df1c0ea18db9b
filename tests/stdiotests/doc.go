// Package stdiotests runs the LemonMCP core against the mcpfixture server
// (built on the official go-sdk) over a real stdio subprocess, in both
// protocol eras. The tests live in _test files; this package has no code.
package stdiotests
