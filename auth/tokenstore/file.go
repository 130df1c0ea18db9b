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
// ".lock"), read, compare the version, write a temporary file in the same
// directory (mode 0600; synced when it carries new tokens) and rename it
// over the store: a reader
// (which takes no lock) sees the old file or the new one, never a torn
// one, and a writer killed at any point leaves the store as it was. The
// flock dies with its process, so a crash never leaves the store locked.
// The lock spans a few system calls, never a network request: waiting for
// another process's refresh is the lease's job (see package auth).
//
// The file holds every key: {"grants": {key: {"version": n, "record":
// {...}}}}.
type File struct {
	path string
	lock string

	mu       sync.Mutex       // serializes this process's writers (flock is per open file)
	lockFile *lockedfile.Lock // opened on the first write, kept until Close
	closed   bool
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

// Load implements Store.
func (s *File) Load(_ context.Context, key string) (*Record, Version, error) {
	if s.isClosed() {
		return nil, 0, ErrClosed
	}
	doc, err := s.read()
	if err != nil {
		return nil, 0, err
	}
	e := doc.Grants[key]
	return e.Record, e.Version, nil
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
	cur := doc.Grants[key]
	if cur.Version != expected {
		return cur.Version, cur.Record, nil
	}
	next := cur.Version + 1
	doc.Grants[key] = fileEntry{Version: next, Record: rec}
	// Only new tokens are synced to disk: a lease or state change lost
	// in a machine crash costs nothing (every process died with it),
	// while a lost rotated refresh token would end the grant.
	durable := cur.Record == nil || cur.Record.RefreshToken != rec.RefreshToken || cur.Record.AccessToken != rec.AccessToken
	if err := s.replace(doc, durable); err != nil {
		return 0, nil, err
	}
	return next, nil, nil
}

// Close implements Store.
func (s *File) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
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
// durable syncs it first.
func (s *File) replace(doc *fileDoc, durable bool) error {
	data, err := jsonx.Marshal(doc)
	if err != nil {
		return fmt.Errorf("encoding the token store failed: %s", err)
	}
	// A write that carries new tokens is synced before the rename (after a
	// crash the store holds the old record or the new one, never an empty
	// file) and its directory after it: the server has already spent the
	// old refresh token, so a rename lost in a crash would bring back a
	// token whose next use revokes the grant.
	sync := lockedfile.NoSync
	if durable {
		sync = lockedfile.SyncFileAndDir
	}
	if err := lockedfile.Replace(s.path, data, sync); err != nil {
		return fmt.Errorf("writing the token store %s failed: %s", s.path, lockedfile.Cause(err))
	}
	return nil
}
