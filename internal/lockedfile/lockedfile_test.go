package lockedfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// helperEnv makes the test binary a counter-incrementing child process
// (see TestMain) for the cross-process contention test.
const helperEnv = "LOCKEDFILE_TEST_INCREMENT"

func TestMain(m *testing.M) {
	if spec := os.Getenv(helperEnv); spec != "" {
		path, n, _ := strings.Cut(spec, "|")
		times, err := strconv.Atoi(n)
		if err == nil {
			err = incrementTimes(path, times)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// incrementTimes adds one to the counter file at path, times times, each
// a read-modify-write under the exclusive lock (its own Lock, as a
// separate process or goroutine would have). Without the lock, two
// writers read the same value and one increment is lost.
func incrementTimes(path string, times int) error {
	l, err := OpenLock(path + ".lock")
	if err != nil {
		return err
	}
	defer l.Close()
	for i := 0; i < times; i++ {
		if err := l.Lock(true); err != nil {
			return err
		}
		n, err := readCounter(path)
		if err == nil {
			err = Replace(path, []byte(strconv.Itoa(n+1)), NoSync)
		}
		if uerr := l.Unlock(); err == nil {
			err = uerr
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func readCounter(path string) (int, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(string(data))
}

func TestLockContention(t *testing.T) {
	const workers, times = 4, 50
	tests := []struct {
		name string
		run  func(path string) []error
	}{
		{"goroutines", func(path string) []error {
			errs := make([]error, workers)
			var wg sync.WaitGroup
			for w := 0; w < workers; w++ {
				wg.Add(1)
				go func(w int) {
					defer wg.Done()
					errs[w] = incrementTimes(path, times)
				}(w)
			}
			wg.Wait()
			return errs
		}},
		{"processes", func(path string) []error {
			cmds := make([]*exec.Cmd, workers)
			errs := make([]error, workers)
			for w := range cmds {
				cmds[w] = exec.Command(os.Args[0], "-test.run=^$")
				cmds[w].Env = append(os.Environ(), helperEnv+"="+path+"|"+strconv.Itoa(times))
				cmds[w].Stderr = os.Stderr
				errs[w] = cmds[w].Start()
			}
			for w, cmd := range cmds {
				if errs[w] == nil {
					errs[w] = cmd.Wait()
				}
			}
			return errs
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "counter")
			for w, err := range tt.run(path) {
				require.NoError(t, err, "worker %d", w)
			}
			n, err := readCounter(path)
			require.NoError(t, err)
			require.Equal(t, workers*times, n, "an increment was lost: the lock did not exclude")
			requireNoTemp(t, filepath.Dir(path))
		})
	}
}

// TestLockModes probes a held lock from another open file with a
// non-blocking flock: shared holders admit shared ones and exclude
// exclusive ones; an exclusive holder excludes both; Unlock and Close
// release.
func TestLockModes(t *testing.T) {
	tests := []struct {
		name          string
		holdExclusive bool
		probe         int
		blocked       bool
	}{
		{"shared admits shared", false, syscall.LOCK_SH, false},
		{"shared excludes exclusive", false, syscall.LOCK_EX, true},
		{"exclusive excludes shared", true, syscall.LOCK_SH, true},
		{"exclusive excludes exclusive", true, syscall.LOCK_EX, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "store.lock")
			l, err := OpenLock(path)
			require.NoError(t, err)
			defer l.Close()
			require.Equal(t, path, l.Path())
			st, err := os.Stat(path)
			require.NoError(t, err)
			require.Equal(t, os.FileMode(0o600), st.Mode().Perm())

			probe, err := os.Open(path)
			require.NoError(t, err)
			defer probe.Close()
			try := func() error { return syscall.Flock(int(probe.Fd()), tt.probe|syscall.LOCK_NB) }
			unprobe := func() { require.NoError(t, syscall.Flock(int(probe.Fd()), syscall.LOCK_UN)) }

			require.NoError(t, l.Lock(tt.holdExclusive))
			if tt.blocked {
				require.ErrorIs(t, try(), syscall.EWOULDBLOCK)
			} else {
				require.NoError(t, try())
				unprobe()
			}
			require.NoError(t, l.Unlock())
			require.NoError(t, try(), "Unlock released the lock")
			unprobe()

			require.NoError(t, l.Lock(tt.holdExclusive))
			require.NoError(t, l.Close())
			require.NoError(t, try(), "Close released the lock")
			unprobe()
		})
	}
}

func TestReplace(t *testing.T) {
	tests := []struct {
		name       string
		durability Durability
		existing   []byte // nil: no file yet
		mode       os.FileMode
	}{
		{"new file, no sync", NoSync, nil, 0},
		{"new file, sync file", SyncFile, nil, 0},
		{"new file, sync file and dir", SyncFileAndDir, nil, 0},
		{"over a world-readable file", SyncFile, []byte("old content"), 0o644},
		{"over a longer file", NoSync, []byte(strings.Repeat("x", 4096)), 0o600},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "store.json")
			if tt.existing != nil {
				require.NoError(t, os.WriteFile(path, tt.existing, tt.mode))
				require.NoError(t, os.Chmod(path, tt.mode))
			}
			var oldIno uint64
			if st, err := os.Stat(path); err == nil {
				oldIno = st.Sys().(*syscall.Stat_t).Ino
			}
			old := syscall.Umask(0)
			err := Replace(path, []byte(`{"new":true}`), tt.durability)
			syscall.Umask(old)
			require.NoError(t, err)

			data, err := os.ReadFile(path)
			require.NoError(t, err)
			require.Equal(t, `{"new":true}`, string(data))
			st, err := os.Stat(path)
			require.NoError(t, err)
			require.Equal(t, os.FileMode(0o600), st.Mode().Perm(), "mode under umask 0")
			// Atomic: a new inode renamed in, never the old one rewritten
			// in place (a reader holding the old file sees it whole).
			require.NotEqual(t, oldIno, st.Sys().(*syscall.Stat_t).Ino)
			requireNoTemp(t, dir)
		})
	}
}

// TestReplaceKeepsOldReaderWhole: a reader that opened the file before a
// replacement reads the old content in full, not a mix.
func TestReplaceKeepsOldReaderWhole(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store.json")
	old := strings.Repeat("a", 1<<16)
	require.NoError(t, Replace(path, []byte(old), NoSync))
	r, err := os.Open(path)
	require.NoError(t, err)
	defer r.Close()
	require.NoError(t, Replace(path, []byte(strings.Repeat("b", 1<<15)), NoSync))
	got := make([]byte, 1<<17)
	n, _ := r.Read(got)
	require.Equal(t, old, string(got[:n]))
}

func TestErrors(t *testing.T) {
	const secret = "refresh-token-secret"
	tests := []struct {
		name  string
		setup func(dir string) (target string)
		run   func(target string) error
		op    Op
		cause error
	}{
		{
			name:  "lock file in a missing directory",
			setup: func(dir string) string { return filepath.Join(dir, "missing", "store.lock") },
			run:   func(target string) error { _, err := OpenLock(target); return err },
			op:    OpOpenLock,
			cause: syscall.ENOENT,
		},
		{
			name:  "lock file is a directory",
			setup: func(dir string) string { p := filepath.Join(dir, "store.lock"); _ = os.Mkdir(p, 0o700); return p },
			run:   func(target string) error { _, err := OpenLock(target); return err },
			op:    OpOpenLock,
			cause: syscall.EISDIR,
		},
		{
			name:  "replace in a missing directory",
			setup: func(dir string) string { return filepath.Join(dir, "missing", "store.json") },
			run:   func(target string) error { return Replace(target, []byte(secret), SyncFile) },
			op:    OpWrite,
			cause: syscall.ENOENT,
		},
		{
			name: "replace over a non-empty directory",
			setup: func(dir string) string {
				p := filepath.Join(dir, "store.json")
				_ = os.MkdirAll(filepath.Join(p, "child"), 0o700)
				return p
			},
			run:   func(target string) error { return Replace(target, []byte(secret), SyncFileAndDir) },
			op:    OpRename,
			cause: syscall.EEXIST,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			target := tt.setup(dir)
			err := tt.run(target)
			var fe *Error
			require.ErrorAs(t, err, &fe)
			require.Equal(t, tt.op, fe.Op)
			require.Equal(t, target, fe.Path)
			require.Contains(t, err.Error(), target, "the message names the path")
			require.NotContains(t, err.Error(), secret, "the message never carries the content")
			require.Equal(t, strings.Count(err.Error(), target), 1, "the path once, not again from os")
			require.NotContains(t, Cause(err).Error(), target)
			if tt.cause == syscall.EEXIST {
				// rename(2) over a non-empty directory: EEXIST or ENOTEMPTY.
				require.True(t, errors.Is(err, syscall.EEXIST) || errors.Is(err, syscall.ENOTEMPTY), "%v", err)
			} else {
				require.ErrorIs(t, err, tt.cause)
			}
			requireNoTemp(t, dir)
		})
	}
}

func TestCause(t *testing.T) {
	plain := errors.New("plain")
	tests := []struct {
		name string
		err  error
		want error
	}{
		{"path error", &fs.PathError{Op: "open", Path: "/p", Err: syscall.ENOENT}, syscall.ENOENT},
		{"link error", &os.LinkError{Op: "rename", Old: "/a", New: "/b", Err: syscall.EXDEV}, syscall.EXDEV},
		{"syscall error", os.NewSyscallError("flock", syscall.EBADF), syscall.EBADF},
		{"lockedfile error", &Error{Op: OpLock, Path: "/p", Err: syscall.EINVAL}, syscall.EINVAL},
		{"wrapped path error", fmt.Errorf("ctx: %w", &fs.PathError{Op: "open", Path: "/p", Err: syscall.EACCES}), syscall.EACCES},
		{"plain error", plain, plain},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, Cause(tt.err))
		})
	}
}

// requireNoTemp fails when a temporary file of Replace was left in dir.
func requireNoTemp(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		require.False(t, strings.HasSuffix(e.Name(), ".tmp"), "left behind: %s", e.Name())
	}
}

// TestLockRecords: records written in place in the lock file are read
// back by another handle (a read-only one, which creates nothing), a
// short read at the end is no error, and the lock itself still works.
func TestLockRecords(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store.lock")
	_, err := OpenLockReadOnly(path)
	require.ErrorIs(t, err, fs.ErrNotExist)
	_, err = os.Stat(path)
	require.ErrorIs(t, err, fs.ErrNotExist, "a read-only open created the lock file")

	w, err := OpenLock(path)
	require.NoError(t, err)
	defer w.Close()
	require.NoError(t, w.Lock(true))
	require.NoError(t, w.WriteAt([]byte("0123456789"), 0))
	require.NoError(t, w.WriteAt([]byte("AB"), 4))
	require.NoError(t, w.Unlock())

	r, err := OpenLockReadOnly(path)
	require.NoError(t, err)
	defer r.Close()
	buf := make([]byte, 16)
	n, err := r.ReadAt(buf, 0)
	require.NoError(t, err)
	require.Equal(t, "0123AB6789", string(buf[:n]))
	n, err = r.ReadAt(buf, 10)
	require.NoError(t, err)
	require.Zero(t, n)
	require.NoError(t, r.Lock(false))
	require.NoError(t, r.Unlock())
	var le *Error
	require.ErrorAs(t, r.WriteAt([]byte("x"), 0), &le, "a read-only handle cannot write")
	require.Equal(t, OpRecord, le.Op)
}
