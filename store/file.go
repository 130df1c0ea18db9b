package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"

	"github.com/lemonmcp/lemonmcp/internal/jsonx"
	"github.com/lemonmcp/lemonmcp/internal/lockedfile"
)

// File is a store in one JSON file, for the processes of one machine.
//
// Writers take an exclusive flock on a lock file next to it (path +
// ".lock"), read, and compare the version. A write that changes only the
// lease (claiming or releasing it: no new body) is a pwrite of the
// document's slot in the lock file (fileleases.go), never synced. Any
// other write replaces the file: a temporary file in the same directory
// (mode 0600) renamed over it, so a reader (which takes no lock) sees the
// old file or the new one, never a torn one, and a writer killed at any
// point leaves the store as it was. A write of a new body is durable
// before CompareAndSave returns (see replace). The flock dies with its
// process, so a crash never leaves the store locked. The lock spans a few
// system calls, never a network request: waiting for another process's
// work is the lease's job.
//
// The file holds every collection: {"format": 1, "collections":
// {collection: {key: {"version": n, "document": ..., "lease"?: ...}}}}.
// The files of earlier releases are read as they are: a token store
// ({"grants": {key: {"version", "record"}}}) as the collection "grants",
// a pin file ({"version": 1, "servers": {...}}) as the collection "pins";
// the next write is in this format.
type File struct {
	path string
	lock string

	mu       sync.Mutex       // serializes this process's writers (flock is per open file)
	lockFile *lockedfile.Lock // opened on the first write, kept until Close
	closed   bool

	rmu        sync.Mutex       // guards readLock, readClosed and the cache
	readLock   *lockedfile.Lock // the lock file opened read-only for Load's slot reads
	readClosed bool
	// The last file read and its stamp: Load parses it again only when a
	// writer replaced it (every replacement is a rename: a new inode).
	cached *fileDoc
	stamp  fileStamp
}

// fileFormat is the file's format; a newer one is refused, never
// rewritten.
const fileFormat = 1

type fileDoc struct {
	Format      int                             `json:"format"`
	Collections map[string]map[string]fileEntry `json:"collections"`
}

type fileEntry struct {
	Version  Version          `json:"version"`
	Document jsonx.RawMessage `json:"document"`
	Lease    *Lease           `json:"lease,omitempty"`
}

// fileStamp says which version of the file a document was read from.
type fileStamp struct {
	ino, size, mtime, ctime int64
}

func stampOf(st os.FileInfo) fileStamp {
	s := fileStamp{size: st.Size(), mtime: st.ModTime().UnixNano()}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		s.ino = int64(sys.Ino)
		s.ctime = sys.Ctim.Nano()
	}
	return s
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
func (s *File) Load(_ context.Context, collection, key string) (*Document, Version, error) {
	if s.isClosed() {
		return nil, 0, ErrClosed
	}
	doc, err := s.readCached()
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
	d, ver, _ := effective(doc, t, collection, key)
	return d, ver, nil
}

// VersionOf implements Versioner: Load without copying the body.
func (s *File) VersionOf(_ context.Context, collection, key string) (Version, error) {
	if s.isClosed() {
		return 0, ErrClosed
	}
	doc, err := s.readCached()
	if err != nil {
		return 0, err
	}
	l, err := s.slotReader()
	if err != nil {
		return 0, err
	}
	var t *leaseTable
	if l != nil {
		if t, err = readLeaseTable(l); err != nil {
			return 0, s.slotError(err)
		}
	}
	if t != nil && t.anyTorn {
		if doc, t, err = s.readLocked(); err != nil {
			return 0, err
		}
	}
	e, ok := doc.Collections[collection][key]
	if !ok {
		return 0, nil
	}
	if t != nil {
		if slot, ok := t.current(leaseKeyHash(collection, key), e.Version); ok {
			return slot.version, nil
		}
	}
	return e.Version, nil
}

// CompareAndSave implements Store.
func (s *File) CompareAndSave(_ context.Context, collection, key string, expected Version, next *Document) (Version, *Document, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return 0, nil, ErrClosed
	}
	if s.lockFile == nil {
		lf, err := lockedfile.OpenLock(s.lock)
		if err != nil {
			return 0, nil, fmt.Errorf("opening the store's lock file %s failed: %s", s.lock, lockedfile.Cause(err))
		}
		s.lockFile = lf
	}
	if err := s.lockFile.Lock(true); err != nil {
		return 0, nil, fmt.Errorf("locking the store %s failed: %s", s.path, lockedfile.Cause(err))
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
	cur, curVer, kh := effective(doc, t, collection, key)
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
		return curVer, cur, nil
	}
	nextVer := curVer + 1
	if leaseOnly(cur, next) && leaseFits(next.Lease) {
		pos := t.find(kh)
		if pos < 0 {
			pos = t.free()
		}
		slot := leaseSlot{key: kh, base: doc.Collections[collection][key].Version, version: nextVer}
		if next.Lease != nil {
			l := *next.Lease
			slot.lease = &l
		}
		if err := writeLeaseSlot(s.lockFile, pos, slot); err != nil {
			return 0, nil, s.slotError(err)
		}
		return nextVer, nil, nil
	}
	if err := checkBody(collection, key, next); err != nil {
		return 0, nil, err
	}
	c := doc.Collections[collection]
	if c == nil {
		c = map[string]fileEntry{}
		doc.Collections[collection] = c
	}
	c[key] = fileEntry{Version: nextVer, Document: next.Body, Lease: next.Lease}
	// Only a new body is made durable: a lease change lost in a machine
	// crash costs nothing (every process died with it), while a lost
	// rotated refresh token would end a grant, a lost approval would hold
	// a tool again.
	durable := cur == nil || !bytes.Equal(cur.Body, next.Body)
	if err := s.replace(doc, durable); err != nil {
		return 0, nil, err
	}
	// The document's slot was written on an older data version, so it no
	// longer counts; clearing it keeps it from counting again should the
	// data file be removed and the document start over at a version it
	// saw.
	if pos := t.find(kh); pos >= 0 && t.slots[pos].base != 0 {
		_ = writeLeaseSlot(s.lockFile, pos, leaseSlot{key: kh})
	}
	return nextVer, nil, nil
}

// effective is a document and its version: the data file's, with the
// lease and version of its slot when that slot was written on the data
// version read.
func effective(doc *fileDoc, t *leaseTable, collection, key string) (*Document, Version, [16]byte) {
	kh := leaseKeyHash(collection, key)
	e, ok := doc.Collections[collection][key]
	if !ok {
		return nil, 0, kh
	}
	d := &Document{Body: bytes.Clone(e.Document)}
	if e.Lease != nil {
		l := *e.Lease
		d.Lease = &l
	}
	if t == nil {
		return d, e.Version, kh
	}
	slot, ok := t.current(kh, e.Version)
	if !ok {
		return d, e.Version, kh
	}
	d.Lease = nil
	if slot.lease != nil {
		l := *slot.lease
		d.Lease = &l
	}
	return d, slot.version, kh
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
		return nil, fmt.Errorf("opening the store's lock file %s failed: %s", s.lock, lockedfile.Cause(err))
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
		return nil, nil, fmt.Errorf("opening the store's lock file %s failed: %s", s.lock, lockedfile.Cause(err))
	}
	defer l.Close()
	if err := l.Lock(false); err != nil {
		return nil, nil, fmt.Errorf("locking the store %s failed: %s", s.path, lockedfile.Cause(err))
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
	return fmt.Errorf("the store's lease slots in %s failed: %s", s.lock, lockedfile.Cause(err))
}

// Close implements Store.
func (s *File) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	s.rmu.Lock()
	s.readClosed = true
	s.cached = nil
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

// readCached is read, or the file read last when no writer replaced it
// since. The document it answers is shared: effective copies from it.
func (s *File) readCached() (*fileDoc, error) {
	st, err := os.Stat(s.path)
	if err != nil {
		return s.read()
	}
	stamp := stampOf(st)
	s.rmu.Lock()
	if s.cached != nil && s.stamp == stamp {
		doc := s.cached
		s.rmu.Unlock()
		return doc, nil
	}
	s.rmu.Unlock()
	doc, err := s.read()
	if err != nil {
		return nil, err
	}
	// Kept only if the file is still the one stat saw (a rename in
	// between would pair this stamp with a newer file's content).
	if st2, err := os.Stat(s.path); err == nil && stampOf(st2) == stamp {
		s.rmu.Lock()
		if !s.readClosed {
			s.cached, s.stamp = doc, stamp
		}
		s.rmu.Unlock()
	}
	return doc, nil
}

// read parses the store; a missing file is an empty store. The message of
// a broken file never quotes it (it holds secrets).
func (s *File) read() (*fileDoc, error) {
	data, err := os.ReadFile(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return &fileDoc{Format: fileFormat, Collections: map[string]map[string]fileEntry{}}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the store %s failed: %s", s.path, lockedfile.Cause(err))
	}
	return decodeFile(data, s.path)
}

// decodeFile reads the file's content, in this format or an earlier
// release's.
func decodeFile(data []byte, path string) (*fileDoc, error) {
	doc := &fileDoc{}
	var head struct {
		Format  *int                        `json:"format"`
		Grants  map[string]firstGrant       `json:"grants"`
		Version *int                        `json:"version"`
		Servers map[string]jsonx.RawMessage `json:"servers"`
	}
	if len(bytes.TrimSpace(data)) > 0 && jsonx.Unmarshal(data, &head) != nil {
		return nil, fmt.Errorf("the store %s is not a store file (invalid JSON); it was left as it is", path)
	}
	switch {
	case head.Format != nil:
		if *head.Format > fileFormat || *head.Format < 1 {
			return nil, fmt.Errorf("the store %s has format %d, which this library (format %d) does not read; it was left as it is", path, *head.Format, fileFormat)
		}
		if jsonx.Unmarshal(data, doc) != nil {
			return nil, fmt.Errorf("the store %s is not a store file (malformed collections); it was left as it is", path)
		}
	case head.Grants != nil:
		// A token store of an earlier release: its records carried the
		// lease inside.
		c := map[string]fileEntry{}
		for key, g := range head.Grants {
			e, err := g.entry()
			if err != nil {
				return nil, fmt.Errorf("the store %s is not a store file (the grant %q is malformed); it was left as it is", path, key)
			}
			c[key] = e
		}
		doc.Collections = map[string]map[string]fileEntry{"grants": c}
	case head.Servers != nil || head.Version != nil:
		// A pin file of an earlier release: one document per server.
		if head.Version == nil || *head.Version != 1 {
			return nil, fmt.Errorf("the store %s is a pin file of a version this library does not read; it was left as it is", path)
		}
		c := map[string]fileEntry{}
		for key, raw := range head.Servers {
			if len(raw) == 0 || string(raw) == "null" {
				return nil, fmt.Errorf("the store %s is not a valid pin file (server %s is null); it was left as it is", path, key)
			}
			c[key] = fileEntry{Version: 1, Document: raw}
		}
		doc.Collections = map[string]map[string]fileEntry{"pins": c}
	case len(bytes.TrimSpace(data)) > 0 && !bytes.Equal(bytes.TrimSpace(data), []byte("{}")):
		return nil, fmt.Errorf("the store %s is not a store file (no \"format\"); it was left as it is", path)
	}
	doc.Format = fileFormat
	if doc.Collections == nil {
		doc.Collections = map[string]map[string]fileEntry{}
	}
	return doc, nil
}

// firstGrant is a grant of the first token store file: the lease inside
// the record.
type firstGrant struct {
	Version Version                     `json:"version"`
	Record  map[string]jsonx.RawMessage `json:"record"`
}

func (g firstGrant) entry() (fileEntry, error) {
	e := fileEntry{Version: g.Version}
	if raw, ok := g.Record["lease"]; ok {
		if string(raw) != "null" {
			e.Lease = &Lease{}
			if err := jsonx.Unmarshal(raw, e.Lease); err != nil {
				return e, err
			}
		}
		delete(g.Record, "lease")
	}
	body, err := jsonx.Marshal(g.Record)
	e.Document = body
	return e, err
}

// replace writes doc to a temporary file and renames it over the store;
// durable makes the new content survive a machine crash before it
// returns.
func (s *File) replace(doc *fileDoc, durable bool) error {
	data, err := jsonx.Marshal(doc)
	if err != nil {
		return fmt.Errorf("encoding the store failed: %s", err)
	}
	// A write of a new body syncs the temporary file before the rename
	// (after a crash the store holds the old document or the new one,
	// never an empty file) and the directory after it, before returning:
	// an authorization server spent the old refresh token when it
	// answered, so a rename lost in a crash would bring back a token whose
	// next use revokes the grant. The directory sync is not left to the
	// background: a process that exits right after its commit (a
	// command-line run) would leave the rename to the file system's own
	// commit, and a failed sync could not reach the caller. A refresh
	// stays cheap because its lease writes replace nothing
	// (fileleases.go).
	sync := lockedfile.NoSync
	if durable {
		sync = lockedfile.SyncFileAndDir
	}
	if err := lockedfile.Replace(s.path, data, sync); err != nil {
		return fmt.Errorf("writing the store %s failed: %s", s.path, lockedfile.Cause(err))
	}
	return nil
}
