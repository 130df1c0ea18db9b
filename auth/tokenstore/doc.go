// Package tokenstore holds the contract every shared OAuth token store
// keeps, and the stores built in.
//
// Many processes (workers, nodes, short command-line runs, on one machine
// or many) share one user's grant. With refresh-token rotation (OAuth 2.1,
// RFC 9700 §4.14.2) a refresh token is redeemed once; a second redemption
// answers invalid_grant and, with reuse detection, revokes the grant. The
// contract makes coordination possible without a lock that can expire
// under a paused holder: every write is a compare-and-save against the
// version the writer read.
//
//   - Load returns the record stored under a key and its version (0 and a
//     nil record when there is none).
//   - CompareAndSave writes a record only if the stored version is still
//     the expected one, and answers the new version; otherwise it writes
//     nothing and answers the version and record that won.
//
// A Record carries the tokens, a generation (bumped by every redemption),
// the DPoP key thumbprint of a DPoP-bound grant (and the key itself when
// no process configured it), a lease {owner, until} that a
// process claims (by compare-and-save) before it redeems the refresh
// token, and a state (ok, needs_reauth). The algorithm over the contract
// lives in package auth (Manager); stores only keep the contract.
//
// Records hold secrets: no store puts a token or key in an error message,
// and a Record prints without them.
//
// Files:
//   - store.go: Record, Lease, State, Version, the Store interface.
//   - memory.go: an in-process store (one process, and tests).
//   - file.go: a JSON file guarded by a flock'ed lock file, replaced
//     atomically, mode 0600 (one machine); new tokens are on disk before
//     CompareAndSave returns.
//   - fileleases.go: the file store's leases, kept in place in fixed-size
//     slots of its lock file (claim and release: one pwrite, no sync).
//   - postgres.go: a table with a version column, versioned UPDATE
//     (jackc/pgx/v5; many machines).
//   - redis.go: a hash per key, compare-and-set in a Lua script
//     (redis/go-redis/v9; many machines).
//   - open.go: Spec (the auth.token_store object) and Open.
package tokenstore
