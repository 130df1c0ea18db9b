// Package sandboxtests runs the servers people run, npx and uvx ones,
// confined (docs/sandbox.md): each fetches its package from a fake
// registry on loopback (tests/internal/fakenpm, fakepypi) through the
// sandbox's egress proxy, with allowedDomains naming the registry by
// address and port, and writes only to its per-server cache directories;
// without the registry allowed the fetch is refused and the start fails
// saying so. The tests live in _test files (main_test.go: the helper, the
// tools and the client; npx_test.go; uvx_test.go; nobody_test.go: both
// again as nobody, under setpriv); this package has no code.
package sandboxtests
