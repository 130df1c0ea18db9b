// Package tokenstore is the grant record every process sharing an OAuth
// grant keeps in the store (package store), and its collection there.
//
// Many processes (workers, nodes, short command-line runs, on one machine
// or many) share one user's grant. With refresh-token rotation (OAuth 2.1,
// RFC 9700 §4.14.2) a refresh token is redeemed once; a second redemption
// answers invalid_grant and, with reuse detection, revokes the grant. The
// store's contract makes coordination possible without a lock that can
// expire under a paused holder: every write is a compare-and-save against
// the version the writer read.
//
// A Record carries the tokens, a generation (bumped by every redemption),
// the DPoP key thumbprint of a DPoP-bound grant (and the key itself when
// no process configured it), a lease {owner, until} that a process claims
// (by compare-and-save) before it redeems the refresh token, and a state
// (ok, needs_reauth). The algorithm over the contract lives in package
// auth (Manager); Grants only turns records into the store's documents
// (the lease beside the body, where the file store keeps it in place).
//
// Records hold secrets: no message quotes one, and a Record prints
// without them.
//
// Files:
//   - store.go: Record, State, Lease and Version (the store's), Grants (the
//     collection "grants").
package tokenstore
