// Package tokenstores proves the shared token stores (auth/tokenstore)
// against a strict authorization server: many processes, in several
// languages, each with many threads, share one grant through one store,
// start at the same instant with the same initial refresh token, and meet
// every access token expiry at once (tests/fixtures/oauthfixture
// -strict-refresh -token-period-ms). Some are SIGKILLed at random while
// they run. The server must see no refresh token reused and no grant
// revoked, every call of every surviving process must succeed, and the
// redemptions stay about one per expiry. In the "dpop" phase every
// process is given the same DPoP key and the server binds the grant's
// tokens to it (-dpop).
//
// The workers: goworker (the Go library), cworker (the C library,
// pthreads; compiled by the test), pyworker.py (the Python binding,
// threads), exworker.exs (the Elixir binding: one BEAM, Elixir processes;
// the test waits for its "ready" line, then gives it the start instant on
// its stdin, and SIGKILLs it in the phase with kills) and the command line
// (python -m lemonmcp --config F call, short-lived runs). They are paced,
// not hammering: each thread pauses 100 ms between calls and the command
// line runs once per token period, which still meets every expiry with
// every thread at once and leaves the CPU (the suite runs beside others on
// 2 cores) to the processes under test. Stores: file always; postgres and
// redis when LEMONMCP_TEST_POSTGRES_URL / LEMONMCP_TEST_REDIS_URL name
// servers (make test-tokenstores starts private ones).
//
// TestSharedGrantDPoP runs Go processes without a configured DPoP key
// (auth.dpop: true) against the strict server in -dpop mode: the grant is
// bound to the key of whoever redeems first, that key travels in the
// record, and no process ever presents the grant with another key.
//
// TestAppStoreContractThroughBindings holds the application's store, as
// each binding answers it, to the store's contract (storetest.Contract):
// pyappstore.py runs the Python binding's dispatcher over store=(load,
// save), exappstore.exs LemonMCP.Store over store: {load, save}, each
// reading the library's requests on its stdin (storetest.ProcessAsk).
//
// The tests carry the build tag "tokenstores": they run in make
// test-tokenstores (go test -tags tokenstores), which builds what they
// need (the C library, the Python binding's copy of it, the Elixir NIF),
// and not again in the tests module's own suite.
package tokenstores
