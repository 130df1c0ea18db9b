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
// its process dies, the helper kills every descendant at once. On its
// descriptor 4 the helper writes how the server ended (status.go), which
// the library reports in place of the helper's own status.
//
// Confinement (Confine, with a Policy): the library clones the helper
// into new user, mount, PID, network and IPC namespaces (unprivileged user
// namespaces; the user's uid is root of the new one). There the helper
// mounts a /proc of its own PID namespace, hides the denyRead paths under
// empty mounts, caps the namespace's pid_max
// and sets rlimits for the limits asked, empties its capability bounding
// set, sets no_new_privs and applies Landlock (reads everywhere but
// denyRead, writes only beneath allowWrite, the private temporary and
// cache directories, and a few devices; no signals or abstract sockets
// beyond the sandbox), installs a seccomp filter refusing new AF_UNIX
// sockets (socket files are not Landlock's), then forks the server in a
// session of its own and
// stays as the namespace's init: when it exits, the kernel kills whatever
// is left. A layer the machine lacks is left out, and the Report says so;
// a Required policy then fails to start. What each machine offers is
// probed once per process by running the helper with -probe.
//
// Files:
//   - find.go: where the helper is (LEMONMCP_SANDBOX_HELPER, beside the
//     shared object, ../libexec).
//   - launch.go: the library side, the stdio.Launch for the helper.
//   - policy.go: Policy, the probe, Report and Confine.
//   - args.go: the helper's command line, written and parsed in one place.
//   - helper.go: the helper's main loop (Main).
//   - status.go: the record on the helper's descriptor 4 that tells the
//     library how the server ended (the helper, init of a PID namespace,
//     cannot die by the server's signal).
//   - reaper.go: finding, signalling and reaping every descendant.
//   - confine.go: namespaces set-up, limits, privileges, Landlock.
//   - rules.go: the Landlock rules for "read all but denyRead, write only
//     allowWrite".
//   - seccomp.go: the filter that refuses the server AF_UNIX sockets and
//     io_uring, installed on the forking thread; seccomp_amd64.go,
//     seccomp_arm64.go and seccomp_other.go: each architecture's audit
//     number (none: no filter, reported missing).
//   - proxy.go: the egress proxy for allowedDomains (library side): the
//     entries (names, wildcards, addresses, each with an optional port),
//     the refusal of internal addresses but for an address named with its
//     port, and what was refused, for the closed message.
//   - bridge.go: the loopback port inside the network namespace that leads
//     to it, and the proxy environment that replaces the server's proxy
//     settings (helper side).
package sandbox
