// Package hosttests runs supervised clients and the multi-server host
// against real fixture servers (mcpfixture over stdio, in both protocol
// eras): crashes, servers that never start or start slowly, restarts under
// load, name collisions, list_changed refreshes, and a host of fifty
// servers. The tests live in _test files; this package has no code.
package hosttests
