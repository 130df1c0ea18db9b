package store

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/internal/lockedfile"
)

// twoHandles opens the file store twice on one path: two lock file
// handles, as two processes have.
func twoHandles(t *testing.T) (a, b *File, path string) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "tokens.json")
	a, err := OpenFile(path)
	require.NoError(t, err)
	b, err = OpenFile(path)
	require.NoError(t, err)
	t.Cleanup(func() { a.Close(); b.Close() })
	return a, b, path
}

func fileState(t *testing.T, path string) (os.FileInfo, []byte) {
	t.Helper()
	st, err := os.Stat(path)
	require.NoError(t, err)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return st, data
}

// TestFileLeaseInPlace: claiming and releasing a lease leave the data
// file as it was (same file, same bytes: the lease is in the lock file),
// and another handle sees each lease and version; a stale version still
// loses; an expired lease is claimed over by another handle; the commit
// of new tokens releases the lease for every reader.
func TestFileLeaseInPlace(t *testing.T) {
	ctx := context.Background()
	now := time.Now().UnixMilli()
	for _, tc := range []struct {
		name  string
		until int64 // of a's lease
		// bSees: whether b finds a's lease live (and must wait).
		bSees bool
	}{
		{"live lease", now + 60_000, true},
		{"expired lease is reclaimable", now - 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b, path := twoHandles(t)
			seed := gen(1, nil)
			v0, won, err := a.CompareAndSave(ctx, "grants", "k", 0, seed)
			require.NoError(t, err)
			require.Nil(t, won)
			st0, data0 := fileState(t, path)

			claimed := seed.Clone()
			claimed.Lease = &Lease{Owner: "a", Until: tc.until}
			v1, won, err := a.CompareAndSave(ctx, "grants", "k", v0, claimed)
			require.NoError(t, err)
			require.Nil(t, won)
			require.Greater(t, v1, v0)

			st1, data1 := fileState(t, path)
			require.True(t, os.SameFile(st0, st1), "a lease write replaced the data file")
			require.Equal(t, data0, data1, "a lease write changed the data file")

			rec, ver, err := b.Load(ctx, "grants", "k")
			require.NoError(t, err)
			require.Equal(t, v1, ver)
			require.Equal(t, claimed, rec)
			require.Equal(t, tc.bSees, rec.LeasedBy("b", time.Now().UnixMilli()))

			// b's claim on the version before a's loses and learns a's.
			bClaim := seed.Clone()
			bClaim.Lease = &Lease{Owner: "b", Until: now + 60_000}
			v, won, err := b.CompareAndSave(ctx, "grants", "k", v0, bClaim)
			require.NoError(t, err)
			require.Equal(t, v1, v)
			require.Equal(t, claimed, won)

			holder, hv := a, v1
			if !tc.bSees {
				// Expired: b claims over it on the version it loaded.
				v2, won, err := b.CompareAndSave(ctx, "grants", "k", ver, bClaim)
				require.NoError(t, err)
				require.Nil(t, won)
				require.Greater(t, v2, v1)
				rec, ver, err := a.Load(ctx, "grants", "k")
				require.NoError(t, err)
				require.Equal(t, v2, ver)
				require.Equal(t, bClaim, rec)
				_, data := fileState(t, path)
				require.Equal(t, data0, data, "a lease write changed the data file")
				holder, hv = b, v2
			}

			// The commit: new tokens, the lease released, seen by both.
			next := gen(2, nil)
			v3, won, err := holder.CompareAndSave(ctx, "grants", "k", hv, next)
			require.NoError(t, err)
			require.Nil(t, won)
			require.Greater(t, v3, hv)
			for _, s := range []*File{a, b} {
				rec, ver, err := s.Load(ctx, "grants", "k")
				require.NoError(t, err)
				require.Equal(t, v3, ver)
				require.Equal(t, next, rec)
			}
		})
	}
}

// TestFileLeaseTornSlot: a lease slot cut short or garbled (a crash in
// the middle of its write) is no lease: the record's own counts, with
// the data file's version, and the next claim takes the slot over.
func TestFileLeaseTornSlot(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		tear func(t *testing.T, lock string)
	}{
		{"cut short", func(t *testing.T, lock string) { require.NoError(t, os.Truncate(lock, leaseSlotSize/2)) }},
		{"checksum wrong", func(t *testing.T, lock string) { flipByte(t, lock, leaseOwnerStart) }},
		{"magic wrong", func(t *testing.T, lock string) { flipByte(t, lock, 0) }},
		{"partial slot appended", func(t *testing.T, lock string) {
			f, err := os.OpenFile(lock, os.O_WRONLY|os.O_APPEND, 0)
			require.NoError(t, err)
			_, err = f.Write([]byte("LMLS\x01"))
			require.NoError(t, err)
			require.NoError(t, f.Close())
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b, path := twoHandles(t)
			seed := gen(1, nil)
			v0, _, err := a.CompareAndSave(ctx, "grants", "k", 0, seed)
			require.NoError(t, err)
			claimed := seed.Clone()
			claimed.Lease = &Lease{Owner: "a", Until: time.Now().Add(time.Hour).UnixMilli()}
			v1, won, err := a.CompareAndSave(ctx, "grants", "k", v0, claimed)
			require.NoError(t, err)
			require.Nil(t, won)

			tc.tear(t, path+".lock")
			if tc.name == "partial slot appended" {
				// The whole slot before it still holds a's lease.
				rec, ver, err := b.Load(ctx, "grants", "k")
				require.NoError(t, err)
				require.Equal(t, v1, ver)
				require.Equal(t, claimed, rec)
				// The next write clears the partial slot.
				_, won, err := a.CompareAndSave(ctx, "grants", "k", v1, seed)
				require.NoError(t, err)
				require.Nil(t, won)
				st, err := os.Stat(path + ".lock")
				require.NoError(t, err)
				require.Equal(t, int64(2*leaseSlotSize), st.Size())
				return
			}
			rec, ver, err := b.Load(ctx, "grants", "k")
			require.NoError(t, err)
			require.Equal(t, v0, ver)
			require.Equal(t, seed, rec)

			bClaim := seed.Clone()
			bClaim.Lease = &Lease{Owner: "b", Until: time.Now().Add(time.Hour).UnixMilli()}
			v2, won, err := b.CompareAndSave(ctx, "grants", "k", ver, bClaim)
			require.NoError(t, err)
			require.Nil(t, won)
			require.Greater(t, v2, v0)
			rec, ver, err = a.Load(ctx, "grants", "k")
			require.NoError(t, err)
			require.Equal(t, v2, ver)
			require.Equal(t, bClaim, rec)
			// The torn slot is gone: the lock file holds b's whole slot.
			st, err := os.Stat(path + ".lock")
			require.NoError(t, err)
			require.Equal(t, int64(leaseSlotSize), st.Size())
			lf, err := lockedfile.OpenLockReadOnly(path + ".lock")
			require.NoError(t, err)
			defer lf.Close()
			table, err := readLeaseTable(lf)
			require.NoError(t, err)
			require.False(t, table.anyTorn)
		})
	}
}

func flipByte(t *testing.T, path string, off int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	require.NoError(t, err)
	defer f.Close()
	b := make([]byte, 1)
	_, err = f.ReadAt(b, off)
	require.NoError(t, err)
	b[0] ^= 0xff
	_, err = f.WriteAt(b, off)
	require.NoError(t, err)
}

// TestFileStoreLeasesAcrossProcesses: processes (this test binary re-run)
// each claim the lease, then commit a generation and release it in one
// compare-and-save, as the Manager does; a commit never loses (nobody
// wrote under the lease), no generation is lost, and the leases lived in
// the lock file (one slot for the one key).
func TestFileStoreLeasesAcrossProcesses(t *testing.T) {
	if path := os.Getenv("TOKENSTORE_LEASE_CHILD_FILE"); path != "" {
		s, err := OpenFile(path)
		require.NoError(t, err)
		n, _ := strconv.Atoi(os.Getenv("TOKENSTORE_CHILD_N"))
		require.NoError(t, leaseCycles(context.Background(), s, "shared", os.Getenv("TOKENSTORE_CHILD_OWNER"), n, nil))
		return
	}
	path := filepath.Join(t.TempDir(), "tokens.json")
	const procs, each = 4, 20
	var cmds []*exec.Cmd
	outs := make([]*strings.Builder, procs)
	for i := 0; i < procs; i++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestFileStoreLeasesAcrossProcesses$", "-test.count=1")
		cmd.Env = append(os.Environ(), "TOKENSTORE_LEASE_CHILD_FILE="+path, "TOKENSTORE_CHILD_N="+strconv.Itoa(each),
			"TOKENSTORE_CHILD_OWNER=proc-"+strconv.Itoa(i))
		outs[i] = &strings.Builder{}
		cmd.Stdout, cmd.Stderr = outs[i], outs[i]
		require.NoError(t, cmd.Start())
		cmds = append(cmds, cmd)
		t.Cleanup(func() {
			if cmd.ProcessState == nil {
				_ = cmd.Process.Kill()
				_ = cmd.Wait()
			}
		})
	}
	for i, cmd := range cmds {
		require.NoError(t, cmd.Wait(), "a child failed: %s", outs[i])
	}
	s, err := OpenFile(path)
	require.NoError(t, err)
	defer s.Close()
	d, _, err := s.Load(context.Background(), "grants", "shared")
	require.NoError(t, err)
	require.Equal(t, procs*each, genOf(t, d))
	require.Nil(t, d.Lease)
	st, err := os.Stat(path + ".lock")
	require.NoError(t, err)
	require.Equal(t, int64(leaseSlotSize), st.Size())
}

// leaseCycles runs n refreshes on key as owner: wait out a live lease,
// claim, commit the next generation (new tokens, lease released). A
// commit that loses means another writer ignored the lease. committed,
// when set, is told each generation once its commit returned.
func leaseCycles(ctx context.Context, s Store, key, owner string, n int, committed func(int)) error {
	for done := 0; done < n; {
		d, ver, err := s.Load(ctx, "grants", key)
		if err != nil {
			return err
		}
		if d == nil {
			d = gen(0, nil)
		}
		if d.LeasedBy(owner, time.Now().UnixMilli()) {
			time.Sleep(time.Millisecond) // polling, as the Manager's waitLease
			continue
		}
		claimed := d.Clone()
		claimed.Lease = &Lease{Owner: owner, Until: time.Now().Add(time.Minute).UnixMilli()}
		ver, won, err := s.CompareAndSave(ctx, "grants", key, ver, claimed)
		if err != nil {
			return err
		}
		if won != nil {
			continue
		}
		var cur testRec
		if err := json.Unmarshal(claimed.Body, &cur); err != nil {
			return err
		}
		next := gen(cur.Generation+1, nil)
		_, won, err = s.CompareAndSave(ctx, "grants", key, ver, next)
		if err != nil {
			return err
		}
		if won != nil {
			return fmt.Errorf("%s's commit of generation %d lost under its lease", owner, cur.Generation+1)
		}
		if committed != nil {
			committed(cur.Generation + 1)
		}
		done++
	}
	return nil
}

// TestFileStoreSurvivesKilledWriter: a writer process SIGKILLed at a
// random point of its refresh cycles (claim, commit) never leaves a store
// that lost a generation it reported committed, nor one that cannot be
// read or claimed: each time another writer takes over from where the
// store is.
func TestFileStoreSurvivesKilledWriter(t *testing.T) {
	if path := os.Getenv("TOKENSTORE_KILL_CHILD_FILE"); path != "" {
		s, err := OpenFile(path)
		require.NoError(t, err)
		out := bufio.NewWriter(os.Stdout)
		err = leaseCycles(context.Background(), s, "shared", "child-"+strconv.Itoa(os.Getpid()), 1<<30, func(g int) {
			fmt.Fprintf(out, "%d\n", g)
			_ = out.Flush()
		})
		require.NoError(t, err)
		return
	}
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "tokens.json")
	for round := 0; round < 8; round++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestFileStoreSurvivesKilledWriter$", "-test.count=1")
		cmd.Env = append(os.Environ(), "TOKENSTORE_KILL_CHILD_FILE="+path)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		stdout, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		killed := false
		t.Cleanup(func() {
			if !killed {
				_ = cmd.Process.Kill()
				_ = cmd.Wait()
			}
		})
		// Let it commit a few generations, then kill it wherever it is.
		lines := bufio.NewScanner(stdout)
		var last int
		for i, stop := 0, 3+rand.IntN(20); i < stop; i++ {
			require.True(t, lines.Scan(), "the writer ended: %s", stderr.String())
			last, err = strconv.Atoi(lines.Text())
			require.NoError(t, err)
		}
		// A jitter (not a synchronization): the kill lands anywhere in a
		// cycle, not always just after a commit was reported.
		time.Sleep(time.Duration(rand.IntN(3000)) * time.Microsecond)
		require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
		_ = cmd.Wait()
		killed = true
		for lines.Scan() { // what it reported before it died
			last, err = strconv.Atoi(lines.Text())
			require.NoError(t, err)
		}

		s, err := OpenFile(path)
		require.NoError(t, err)
		d, ver, err := s.Load(ctx, "grants", "shared")
		require.NoError(t, err)
		require.NotNil(t, d)
		var rec testRec
		require.NoError(t, json.Unmarshal(d.Body, &rec))
		require.GreaterOrEqual(t, rec.Generation, last, "a committed generation was lost")
		require.Equal(t, fmt.Sprintf("rt-%d", rec.Generation), rec.RefreshToken)
		// Its lease (if it died holding one) is taken over, as an
		// expired one would be.
		d.Lease = nil
		_, won, err := s.CompareAndSave(ctx, "grants", "shared", ver, d)
		require.NoError(t, err)
		require.Nil(t, won)
		require.NoError(t, s.Close())
	}
}
