// Package runners keeps the goroutines that make an HTTP transport's
// requests nobody waits on (Send without transport.Outbound.Waiting: done
// callbacks, queued calls, asyncio), between one request and the next. A
// new goroutine per request grew its stack to an HTTP exchange's depth
// every time (runtime copystack): 16 queued calls in flight from a C host
// cost 55 µs of CPU per call that way against 41 µs with kept runners
// (docs/abi-cost.md). Both HTTP transports use it.
package runners
