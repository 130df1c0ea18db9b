// Package lockedfile holds the file machinery that the library's shared
// stores (the OAuth token store, the tool pin file) have in common, so
// that each store keeps only its own format and version logic:
//
//   - Lock: a cross-process lock, an flock(2) on a sibling lock file
//     (PATH.lock, mode 0600) rather than on the data file itself, because
//     the data file is replaced by rename and a lock on a replaced inode
//     would guard nothing. The kernel drops an flock with its process, so
//     a crashed writer never leaves a store locked. An flock belongs to an
//     open file, not to a goroutine: callers serialize their own
//     goroutines when they share one Lock. The lock file's content is the
//     caller's: Lock.ReadAt and Lock.WriteAt keep small fixed-size records
//     in it in place (the token store's leases), never synced.
//   - Replace: an atomic replacement, a temporary file in the same
//     directory (mode 0600 under any umask) renamed over the target, so a
//     reader sees the old content or the new, never a torn file, and a
//     writer killed at any step leaves the target as it was. The caller
//     chooses the durability: no sync, the file synced before the rename,
//     or the directory synced after it as well.
//
// Errors are *Error: the step that failed, the path, and the cause
// without the path. They never carry the content (a store holds tokens),
// and callers word their own messages from the step and the cause.
package lockedfile
