// Package tokenstores proves the shared token stores (auth/tokenstore)
// against a strict authorization server: many processes, in several
// languages, each with many threads, share one grant through one store,
// start at the same instant with the same initial refresh token, and meet
// every access token expiry at once (tests/fixtures/oauthfixture
// -strict-refresh -token-period-ms). Some are SIGKILLed at random while
// they run. The server must see no refresh token reused and no grant
// revoked, every call of every surviving process must succeed, and the
// redemptions stay about one per expiry.
//
// The workers: goworker (the Go library), cworker (the C library,
// pthreads; compiled by the test), pyworker.py (the Python binding,
// threads) and the command line (python -m lemonmcp --config F
// call, short-lived runs). They are paced, not hammering: each thread
// pauses 100 ms between calls and the command line runs once per token
// period, which still meets every expiry with every thread at once and
// leaves the CPU (the suite runs beside others on 2 cores) to the
// processes under test. Stores: file always; postgres and redis when
// LEMONMCP_TEST_POSTGRES_URL / LEMONMCP_TEST_REDIS_URL name servers (make
// test-tokenstores starts private ones).
//
// The tests carry the build tag "tokenstores": they run in make
// test-tokenstores (go test -tags tokenstores), which builds what they
// need (the C library, the Python binding's copy of it), and not again in
// the tests module's own suite.
package tokenstores
