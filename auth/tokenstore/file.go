package tokenstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/lemonmcp/lemonmcp/internal/jsonx"
	"github.com/lemonmcp/lemonmcp/internal/lockedfile"
)

// File is a Store in one JSON file, for the processes of one machine.
//
// Writers take an exclusive flock on a lock file next to it (path +
// ".lock"), read, and compare the version. A write that changes only the
// lease (claiming or releasing it: no new tokens) is a pwrite of the
// key's slot in the lock file (fileleases.go), never synced. Any other
// write replaces the store: a temporary file in the same directory (mode
// 0600) renamed over it, so a reader (which takes no lock) sees the old
// file or the new one, never a torn one, and a writer killed at any point
// leaves the store as it was. A write that carries new tokens is durable
// before CompareAndSave returns (see replace). The flock dies with its
// process, so a crash never leaves the store locked. The lock spans a few
// system calls, never a network request: waiting for another process's
// refresh is the lease's job (see package auth).
//
// The file holds every key: {"grants": {key: {"version": n, "record":
// {...}}}}, the format of the first file store, which its readers still
// read; the lease slots are new (see docs/configuration.md for why builds
// before them must not share a store with later ones).
type File struct {
	path string
	lock string

	mu       sync.Mutex       // serializes this process's writers (flock is per open file)
	lockFile *lockedfile.Lock // opened on the first write, kept until Close
	closed   bool

	rmu        sync.Mutex       // guards readLock and readClosed
	readLock   *lockedfile.Lock // the lock file opened read-only for Load's slot reads
	readClosed bool
}

type fileDoc struct {
	Grants map[string]fileEntry `json:"grants"`
}

type fileEntry struct {
	Version Version `json:"version"`
	Record  *Record `json:"record"`
}

// OpenFile returns the file store at path. The directory must exist; the
// file and its lock file are created on the first write.
func OpenFile(path string) (*File, error) {
	if path == "" {
		return nil, errors.New("path: required")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("path: %s", err)
	}
	st, err := os.Stat(filepath.Dir(abs))
	if err != nil || !st.IsDir() {
		return nil, fmt.Errorf("path: the directory %s does not exist", filepath.Dir(abs))
	}
	if st, err := os.Stat(abs); err == nil && st.IsDir() {
		return nil, fmt.Errorf("path: %s is a directory", abs)
	}
	return &File{path: abs, lock: abs + ".lock"}, nil
}

// Path is the store's absolute path.
func (s *File) Path() string { return s.path }

// Load implements Store. It takes no lock: it reads the data file, then
// the lease slots; a slot counts only if it was written on the data
// version read, so the pair is a state the store was in. A torn slot
// (a writer midway) makes it read both again under the shared lock.
func (s *File) Load(_ context.Context, key string) (*Record, Version, error) {
	if s.isClosed() {
		return nil, 0, ErrClosed
	}
	doc, err := s.read()
	if err != nil {
		return nil, 0, err
	}
	l, err := s.slotReader()
	if err != nil {
		return nil, 0, err
	}
	var t *leaseTable
	if l != nil {
		if t, err = readLeaseTable(l); err != nil {
			return nil, 0, s.slotError(err)
		}
	}
	if t != nil && t.anyTorn {
		if doc, t, err = s.readLocked(); err != nil {
			return nil, 0, err
		}
	}
	rec, ver, _ := effective(doc, t, key)
	return rec, ver, nil
}

// CompareAndSave implements Store.
func (s *File) CompareAndSave(_ context.Context, key string, expected Version, rec *Record) (Version, *Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return 0, nil, ErrClosed
	}
	if s.lockFile == nil {
		lf, err := lockedfile.OpenLock(s.lock)
		if err != nil {
			return 0, nil, fmt.Errorf("opening the token store's lock file %s failed: %s", s.lock, lockedfile.Cause(err))
		}
		s.lockFile = lf
	}
	if err := s.lockFile.Lock(true); err != nil {
		return 0, nil, fmt.Errorf("locking the token store %s failed: %s", s.path, lockedfile.Cause(err))
	}
	defer func() { _ = s.lockFile.Unlock() }()
	doc, err := s.read()
	if err != nil {
		return 0, nil, err
	}
	t, err := readLeaseTable(s.lockFile) // under the lock, a torn slot is no slot
	if err != nil {
		return 0, nil, s.slotError(err)
	}
	curRec, curVer, kh := effective(doc, t, key)
	if t.anyTorn {
		// Left by a crash: cleared, so that readers stop rereading under
		// the lock for it.
		for i, torn := range t.torn {
			if torn {
				if err := writeLeaseSlot(s.lockFile, i, leaseSlot{}); err != nil {
					return 0, nil, s.slotError(err)
				}
				t.torn[i], t.slots[i] = false, leaseSlot{}
			}
		}
		t.anyTorn = false
	}
	if curVer != expected {
		return curVer, curRec, nil
	}
	next := curVer + 1
	if leaseOnly(curRec, rec) && leaseFits(rec.Lease) {
		pos := t.find(kh)
		if pos < 0 {
			pos = t.free()
		}
		slot := leaseSlot{key: kh, base: doc.Grants[key].Version, version: next}
		if rec.Lease != nil {
			l := *rec.Lease
			slot.lease = &l
		}
		if err := writeLeaseSlot(s.lockFile, pos, slot); err != nil {
			return 0, nil, s.slotError(err)
		}
		return next, nil, nil
	}
	doc.Grants[key] = fileEntry{Version: next, Record: rec}
	// Only new tokens are made durable: a lease or state change lost
	// in a machine crash costs nothing (every process died with it),
	// while a lost rotated refresh token would end the grant.
	durable := curRec == nil || rec == nil || curRec.RefreshToken != rec.RefreshToken || curRec.AccessToken != rec.AccessToken
	if err := s.replace(doc, durable); err != nil {
		return 0, nil, err
	}
	// The key's slot was written on an older data version, so it no
	// longer counts; clearing it keeps it from counting again should the
	// data file be removed and the key start over at a version it saw.
	if pos := t.find(kh); pos >= 0 && t.slots[pos].base != 0 {
		_ = writeLeaseSlot(s.lockFile, pos, leaseSlot{key: kh})
	}
	return next, nil, nil
}

// effective is key's record and version: the data file's, with the
// lease and version of the key's slot when that slot was written on the
// data version read.
func effective(doc *fileDoc, t *leaseTable, key string) (*Record, Version, [16]byte) {
	kh := leaseKeyHash(key)
	e := doc.Grants[key]
	if e.Record == nil || t == nil {
		return e.Record, e.Version, kh
	}
	slot, ok := t.current(kh, e.Version)
	if !ok {
		return e.Record, e.Version, kh
	}
	rec := e.Record.Clone()
	rec.Lease = nil
	if slot.lease != nil {
		l := *slot.lease
		rec.Lease = &l
	}
	return rec, slot.version, kh
}

// slotReader is the lock file opened read-only for Load, or nil while it
// does not exist (no write yet: no slots).
func (s *File) slotReader() (*lockedfile.Lock, error) {
	s.rmu.Lock()
	defer s.rmu.Unlock()
	if s.readClosed {
		return nil, ErrClosed
	}
	if s.readLock != nil {
		return s.readLock, nil
	}
	l, err := lockedfile.OpenLockReadOnly(s.lock)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("opening the token store's lock file %s failed: %s", s.lock, lockedfile.Cause(err))
	}
	s.readLock = l
	return l, nil
}

// readLocked reads the data file and the slots under the shared lock, on
// a handle of its own (an flock belongs to an open file: sharing the
// reader's would let one goroutine's unlock end another's lock).
func (s *File) readLocked() (*fileDoc, *leaseTable, error) {
	l, err := lockedfile.OpenLockReadOnly(s.lock)
	if err != nil {
		return nil, nil, fmt.Errorf("opening the token store's lock file %s failed: %s", s.lock, lockedfile.Cause(err))
	}
	defer l.Close()
	if err := l.Lock(false); err != nil {
		return nil, nil, fmt.Errorf("locking the token store %s failed: %s", s.path, lockedfile.Cause(err))
	}
	doc, err := s.read()
	if err != nil {
		return nil, nil, err
	}
	t, err := readLeaseTable(l)
	if err != nil {
		return nil, nil, s.slotError(err)
	}
	return doc, t, nil
}

func (s *File) slotError(err error) error {
	return fmt.Errorf("the token store's lease slots in %s failed: %s", s.lock, lockedfile.Cause(err))
}

// Close implements Store.
func (s *File) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	s.rmu.Lock()
	s.readClosed = true
	if s.readLock != nil {
		_ = s.readLock.Close()
		s.readLock = nil
	}
	s.rmu.Unlock()
	if s.lockFile != nil {
		err := s.lockFile.Close()
		s.lockFile = nil
		return err
	}
	return nil
}

func (s *File) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// read parses the store; a missing file is an empty store. The message of
// a broken file never quotes it (it holds tokens).
func (s *File) read() (*fileDoc, error) {
	data, err := os.ReadFile(s.path)
	doc := &fileDoc{}
	if errors.Is(err, fs.ErrNotExist) {
		doc.Grants = map[string]fileEntry{}
		return doc, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the token store %s failed: %s", s.path, lockedfile.Cause(err))
	}
	if len(data) > 0 {
		if err := jsonx.Unmarshal(data, doc); err != nil {
			return nil, fmt.Errorf("the token store %s is not a token store file (invalid JSON)", s.path)
		}
	}
	if doc.Grants == nil {
		doc.Grants = map[string]fileEntry{}
	}
	return doc, nil
}

// replace writes doc to a temporary file and renames it over the store;
// durable makes the new content survive a machine crash before it
// returns.
func (s *File) replace(doc *fileDoc, durable bool) error {
	data, err := jsonx.Marshal(doc)
	if err != nil {
		return fmt.Errorf("encoding the token store failed: %s", err)
	}
	// A write that carries new tokens syncs the temporary file before the
	// rename (after a crash the store holds the old record or the new one,
	// never an empty file) and the directory after it, before returning:
	// the server spent the old refresh token when it answered, so a rename
	// lost in a crash would bring back a token whose next use revokes the
	// grant. The directory sync is not left to the background: the window
	// in which a crash loses the new tokens opens with the server's answer
	// whatever the store does, and ends when the rename is on disk; a sync
	// in the background ends it no sooner, but a process that exits right
	// after its commit (a command-line run) would leave the rename to the
	// file system's own commit (seconds on ext4, longer elsewhere), and a
	// failed sync could not reach the caller, which would use and hand on
	// tokens the disk may lose. The refresh stays cheap because its lease
	// writes no longer replace nor sync anything (fileleases.go).
	sync := lockedfile.NoSync
	if durable {
		sync = lockedfile.SyncFileAndDir
	}
	if err := lockedfile.Replace(s.path, data, sync); err != nil {
		return fmt.Errorf("writing the token store %s failed: %s", s.path, lockedfile.Cause(err))
	}
	return nil
}
