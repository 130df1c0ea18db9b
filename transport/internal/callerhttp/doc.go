// Package callerhttp makes an HTTP/1.1 exchange on the goroutine that
// asked for it, in blocking system calls, for a caller that waits for the
// exchange anyway (a blocking call: transport.Outbound.Waiting).
//
// net/http's Transport runs every exchange on two goroutines of the
// connection's (writeLoop, readLoop) and parks the caller on a channel: a
// request costs the caller two goroutine hand-offs, the response a wake-up
// by the netpoller. For a Go caller those are cheap; for a C host's thread,
// which cgo locks to its goroutine, each is a hand-off between OS threads
// (docs/abi-cost.md). Here the caller writes the request itself and sleeps
// in read(2) on a blocking socket, and the kernel wakes that very thread
// when the server answers: one wake-up per call, the least there can be.
//
// The wire is net/http's own (http.Request.Write, http.ReadResponse); this
// package keeps the connections. It serves only what it can serve as
// net/http would: http and https (ALPN http/1.1) to a server reached
// without a proxy, for a request whose context says its caller waits
// (OnCaller). Everything else, and every request it cannot dial directly,
// goes to the fallback *http.Transport.
//
// A blocked reader holds an OS thread, so only waiting callers come here:
// their number is bounded by the host's own threads, not by the calls in
// flight.
package callerhttp
