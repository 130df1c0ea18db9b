package helper

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/lemonmcp/lemonmcp/sandbox/wire"
)

// TestRightsFor: one entry per Landlock ABI, and signal scoping only with
// the ABI 6 erratum fixed.
func TestRightsFor(t *testing.T) {
	const fixed = erratumSignalScope
	tests := []struct {
		abi    int
		errata uint64
		want   abiRights
	}{
		{abi: 0},
		{abi: -1},
		{abi: 1, want: abiRights{fs: fsV1}},
		{abi: 2, want: abiRights{fs: fsV1 | unix.LANDLOCK_ACCESS_FS_REFER}},
		{abi: 3, want: abiRights{fs: fsV2 | unix.LANDLOCK_ACCESS_FS_TRUNCATE}},
		{abi: 4, want: abiRights{fs: fsV3, net: unix.LANDLOCK_ACCESS_NET_BIND_TCP | unix.LANDLOCK_ACCESS_NET_CONNECT_TCP}},
		{abi: 5, want: abiRights{fs: fsV3 | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV, net: netV4}},
		{abi: 6, errata: fixed, want: abiRights{fs: fsV5, net: netV4, scoped: unix.LANDLOCK_SCOPE_SIGNAL | unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET}},
		// The erratum unfixed: abstract sockets scoped, signals not.
		{abi: 6, errata: 0, want: abiRights{fs: fsV5, net: netV4, scoped: unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET}},
		{abi: 7, errata: 0b111, want: abiRights{fs: fsV5, net: netV4, scoped: scopes}},
		// A kernel newer than the table: the newest entry's rights.
		{abi: 12, errata: fixed, want: abiRights{fs: fsV5, net: netV4, scoped: scopes}},
	}
	for _, tc := range tests {
		require.Equal(t, tc.want, rightsFor(tc.abi, tc.errata), "ABI %d errata %b", tc.abi, tc.errata)
	}
	require.Len(t, names(fsV5, fsRightNames), 16)
	require.Equal(t, []string{"ABSTRACT_UNIX_SOCKET", "SIGNAL"}, names(scopes, scopeNames))
}

// TestFsRules: reads everywhere but the denied path, which no rule covers
// (its ancestors are enumerated, not granted whole), writes beneath
// allowWrite but not beneath denyWrite, symbolic links never granted by
// their own name, the devices writable.
func TestFsRules(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"secret", "open/sub", "work/.git", "work/src"} {
		require.NoError(t, os.MkdirAll(filepath.Join(root, d), 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(root, "file"), nil, 0o644))
	require.NoError(t, os.Symlink(filepath.Join(root, "secret"), filepath.Join(root, "link")))
	secret, work := filepath.Join(root, "secret"), filepath.Join(root, "work")
	rules := fsRules(fsV5, []string{secret}, []string{secret}, []string{work}, []string{filepath.Join(work, ".git")})
	at := map[string]uint64{}
	for _, r := range rules {
		at[r.path] |= r.access
	}
	for p := range at {
		require.False(t, p == secret || filepath.Dir(p) == secret, "a rule covers the denied %s", p)
	}
	for _, ancestor := range []string{"/", filepath.Dir(root), root} {
		require.NotContains(t, at, ancestor, "an ancestor of the denied path is granted whole")
	}
	require.Equal(t, uint64(fsRead), at[filepath.Join(root, "open")], "a sibling tree is one rule")
	require.Equal(t, uint64(fsRead&fileRights), at[filepath.Join(root, "file")], "a file gets file rights only")
	require.NotContains(t, at, filepath.Join(root, "link"))
	require.Equal(t, uint64(fsRead), at[work], "allowWrite holding denyWrite is enumerated, not granted whole")
	require.Equal(t, uint64(fsV5&^fsRead), at[filepath.Join(work, "src")])
	require.NotContains(t, at, filepath.Join(work, ".git"), "denyWrite: no write rule (reads come with work)")
	require.Equal(t, uint64(fsV5&fileRights), at["/dev/null"])
}

// runBPF runs a classic BPF program over a seccomp_data of nr, arch and
// the first argument: the loads, jumps and returns the filter uses.
func runBPF(t *testing.T, prog []unix.SockFilter, arch, nr, arg0 uint32) uint32 {
	t.Helper()
	var acc uint32
	for pc := 0; pc < len(prog); pc++ {
		in := prog[pc]
		switch in.Code {
		case unix.BPF_LD | unix.BPF_W | unix.BPF_ABS:
			acc = map[uint32]uint32{seccompNr: nr, seccompArch: arch, seccompArg0: arg0}[in.K]
		case unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K:
			pc += int(map[bool]uint8{true: in.Jt, false: in.Jf}[acc == in.K])
		case unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K:
			pc += int(map[bool]uint8{true: in.Jt, false: in.Jf}[acc >= in.K])
		case unix.BPF_RET | unix.BPF_K:
			return in.K
		default:
			t.Fatalf("unexpected instruction %#v", in)
		}
	}
	t.Fatal("the program ran off its end")
	return 0
}

// TestUnixSocketFilter: the program, run instruction by instruction,
// refuses socket(AF_UNIX) and io_uring_setup with EPERM, and every call
// of another architecture or ABI; it allows the rest.
func TestUnixSocketFilter(t *testing.T) {
	prog, err := unixSocketFilter()
	if nativeAudit == 0 {
		require.ErrorIs(t, err, errNoSeccompArch)
		return
	}
	require.NoError(t, err)
	deny := uint32(unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM))
	allow := uint32(unix.SECCOMP_RET_ALLOW)
	tests := []struct {
		name           string
		arch, nr, arg0 uint32
		want           uint32
	}{
		{"socket(AF_UNIX)", nativeAudit, unix.SYS_SOCKET, unix.AF_UNIX, deny},
		{"socket(AF_INET)", nativeAudit, unix.SYS_SOCKET, unix.AF_INET, allow},
		{"socket(AF_INET6)", nativeAudit, unix.SYS_SOCKET, unix.AF_INET6, allow},
		{"socketpair(AF_UNIX)", nativeAudit, unix.SYS_SOCKETPAIR, unix.AF_UNIX, allow},
		{"io_uring_setup", nativeAudit, unix.SYS_IO_URING_SETUP, 8, deny},
		{"read", nativeAudit, unix.SYS_READ, unix.AF_UNIX, allow},
		{"another architecture", unix.AUDIT_ARCH_I386, 102, unix.AF_UNIX, deny},
		{"another architecture, harmless", unix.AUDIT_ARCH_I386, 3, 0, deny},
	}
	if foreignSyscallBit != 0 {
		tests = append(tests, struct {
			name           string
			arch, nr, arg0 uint32
			want           uint32
		}{"the x32 ABI", nativeAudit, foreignSyscallBit | unix.SYS_SOCKET, unix.AF_UNIX, deny})
	}
	for _, tc := range tests {
		require.Equal(t, tc.want, runBPF(t, prog, tc.arch, tc.nr, tc.arg0), tc.name)
	}
}

// TestStepFailsClosed: a failed step ends the start, naming its layer and
// why; with BestEffort it joins the report's missing list.
func TestStepFailsClosed(t *testing.T) {
	var failed []wire.Failure
	s := &setup{args: &wire.Args{}, fail: func(f wire.Failure) { failed = append(failed, f) }}
	require.True(t, s.step(layerLandlock, "landlock_restrict_self", nil))
	require.False(t, s.step(layerLandlock, "landlock_restrict_self", unix.ENOSYS))
	require.Equal(t, []wire.Failure{{Layer: "Landlock", Step: "landlock_restrict_self", Error: "function not implemented"}}, failed)
	require.Empty(t, s.report.Missing)

	s = &setup{args: &wire.Args{BestEffort: true}, fail: func(wire.Failure) { t.Fatal("best effort failed the start") }}
	require.False(t, s.step(layerSeccomp, "the Unix socket filter", errors.New("no seccomp filter for this architecture")))
	require.Equal(t, []string{"seccomp: the Unix socket filter failed: no seccomp filter for this architecture"}, s.report.Missing)
}
