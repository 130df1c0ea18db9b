// Package searcheval measures the host's tool search (issue 22) on real
// catalogues: the recorded tools/list results of widely used MCP servers
// (catalogues/*.json, each naming the package and version it was recorded
// from), served by replayserver, plus the live fixture server, all behind
// one host.Host. Against queries.json, tasks phrased as a person would
// with the tools that answer them, it reports recall at 1, 3 and 5, the
// bytes of list_tools' JSON with and without deferred_tools, and the time
// of one search of a 1,000-tool catalogue. `make bench` prints the report
// (searchreport); eval_test.go keeps the figures from regressing.
package searcheval
