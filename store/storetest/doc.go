// Package storetest gives tests every store backend: memory, file,
// PostgreSQL and Redis (when the environment names servers: make
// test-tokenstores starts private ones and sets LEMONMCP_REQUIRE_STORES,
// so that a missing server fails instead of leaving a backend out), the
// application's (store_load / store_save answered in process, as a
// binding's helper answers them), and each of them sealed.
//
// Files:
//   - doc.go: this map.
//   - storetest.go: the backends, keys, the in-process application store.
//   - contract.go: Contract and ConcurrentUpdates, the store's contract as
//     tests check it on any store.
//   - process.go: ProcessAsk, the application's store answered by a helper
//     process (a binding's own code: tests/tokenstores).
package storetest
