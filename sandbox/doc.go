// Package sandbox confines the stdio servers the library starts and makes
// sure nothing they start outlives them. It holds both sides of a small
// helper executable, lemonmcp-sandbox (cmd/lemonmcp-sandbox), which the
// stdio transport runs in the server's place through a stdio.Launcher:
// the restrictions are applied in the helper, between its start and the
// server's exec, never in the application's process.
//
// Lifetime, sandbox or not (Reaper): the helper is a child subreaper, so a
// daemon that double-forks and calls setsid is reparented to it rather
// than to init; when the server exits it gives what is left SIGTERM, then
// SIGKILL after the close grace, reaps it all and exits with the server's
// status. The library holds the other end of a "lifeline" pipe (the
// helper's descriptor 3): when the library cuts it before its SIGKILL, or
// its process dies, the helper kills every descendant at once.
//
// Files:
//   - find.go: where the helper is (LEMONMCP_SANDBOX_HELPER, beside the
//     shared object, ../libexec).
//   - launch.go: the library side, the stdio.Launch for the helper.
//   - args.go: the helper's command line, written and parsed in one place.
//   - helper.go: the helper's main loop (Main).
//   - reaper.go: finding, signalling and reaping every descendant.
//   - confine.go: namespaces set-up, limits, privileges, Landlock.
//   - rules.go: the Landlock rules for "read all but denyRead, write only
//     allowWrite".
package sandbox
