// Package sandbox confines the stdio servers the library starts and makes
// sure nothing they start outlives them. It is the library's side of a
// small helper executable, lemonmcp-sandbox (cmd/lemonmcp-sandbox, whose
// code is package sandbox/helper), which the stdio transport runs in the
// server's place through a stdio.Launcher: the restrictions are applied in
// the helper, between its start and the server's exec, never in the
// application's process. What the two sides tell each other (the helper's
// command line, its status pipe's records, the Report) is package
// sandbox/wire.
//
// Fail closed: a Policy is required in full unless it says BestEffort
// ("required": false). Confine refuses the start, naming the layer and
// why, when the machine lacks a layer the policy needs (the probe, run
// once per process), and the helper checks every step it takes and ends
// the start at the first that fails (a failure record on its status pipe,
// which the transport's start returns). What a server got is what the
// helper reports for that start, once the server runs: the transport
// keeps it (stdio.Transport.SandboxReport), lmcp_host_servers and the
// ready and restarting events show it. The probe only answers what this
// machine could give (Features, for lmcp_features).
//
// Lifetime, sandbox or not (Reaper): the helper is a child subreaper, or
// the init of the server's PID namespace; when the server exits it gives
// what is left SIGTERM, then SIGKILL after the close grace, reaps it all
// and exits with the server's status. The library holds the other end of
// a "lifeline" pipe: when the library cuts it before its SIGKILL, or its
// process dies, the helper kills every descendant at once.
//
// Files:
//   - find.go: where the helper is (LEMONMCP_SANDBOX_HELPER, beside the
//     shared object, ../libexec).
//   - launch.go: the stdio.Launch for the helper (Reaper and the one
//     Confine builds), and the library's end of the status pipe.
//   - policy.go: Policy, the probe, Features and Confine.
//   - servergone.go: the server's own exit, watched through its pidfd, so
//     the transport tells a stdout that closed with the server from one
//     the server closed while it runs on (stdio.Launch.ServerGone).
//   - secrets.go: DenySecret, the library's own files (token stores, pin
//     files) every confined server is denied, listed or not.
//   - caches.go: the per-server cache directories (HOME, npm, uv), kept
//     across restarts, bounded and pruned, never while a server holds one.
//   - domains.go: allowedDomains and deniedDomains entries: parsing and
//     checking them (URLs, paths, "*", wildcards over a public suffix by
//     the shipped list public_suffixes.txt, IPv6 brackets, link-local),
//     matching a request, and what each entry lets the proxy reach.
//   - proxy.go: the egress proxy for allowedDomains: one dial per checked
//     address, the anti-rebinding rule, what it refused (a warning while
//     the server runs, a note in the closed message).
package sandbox
