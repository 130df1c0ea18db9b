package lockedfile

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// Op is the step of a lock or a replacement that failed.
type Op string

// The steps an *Error names.
const (
	OpOpenLock Op = "opening the lock file" // creating or opening PATH.lock
	OpLock     Op = "locking"               // flock itself
	OpWrite    Op = "writing"               // creating, filling, syncing the temporary file
	OpRename   Op = "replacing"             // renaming the temporary file over the target
	OpSyncDir  Op = "syncing the directory of"
	OpRecord   Op = "reading or writing a record in" // ReadAt, WriteAt on the lock file
)

// Error is a failed step on a file. Err is the cause without the path (the
// callers name the file in their own words); no Error carries content.
type Error struct {
	Op   Op
	Path string // the lock file for OpOpenLock, else the target
	Err  error
}

func (e *Error) Error() string { return string(e.Op) + " " + e.Path + " failed: " + e.Err.Error() }

func (e *Error) Unwrap() error { return e.Err }

// Cause is err without the path that os (or an *Error) puts in it, for
// messages that name the file themselves.
func Cause(err error) error {
	var fe *Error
	if errors.As(err, &fe) {
		return fe.Err
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	var se *os.SyscallError
	if errors.As(err, &se) {
		return se.Err
	}
	return err
}

func fail(op Op, path string, err error) error {
	return &Error{Op: op, Path: path, Err: Cause(err)}
}

// Lock is an open lock file. One Lock holds one flock at a time: an
// flock is per open file, so goroutines that share a Lock serialize
// themselves; two Locks on the same path (in one process or two) exclude
// each other.
type Lock struct {
	path string
	f    *os.File
}

// OpenLock opens path as a lock file, creating it with mode 0600. Its
// directory must exist.
func OpenLock(path string) (*Lock, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fail(OpOpenLock, path, err)
	}
	return &Lock{path: path, f: f}, nil
}

// OpenLockReadOnly opens an existing lock file for reading its records and
// taking the shared lock, creating nothing (a reader may lack the right to
// create it). A missing file is an error that wraps fs.ErrNotExist.
func OpenLockReadOnly(path string) (*Lock, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fail(OpOpenLock, path, err)
	}
	return &Lock{path: path, f: f}, nil
}

// Path is the lock file's path.
func (l *Lock) Path() string { return l.path }

// Lock waits for the lock, exclusive (writers) or shared (readers).
func (l *Lock) Lock(exclusive bool) error {
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	if err := flock(l.f, how); err != nil {
		return fail(OpLock, l.path, err)
	}
	return nil
}

// Unlock releases the lock.
func (l *Lock) Unlock() error {
	if err := flock(l.f, syscall.LOCK_UN); err != nil {
		return fail(OpLock, l.path, err)
	}
	return nil
}

// ReadAt reads the lock file's own content at off (a store may keep small
// records in it: see the package doc). A short read at the end of the
// file is not an error: n says how much was read.
func (l *Lock) ReadAt(p []byte, off int64) (int, error) {
	n, err := l.f.ReadAt(p, off)
	if err != nil && !errors.Is(err, io.EOF) {
		return n, fail(OpRecord, l.path, err)
	}
	return n, nil
}

// WriteAt writes p at off in the lock file, in place (pwrite: no
// truncation, no sync). Callers hold the exclusive lock.
func (l *Lock) WriteAt(p []byte, off int64) error {
	if _, err := l.f.WriteAt(p, off); err != nil {
		return fail(OpRecord, l.path, err)
	}
	return nil
}

// Close closes the lock file, which releases a lock still held.
func (l *Lock) Close() error { return l.f.Close() }

// flock retries the call a signal interrupted (the Go runtime's own
// signals interrupt a blocked flock).
func flock(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// Durability says what Replace syncs to disk.
type Durability int

const (
	// NoSync leaves the data to the page cache: a machine crash may lose
	// the write (or, on some file systems, leave an empty file).
	NoSync Durability = iota
	// SyncFile syncs the temporary file before the rename: after a crash
	// the target holds the old content or the new, never an empty file.
	SyncFile
	// SyncFileAndDir also syncs the directory after the rename, so the
	// rename itself survives a crash.
	SyncFileAndDir
)

// Replace writes data to a temporary file next to path (mode 0600) and
// renames it over path. A failure at any step removes the temporary file
// and leaves path as it was.
func Replace(path string, data []byte, d Durability) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fail(OpWrite, path, err)
	}
	name := tmp.Name()
	ok := false
	defer func() {
		if !ok {
			_ = tmp.Close()
			_ = os.Remove(name)
		}
	}()
	// CreateTemp makes the file 0600 already; the chmod says so and
	// holds under any umask.
	if err := tmp.Chmod(0o600); err != nil {
		return fail(OpWrite, path, err)
	}
	if _, err := tmp.Write(data); err != nil {
		return fail(OpWrite, path, err)
	}
	if d >= SyncFile {
		if err := tmp.Sync(); err != nil {
			return fail(OpWrite, path, err)
		}
	}
	if err := tmp.Close(); err != nil {
		return fail(OpWrite, path, err)
	}
	if err := os.Rename(name, path); err != nil {
		return fail(OpRename, path, err)
	}
	ok = true
	if d >= SyncFileAndDir {
		if err := syncDir(dir); err != nil {
			return fail(OpSyncDir, path, err)
		}
	}
	return nil
}

func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}
