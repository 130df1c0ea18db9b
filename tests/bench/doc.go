// Package bench measures LemonMCP against its peers, side by side, on the
// same servers. `make bench` runs the table (benchtable): every client is
// its own program printing one JSON line (benchclient for the floor, the Go
// core, go-sdk and mcp-go; clients/bench_host.c for the C host;
// clients/pyclient.py and clients/exclient.exs for the Python and Elixir
// bindings; clients/pysdk.py for the official Python SDK's client, 1.x and
// 2.x, the Python rows' anchor) against benchserver (go-sdk and minimal servers, stdio and
// Streamable HTTP); see README.md. The Go benchmarks of this package
// (`make bench-go`) measure the in-process call path. Figures are for
// comparing ratios on one machine in one run, never absolute limits: the
// machines are shared, and no figure is asserted anywhere.
package bench
