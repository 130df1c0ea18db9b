// Package bench measures LemonMCP against its peers, side by side, on the
// same servers. `make bench` runs the table (benchtable): every client is
// its own program printing one JSON line (benchclient for the floor, the Go
// core, go-sdk and mcp-go; clients/bench_host.c for the C host;
// clients/pyclient.py and clients/exclient.exs for the Python and Elixir
// bindings; clients/pysdk.py for the official Python SDK's client, 1.x and
// 2.x, the Python rows' anchor) against benchserver (go-sdk and minimal servers, stdio and
// Streamable HTTP, and the legacy HTTP+SSE transport of the go-sdk
// server); see README.md. The Go benchmarks of this package
// (`make bench-go`) measure the in-process call path. Figures are for
// comparing ratios on one machine in one run, never absolute limits: the
// machines are shared, and no figure is asserted anywhere. What is
// asserted is a count: allocs_test.go names every allocation of a
// sequential call over stdio and Streamable HTTP and fails when one is
// added (race_on_test.go, race_off_test.go: what the race detector adds).
package bench
