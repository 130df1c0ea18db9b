package wire

import (
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestArgsRoundTrip: what the library writes the helper reads back.
func TestArgsRoundTrip(t *testing.T) {
	a := &Args{Namespaces: true, Grace: 1500 * time.Millisecond, UID: 1000, GID: 100, Landlock: true,
		ReadDeny: []string{"/home/u/.ssh"}, Secrets: []string{"/home/u/.config/lemonmcp/pins.json"},
		Write: []string{"/work", "/tmp/x"}, WriteDeny: []string{"/work/.git"}, NetDeny: true, DenyUnix: true,
		Processes: 64, OpenFiles: 256, Memory: 1 << 30, Proxy: "/tmp/p/proxy.sock", BestEffort: true, Status: true,
		Server: []string{"/usr/bin/node", "node", "server.js", "--", "-x"}}
	got, err := ParseArgs(a.Argv())
	require.NoError(t, err)
	require.Equal(t, a, got)

	_, err = ParseArgs([]string{"-write=relative", "--", "/bin/cat", "cat"})
	require.EqualError(t, err, "paths must be absolute: relative")
	_, err = ParseArgs([]string{"-secret=rel", "--", "/bin/cat", "cat"})
	require.EqualError(t, err, "paths must be absolute: rel")
	_, err = ParseArgs([]string{"--"})
	require.ErrorContains(t, err, "usage:")
}

// TestEndRecord: every end survives the round trip, and a short or
// foreign record is no report.
func TestEndRecord(t *testing.T) {
	for _, ws := range []syscall.WaitStatus{0, 3 << 8, 255 << 8, 9, 15, 6 | 0x80} {
		rec, ok := EndRecord(ws)
		require.True(t, ok)
		got, ok := ParseEndRecord(rec[:])
		require.True(t, ok)
		require.Equal(t, ws, got)
	}
	for _, b := range []string{"", "L", "Lx\x00", "Lx\x00\x00", "Mx\x00\n", "Lq\x01\n", "Ls\x00\n", "Lx\x00\nX"} {
		_, ok := ParseEndRecord([]byte(b))
		require.False(t, ok, "%q", b)
	}
}

// TestSetupRecord: the report and a failure survive the round trip; what
// is not a setup record is an error, never a report.
func TestSetupRecord(t *testing.T) {
	r := &Report{Namespaces: true, Landlock: 7, LandlockRights: []string{"FS_WRITE_FILE"}, Scoped: []string{"SIGNAL"},
		Network: "none", Proc: "private", NoNewPrivs: true, Limits: true, Reaper: "pid-namespace", UnixSockets: "denied",
		Missing: []string{"seccomp: x failed: y"}}
	got, pid, err := ParseSetup(SetupRecord(r, 7))
	require.NoError(t, err)
	require.Equal(t, r, got)
	require.Equal(t, 7, pid)

	f := Failure{Layer: "Landlock", Step: "landlock_restrict_self", Error: "function not implemented"}
	_, _, err = ParseSetup(FailureRecord(f))
	var se *SetupError
	require.ErrorAs(t, err, &se)
	require.Equal(t, f, se.Failure)
	require.EqualError(t, err, "Landlock: landlock_restrict_self failed: function not implemented")

	for _, b := range []string{"", "\n", "S{", "S{}\n", "F{}\n", "Lx\x00\n", "X{}\n"} {
		_, _, err := ParseSetup([]byte(b))
		require.Error(t, err, "%q", b)
	}
}
