package host

import (
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

// pinFileVersion is the pin file's format; a file of a newer version is
// refused, never rewritten.
const pinFileVersion = 1

// pinDoc is the pin file: per server identity, the pinned hash (and the
// definition it was taken from, for a readable diff) of each definition.
type pinDoc struct {
	Version int                   `json:"version"`
	Servers map[string]*pinServer `json:"servers"` // by identity key (serverIdentity.key)
}

// pinServer is one server's pins. A kind's map is nil until the kind was
// first seen: first_use applies to a kind never seen, "new" to a name
// never seen on a kind already pinned.
type pinServer struct {
	Name         string                          `json:"name"`
	Identity     map[string]any                  `json:"identity"`
	Instructions *pinEntry                       `json:"instructions,omitempty"`
	Kinds        map[string]map[string]*pinEntry `json:"kinds"`
}

// pinEntry is one pinned definition.
type pinEntry struct {
	Hash       string           `json:"hash"`
	Definition jsonx.RawMessage `json:"definition,omitempty"`
}

// pinStore keeps the pin document: a file (pinFile) or the application
// (pinApp, "store": "app").
type pinStore interface {
	// load returns the document; the caller must not change it.
	load() (*pinDoc, error)
	// update lets fn change a fresh copy and keeps it when fn says so,
	// with no other update in between.
	update(fn func(*pinDoc) (bool, error)) (*pinDoc, error)
}

// pinFile is the file store: one JSON file, mode 0600, replaced atomically
// (a temporary file renamed over it) under an exclusive flock of PATH.lock,
// so that several processes can share it; reads take the lock shared.
type pinFile struct {
	path string

	// The last document read and the file it was read from: a list
	// refresh reads it again only when another write replaced the file
	// (every write is a rename, so a new inode and modification time).
	mu     sync.Mutex
	cached *pinDoc
	stamp  fileStamp
}

// fileStamp says which version of the file a document was read from.
type fileStamp struct {
	ino   uint64
	size  int64
	mtime int64
}

func stampOf(st os.FileInfo) fileStamp {
	s := fileStamp{size: st.Size(), mtime: st.ModTime().UnixNano()}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		s.ino = sys.Ino
	}
	return s
}

// errPinFile names the file in every error: a corrupt or newer file is
// never silently reset.
func (f *pinFile) errorf(format string, args ...any) error {
	return fmt.Errorf("the pin file %s %s", f.path, fmt.Sprintf(format, args...))
}

// withLock runs fn holding the file's lock (exclusive or shared).
func (f *pinFile) withLock(exclusive bool, fn func() error) error {
	if dir := filepath.Dir(f.path); dir != "" {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return f.errorf("cannot be created: its directory: %v", lockedfile.Cause(err))
		}
	}
	lf, err := lockedfile.OpenLock(f.path + ".lock")
	if err != nil {
		return f.errorf("cannot be locked (%s.lock: %v)", f.path, lockedfile.Cause(err))
	}
	defer lf.Close()
	if err := lf.Lock(exclusive); err != nil {
		return f.errorf("cannot be locked: %v", lockedfile.Cause(err))
	}
	defer func() { _ = lf.Unlock() }()
	return fn()
}

// read reads the file (the caller holds the lock); a missing file is an
// empty document.
func (f *pinFile) read() (*pinDoc, error) {
	data, err := os.ReadFile(f.path)
	if errors.Is(err, fs.ErrNotExist) {
		return &pinDoc{Version: pinFileVersion, Servers: map[string]*pinServer{}}, nil
	}
	if err != nil {
		return nil, f.errorf("cannot be read: %v", lockedfile.Cause(err))
	}
	return decodePinDoc(data, f.errorf)
}

// decodePinDoc reads a pin document; errorf names where it came from. A
// corrupt or newer document is an error, never an empty one.
func decodePinDoc(data []byte, errorf func(format string, args ...any) error) (*pinDoc, error) {
	var head struct {
		Version *int `json:"version"`
	}
	if jsonx.Unmarshal(data, &head) != nil {
		return nil, errorf("is not a valid pin file (not a JSON object); it was left as it is")
	}
	if head.Version == nil {
		return nil, errorf("is not a valid pin file (no \"version\"); it was left as it is")
	}
	if *head.Version > pinFileVersion {
		return nil, errorf("has version %d, newer than this library's %d; it was left as it is", *head.Version, pinFileVersion)
	}
	if *head.Version < 1 {
		return nil, errorf("has an invalid version %d; it was left as it is", *head.Version)
	}
	var doc pinDoc
	if jsonx.Unmarshal(data, &doc) != nil {
		return nil, errorf("is not a valid pin file (malformed servers); it was left as it is")
	}
	if doc.Servers == nil {
		doc.Servers = map[string]*pinServer{}
	}
	for key, ps := range doc.Servers {
		if ps == nil {
			return nil, errorf("is not a valid pin file (server %s is null); it was left as it is", key)
		}
	}
	return &doc, nil
}

// write replaces the file atomically (the caller holds the lock
// exclusively).
func (f *pinFile) write(doc *pinDoc) error {
	doc.Version = pinFileVersion
	data := jsonx.MustMarshal(doc)
	if err := lockedfile.Replace(f.path, data, lockedfile.SyncFile); err != nil {
		var fe *lockedfile.Error
		if errors.As(err, &fe) && fe.Op == lockedfile.OpRename {
			return f.errorf("cannot be replaced: %v", fe.Err)
		}
		return f.errorf("cannot be written: %v", lockedfile.Cause(err))
	}
	return nil
}

// load reads the document under a shared lock, or returns the one read
// last when the file was not replaced since. The document is shared: the
// caller must not change it.
func (f *pinFile) load() (*pinDoc, error) {
	var doc *pinDoc
	err := f.withLock(false, func() error {
		st, serr := os.Stat(f.path)
		f.mu.Lock()
		defer f.mu.Unlock()
		if serr == nil && f.cached != nil && stampOf(st) == f.stamp {
			doc = f.cached
			return nil
		}
		var err error
		if doc, err = f.read(); err != nil {
			f.cached = nil
			return err
		}
		if serr == nil {
			f.cached, f.stamp = doc, stampOf(st)
		}
		return nil
	})
	return doc, err
}

// update re-reads the document under the exclusive lock, lets fn change
// it, and writes it when fn says it changed: a read-modify-write no other
// process interleaves with.
func (f *pinFile) update(fn func(*pinDoc) (bool, error)) (*pinDoc, error) {
	var doc *pinDoc
	err := f.withLock(true, func() error {
		var err error
		if doc, err = f.read(); err != nil {
			return err
		}
		changed, err := fn(doc)
		if err != nil || !changed {
			return err
		}
		return f.write(doc)
	})
	return doc, err
}
