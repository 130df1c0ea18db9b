// Package respawn wraps the transport of a supervised client: a Transport
// that forwards to the current generation of a real transport and, on
// Next, builds and starts the next generation from a Factory, so that the
// client (and a multi-server host's handle to it) stays the same object
// across restarts of its server.
//
// Each generation reports to the client through a sink of its own, which
// passes on that generation's Closed only while it is the current one (a
// late Closed of a retired generation must not close the restarted
// client) and every generation's recovered panic (a panic is a bug in the
// library whichever generation it happened with).
//
// The restart policy (when to call Next, backoff, giving up) is the
// client's: this package only swaps generations. Like every transport it
// imports nothing of the library but the transport package's shared types.
package respawn
