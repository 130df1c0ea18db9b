// Package callerhttp makes an HTTP/1.1 exchange on the goroutine that
// asked for it, without net/http's two goroutines per connection.
//
// net/http's Transport runs every exchange on two goroutines of the
// connection's (writeLoop, readLoop) and parks the caller on a channel: a
// request costs the caller two goroutine hand-offs, the response a wake-up
// by the netpoller. For a Go caller those are cheap; for a C host's thread,
// which cgo locks to its goroutine, each is a hand-off between OS threads
// (docs/abi-cost.md). Here the caller writes the request itself and reads
// the response itself, in one of the modes its context asks for:
//
//   - OnThread, for a caller outside Go that waits for the exchange anyway
//     (a C host's blocking call: transport.Outbound.Waiting and Thread):
//     the connection's socket is in blocking mode and the caller sleeps in
//     read(2); the kernel wakes that very thread when the server answers,
//     one wake-up per call, the least there can be. A blocked reader holds
//     an OS thread, so at most 64 such exchanges are under way in the
//     process; past that, requests go to the fallback.
//   - OnCaller, for a goroutine that waits for the exchange anyway (a Go
//     caller's blocking call): the same when no other blocking exchange is
//     under way, since a sleeper keeps its P and the goroutines parked in
//     the netpoller wait for one; otherwise the goroutine parks in the
//     netpoller, as Pooled (over https, in the fallback's).
//   - Pooled, for any other exchange (a runner's, for a call nobody waits
//     on): the socket stays in the netpoller and the goroutine parks, as
//     net/http's readLoop would, but the two hand-offs are gone. Plain
//     http only: over https the fallback negotiates HTTP/2, whose one
//     connection carries every request at once.
//
// The wire is net/http's own (http.Request.Write, http.ReadResponse); this
// package keeps the connections, each mode its own. It serves only what it
// can serve as net/http would: a server reached without a proxy, over
// http or (OnThread, OnCaller) https with ALPN http/1.1. Everything else,
// and every request it cannot dial directly, goes to the fallback
// *http.Transport.
// A connection kept for more than a millisecond is peeked at before it
// carries the next request (the server may have closed it); a request on
// one the server closed goes again, once, on a new connection.
// An exchange abandoned halfway (cancelled, failed, a body closed before
// its end) resets its connection, as closing net/http's with unread data
// does.
package callerhttp
