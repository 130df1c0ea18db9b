// Package helper is the sandbox helper's side (cmd/lemonmcp-sandbox): it
// confines itself as its command line (sandbox/wire.Args) asks, every step
// checked, starts the server, tells the library on its status pipe what
// it set up (or which step failed, and exits without starting the
// server), then reaps. The library's side is package sandbox.
//
// The steps, each with the layer a failure names: private mounts, a /proc
// of the new PID namespace, the library's secrets left out of their
// directories (shadowed by a tmpfs of the other entries), the denyRead
// paths hidden under empty mounts
// and the namespace's pid_max (namespaces, limits); rlimits (limits);
// no_new_privs and an empty capability bounding set (privileges);
// Landlock with every right the kernel's ABI handles (Landlock); the loop
// back bridge to the library's proxy (the proxy); the seccomp filter
// (seccomp); the subreaper and the server's exec (the helper). With
// BestEffort a failed step joins the report's missing list instead.
//
// Files:
//   - helper.go: Main, the start of the server, the status records, and
//     the reaping loop; the helper lets go of its stdin, stdout and stderr
//     once the server runs, so a server closing its stdout is noticed.
//   - confine.go: the steps and the report they build.
//   - landlock.go: the Landlock ABI table (rights per version) and the
//     ABI 6 signal scoping erratum check.
//   - rules.go: the Landlock rules for "read all but denyRead, write only
//     allowWrite".
//   - seccomp.go: the filter that refuses the server AF_UNIX sockets and
//     io_uring, installed on the forking thread, and what it does not
//     block; seccomp_amd64.go, seccomp_arm64.go and seccomp_other.go: each
//     architecture's audit number (none: no filter).
//   - reaper.go: finding, signalling and reaping every descendant.
//   - bridge.go: the loopback port inside the network namespace that leads
//     to the library's proxy, and the proxy environment that replaces the
//     server's proxy settings.
package helper
