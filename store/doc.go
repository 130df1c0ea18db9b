// Package store is the one versioned document store the library keeps
// what it persists in: OAuth grants (the collection "grants", package
// auth/tokenstore) and tool definition pins (the collection "pins", one
// document per server identity, package host), shared by every process
// and machine that opens the same store.
//
// The contract makes coordination possible without a lock that can
// expire under a paused holder: every write is a compare-and-save
// against the version the writer read.
//
//   - Load(collection, key) returns the document and its version (nil
//     and 0 when there is none).
//   - CompareAndSave(collection, key, expected, document) writes only if
//     the stored version is still expected, and answers the new version;
//     otherwise it writes nothing and answers the version and document
//     that won. Update retries a read-modify-write on the winner, so two
//     processes changing one document at once both keep their change.
//   - A document carries a lease beside its body where a collection
//     needs one (a grant's refresh): claimed and released by
//     compare-and-save, never sealed, cheap on the file store.
//
// Documents may hold secrets: no store puts a body in a message. With
// "encryption" every body is sealed (AES-256-GCM) before it reaches the
// backend, so no file, row, hash or application sees a token.
//
// Files:
//   - store.go: Version, Lease, Document, the Store interface, Update.
//   - memory.go: an in-process store (one process, and tests).
//   - file.go: a JSON file guarded by a flock'ed lock file, replaced
//     atomically, mode 0600 (one machine); reads the files of earlier
//     releases (token store, pin file).
//   - fileleases.go: the file store's leases, kept in place in fixed-size
//     slots of its lock file (claim and release: one pwrite, no sync).
//   - postgres.go: a table with a version column, versioned UPDATE
//     (jackc/pgx/v5; many machines).
//   - redis.go: a hash per document, compare-and-set in a Lua script
//     (redis/go-redis/v9; many machines).
//   - app.go: the application's store, over the store_load / store_save
//     app requests.
//   - sealed.go: Sealed, AES-256-GCM sealing over any store, with key
//     ids and previous keys for rotation.
//   - open.go: Spec (the one configuration form), ParseSpec, Open.
//   - storetest/: every backend for tests, an in-process application
//     store, the contract every backend is held to, and the application's
//     store answered by a helper process (each binding's own answering
//     code, tests/tokenstores); its doc.go maps its files.
package store
