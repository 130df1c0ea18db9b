package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/sandbox/helper"
	"github.com/lemonmcp/lemonmcp/transport"
	"github.com/lemonmcp/lemonmcp/transport/stdio"
)

// runConfined runs script under /bin/sh as a server confined by p and
// returns the JSON objects it printed, merged into one map.
func runConfined(t *testing.T, p Policy, script string) map[string]any {
	t.Helper()
	tr, err := stdio.New(stdio.Config{
		Command:    "/bin/sh",
		Args:       []string{"-c", script},
		CloseGrace: 200 * time.Millisecond,
		Launcher:   Confine(p, 200*time.Millisecond),
	})
	require.NoError(t, err)
	rec := newRecorder()
	require.NoError(t, tr.Start(context.Background(), rec))
	ce := <-rec.closed
	require.NoError(t, tr.Close(context.Background()))
	out := map[string]any{}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, l := range rec.lines {
		require.NoError(t, json.Unmarshal([]byte(l), &out), l)
	}
	require.NotEmpty(t, out, "the script printed nothing; closed: %s; log: %v", ce.Message, rec.logs)
	return out
}

// attempt is a shell fragment printing {"name":"ok"} or {"name":"denied"}.
func attempt(name, cmd string) string {
	return fmt.Sprintf(`if ( %s ) 2>/dev/null; then echo '{"%s":"ok"}'; else echo '{"%s":"denied"}'; fi
`, cmd, name, name)
}

// fsEscapes builds a tree and the script that tries every file system
// escape in it; want is what the sandbox must answer.
func fsEscapes(t *testing.T) (p Policy, script string, want map[string]any, outside, secret string) {
	root := t.TempDir()
	allowed := filepath.Join(root, "allowed")
	outside = filepath.Join(root, "outside")
	secret = filepath.Join(root, "secret")
	for _, d := range []string{allowed, outside, secret} {
		require.NoError(t, os.Mkdir(d, 0o777))
	}
	require.NoError(t, os.Chmod(root, 0o777))
	require.NoError(t, os.WriteFile(filepath.Join(secret, "key"), []byte("k"), 0o666))
	require.NoError(t, os.WriteFile(filepath.Join(outside, "readable"), []byte("r"), 0o666))
	require.NoError(t, os.WriteFile(filepath.Join(outside, "victim"), []byte("v"), 0o666))
	require.NoError(t, os.Symlink(outside, filepath.Join(allowed, "to-outside")))
	require.NoError(t, os.Symlink(secret, filepath.Join(allowed, "to-secret")))
	p = Policy{AllowWrite: []string{allowed}, DenyRead: []string{secret}}

	script = attempt("write_allowed", "echo x > "+allowed+"/new") +
		attempt("write_outside", "echo x > "+outside+"/new") +
		attempt("truncate_outside", ": > "+outside+"/victim") +
		attempt("write_symlink", "echo x > "+allowed+"/to-outside/new") +
		attempt("new_symlink", "ln -s "+outside+" "+allowed+"/mine && echo x > "+allowed+"/mine/new2") +
		attempt("rename_out", "echo x > "+allowed+"/f && mv "+allowed+"/f "+outside+"/f") +
		attempt("rename_in", "mv "+outside+"/victim "+allowed+"/stolen") +
		attempt("read_outside", "cat "+outside+"/readable >/dev/null") +
		attempt("read_secret", "cat "+secret+"/key >/dev/null") +
		attempt("read_secret_symlink", "cat "+allowed+"/to-secret/key >/dev/null") +
		attempt("write_tmp", `echo x > "$TMPDIR/t"`) +
		attempt("write_home_cache", `echo x > "$NPM_CONFIG_CACHE/c"`) +
		attempt("dev_null", "echo x > /dev/null")
	want = map[string]any{
		"write_allowed": "ok", "write_outside": "denied", "truncate_outside": "denied",
		"write_symlink": "denied", "new_symlink": "denied", "rename_out": "denied",
		"rename_in": "denied", "read_outside": "ok", "read_secret": "denied",
		"read_secret_symlink": "denied", "write_tmp": "ok", "write_home_cache": "ok",
		"dev_null": "ok",
	}
	return p, script, want, outside, secret
}

func TestConfinedFileSystem(t *testing.T) {
	p, script, want, outside, secret := fsEscapes(t)
	// Twice: a restarted server is confined again.
	for run := 0; run < 2; run++ {
		require.Equal(t, want, runConfined(t, p, script), "run %d", run)
	}

	// The application's own process is not confined.
	require.NoError(t, os.WriteFile(filepath.Join(outside, "app"), []byte("a"), 0o666))
	_, err := os.ReadFile(filepath.Join(secret, "key"))
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(outside, "new"))
	require.True(t, os.IsNotExist(err), "a confined write got through")
}

func TestConfinedProcesses(t *testing.T) {
	// A fork bomb, bounded by the loop so that it stays harmless without
	// the sandbox; then the processes the server sees are counted.
	const attempts = 2000
	// Only builtins after the bomb: the limit is reached, so the server
	// itself could not fork any more.
	script := fmt.Sprintf(`sh -c 'i=0; while [ $i -lt %d ]; do sleep 60 & i=$((i+1)); echo $i > "$TMPDIR/n"; done' >/dev/null 2>&1
read n < "$TMPDIR/n"; echo "{\"procs\": $n}"
`, attempts)
	got := runConfined(t, Policy{Processes: 50}, script)
	// The helper's own threads are added to the limit, with room for
	// the ones its runtime may start later: the server may use that room.
	limit := 50 + helper.ThreadRoom
	if os.Getuid() == 0 {
		limit = 301 // root is bound by the namespace's pid_max, whose floor is 301
	}
	require.LessOrEqual(t, got["procs"], float64(limit+1), "the fork bomb went past the limit")
}

// TestConfinedNoNetwork: no TCP or UDP to the host's loopback, no DNS.
func TestConfinedNoNetwork(t *testing.T) {
	py, err := exec.LookPath("python3")
	require.NoError(t, err)
	targets := map[string]net.IP{"loopback": net.IPv4(127, 0, 0, 1)}
	if ip := hostAddress(); ip != nil {
		targets["host address"] = ip // "outside": the host's own network
	} else {
		t.Log("no non-loopback address on this host: only the loopback is tried")
	}
	for name, ip := range targets {
		t.Run(name, func(t *testing.T) {
			ln, err := netListenOn(t, ip)
			require.NoError(t, err)
			// The control: unconfined, the same script reaches both.
			script := py + ` -c '
import json, socket
out = {}
try:
    socket.create_connection(("` + ln.host + `", ` + ln.tcpPort + `), timeout=5); out["tcp"] = "ok"
except OSError: out["tcp"] = "denied"
try:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b"x", ("` + ln.host + `", ` + ln.udpPort + `)); out["udp"] = "sent"
except OSError: out["udp"] = "denied"
try:
    socket.getaddrinfo("example.com", 443); out["dns"] = "ok"
except OSError: out["dns"] = "denied"
print(json.dumps(out))
'`
			control, err := exec.Command("/bin/sh", "-c", script).Output()
			require.NoError(t, err)
			require.Contains(t, string(control), `"tcp": "ok"`, "the control did not reach %s", ln.host)
			require.True(t, ln.udpReceived(), "the control's datagram did not reach %s", ln.host)

			got := runConfined(t, Policy{}, script)
			require.Equal(t, "denied", got["tcp"])
			require.Equal(t, "denied", got["dns"])
			require.False(t, ln.udpReceived(), "a UDP datagram reached %s", ln.host)
		})
	}
}

// TestConfinedNoUnixSockets: a socket file the user's processes reach
// (a daemon's, a bus, an agent) is out of the server's reach: it cannot
// create an AF_UNIX socket, nor an io_uring to create one with, while
// socketpair still works. The control reaches the socket unconfined, and
// allowAllUnixSockets gives it back.
func TestConfinedNoUnixSockets(t *testing.T) {
	py, err := exec.LookPath("python3")
	require.NoError(t, err)
	sock := unixListener(t, t.TempDir())
	script := py + ` -c '
import ctypes, json, os, socket
out = {}
try:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); s.connect("` + sock + `"); out["connect"] = "ok"
except OSError: out["connect"] = "denied"
try:
    socket.socketpair(); out["socketpair"] = "ok"
except OSError: out["socketpair"] = "denied"
libc = ctypes.CDLL(None, use_errno=True)
params = ctypes.create_string_buffer(120)
out["io_uring"] = "ok" if libc.syscall(425, 1, params) >= 0 else os.strerror(ctypes.get_errno())
print(json.dumps(out))
'`
	control, err := exec.Command("/bin/sh", "-c", script).Output()
	require.NoError(t, err)
	require.JSONEq(t, `{"connect":"ok","socketpair":"ok","io_uring":"ok"}`, string(control), "the control")

	got := runConfined(t, Policy{}, script)
	require.Equal(t, map[string]any{"connect": "denied", "socketpair": "ok", "io_uring": "Operation not permitted"}, got)

	got = runConfined(t, Policy{AllowAllUnixSockets: true}, script)
	require.Equal(t, "ok", got["connect"], "allowAllUnixSockets")
}

// TestAsUnprivilegedUser runs the confinement tests again as nobody: user
// namespaces and Landlock without root, and limits that bind.
func TestAsUnprivilegedUser(t *testing.T) {
	if os.Getuid() != 0 {
		t.Log("already unprivileged: the other tests are the unprivileged run")
		return
	}
	setpriv, err := exec.LookPath("setpriv")
	require.NoError(t, err)
	dir, err := os.MkdirTemp("", "sandbox-nobody-")
	require.NoError(t, err)
	defer os.RemoveAll(dir)
	require.NoError(t, os.Chmod(dir, 0o755))
	bin := filepath.Join(dir, "sandbox.test")
	helper := filepath.Join(dir, HelperName)
	for src, dst := range map[string]string{os.Args[0]: bin, os.Getenv(HelperEnv): helper} {
		b, err := os.ReadFile(src)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(dst, b, 0o755))
	}
	cmd := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", bin,
		"-test.run", "^(TestConfined|TestNoDaemon|TestReport|TestRequired|TestServerEnd|TestHelperKilled|TestSecrets)", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), HelperEnv+"="+helper, "TMPDIR=/tmp", "HOME=/tmp", "XDG_CACHE_HOME="+filepath.Join(dir, "cache"))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "cache"), 0o700))
	require.NoError(t, os.Chown(filepath.Join(dir, "cache"), 65534, 65534))
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "--- PASS: TestConfinedFileSystem")
	require.Contains(t, string(out), "--- PASS: TestServerEndReportedThroughTheHelper")
	require.Contains(t, string(out), "--- PASS: TestConfinedNoUnixSockets")
	require.Contains(t, string(out), "--- PASS: TestSecretsNeverReadable")
	require.NotContains(t, string(out), "--- FAIL")
}

// TestConfinedDaemonEndsWithItsServer: a daemon started inside the
// sandbox (double fork, setsid) is gone once the server is closed. Its pid
// is one of the sandbox's PID namespace, so it is found from outside by a
// command line of its own.
func TestConfinedDaemonEndsWithItsServer(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.Chmod(dir, 0o777))
	arg := fmt.Sprintf("300.%09d", time.Now().UnixNano()%1e9)
	tr, err := stdio.New(stdio.Config{
		Command: "/bin/sh",
		Args: []string{"-c", `( setsid sh -c 'sleep ` + arg + ` & wait' & ) </dev/null >/dev/null 2>&1
exec cat`},
		CloseGrace: 200 * time.Millisecond,
		Launcher:   Confine(Policy{AllowWrite: []string{dir}}, 200*time.Millisecond),
	})
	require.NoError(t, err)
	rec := newRecorder()
	require.NoError(t, tr.Start(context.Background(), rec))
	var daemon int
	require.Eventually(t, func() bool { // the fork may still be exec'ing sleep
		daemon = findProcess("sleep\x00" + arg + "\x00")
		return daemon != 0
	}, 30*time.Second, 5*time.Millisecond, "the daemon is not visible from outside")
	require.NoError(t, tr.Close(context.Background()))
	<-rec.closed
	require.True(t, gone(daemon, 30*time.Second), "the confined daemon outlived its server")
}

// findProcess returns the pid of a process whose command line is cmdline.
func findProcess(cmdline string) int {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		var pid int
		if _, err := fmt.Sscanf(e.Name(), "%d", &pid); err != nil {
			continue
		}
		if b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline")); err == nil && string(b) == cmdline {
			return pid
		}
	}
	return 0
}

// TestReport: on this machine (Linux 6.18, user namespaces, Landlock 7)
// every layer holds, as root and as nobody, and the report a server gets
// is what the helper set up for that start.
func TestReport(t *testing.T) {
	f := Features()
	require.NotNil(t, f)
	require.Empty(t, f.Missing)
	require.True(t, f.Namespaces)
	require.GreaterOrEqual(t, f.Landlock, 6)

	rep := startReport(t, Policy{Processes: 10})
	require.Equal(t, "pid-namespace", rep.Reaper)
	require.True(t, rep.Namespaces)
	require.Equal(t, f.Landlock, rep.Landlock)
	require.Equal(t, "none", rep.Network)
	require.Equal(t, "private", rep.Proc)
	require.True(t, rep.NoNewPrivs)
	require.True(t, rep.Limits)
	require.Equal(t, "denied", rep.UnixSockets)
	require.Contains(t, rep.LandlockRights, "FS_WRITE_FILE")
	require.Contains(t, rep.LandlockRights, "FS_REFER")
	require.Contains(t, rep.Scoped, "ABSTRACT_UNIX_SOCKET")
	require.Empty(t, rep.Missing)
	require.Equal(t, "allowed", startReport(t, Policy{AllowAllUnixSockets: true}).UnixSockets)
	require.Equal(t, "proxy", startReport(t, Policy{AllowedDomains: []string{"example.com"}}).Network)
}

// startReport starts /bin/cat under p and returns its start's report.
func startReport(t *testing.T, p Policy) *Report {
	t.Helper()
	tr, err := stdio.New(stdio.Config{Command: "/bin/cat", CloseGrace: 200 * time.Millisecond, Launcher: Confine(p, 200*time.Millisecond)})
	require.NoError(t, err)
	rec := newRecorder()
	require.NoError(t, tr.Start(context.Background(), rec))
	defer func() { require.NoError(t, tr.Close(context.Background())) }()
	rep, ok := tr.SandboxReport().(*Report)
	require.True(t, ok, "no report: %#v", tr.SandboxReport())
	return rep
}

// TestRequiredFailsNamingWhatIsMissing: a sandbox that cannot be had in
// full does not start the server at all, by default; "required": false
// (BestEffort) starts it and the report names what is missing.
func TestRequiredFailsNamingWhatIsMissing(t *testing.T) {
	// A machine without user namespaces (Ubuntu's AppArmor restriction,
	// a container): the helper runs, Landlock holds.
	real := probed
	pr := real()
	pr.namespaces, pr.nsErr = false, "operation not permitted"
	probed = func() probe { return pr }
	defer func() { probed = real }()
	tr, err := stdio.New(stdio.Config{Command: "/bin/cat", Launcher: Confine(Policy{AllowedDomains: []string{"example.com"}}, time.Second)})
	require.NoError(t, err)
	err = tr.Start(context.Background(), newRecorder())
	require.ErrorContains(t, err, "sandbox: cannot be set up in full")
	require.ErrorContains(t, err, "namespaces: clone(CLONE_NEWUSER|CLONE_NEWPID|CLONE_NEWNET|...) failed: operation not permitted")
	var te *transport.Error
	require.ErrorAs(t, err, &te)
	require.Equal(t, transport.CauseSandboxUnavailable, te.Cause)
	require.True(t, te.Permanent)

	rep := startReport(t, Policy{BestEffort: true, AllowedDomains: []string{"example.com"}})
	require.Equal(t, "subreaper", rep.Reaper)
	require.Equal(t, "tcp-denied", rep.Network)
	require.Equal(t, []string{"namespaces: operation not permitted", "the proxy: allowedDomains needs a network namespace"}, rep.Missing)
}

// TestConfinedWithoutNamespaces: where user namespaces are refused, the
// helper still confines files with Landlock alone (denyRead by
// enumeration), denies TCP, and reaps as a subreaper.
func TestConfinedWithoutNamespaces(t *testing.T) {
	real := probed
	pr := real()
	pr.namespaces = false
	probed = func() probe { return pr }
	defer func() { probed = real }()

	p, script, want, _, _ := fsEscapes(t)
	p.BestEffort = true
	require.Equal(t, want, runConfined(t, p, script))

	ln, err := netListen(t)
	require.NoError(t, err)
	py, err := exec.LookPath("python3")
	require.NoError(t, err)
	got := runConfined(t, Policy{BestEffort: true}, py+` -c '
import json, socket
try:
    socket.create_connection(("127.0.0.1", `+ln.tcpPort+`), timeout=5); print(json.dumps({"tcp": "ok"}))
except OSError: print(json.dumps({"tcp": "denied"}))
'`)
	require.Equal(t, "denied", got["tcp"])
}

// TestSecretsNeverReadable: the library's secrets (DenySecret: a pin file,
// a token store), listed in no policy, stay unreadable to a confined
// server: an existing one, one the library replaces by a rename while the
// server runs (as it writes them), and one written for the first time
// after the server started; the other files beside them stay readable and their
// directory listable. The control, without DenySecret, reads them all.
func TestSecretsNeverReadable(t *testing.T) {
	for _, deny := range []bool{true, false} {
		t.Run(map[bool]string{true: "denied", false: "control"}[deny], func(t *testing.T) {
			root := t.TempDir()
			require.NoError(t, os.Chmod(root, 0o777))
			lib, work := filepath.Join(root, "lib"), filepath.Join(root, "work")
			require.NoError(t, os.Mkdir(lib, 0o777))
			require.NoError(t, os.Mkdir(work, 0o777))
			pins, tokens, later := filepath.Join(lib, "pins.json"), filepath.Join(lib, "tokens.json"), filepath.Join(lib, "later.json")
			require.NoError(t, os.WriteFile(filepath.Join(lib, "other"), []byte("o"), 0o644))
			require.NoError(t, os.WriteFile(pins, []byte("p"), 0o600))
			require.NoError(t, os.WriteFile(tokens, []byte("t"), 0o600))
			if deny {
				DenySecret(pins, tokens, later)
				defer func() { secrets.mu.Lock(); secrets.paths = nil; secrets.mu.Unlock() }()
			}
			gate := filepath.Join(work, "go")
			script := attempt("pins", "cat "+pins+" >/dev/null") + attempt("tokens", "cat "+tokens+" >/dev/null") +
				attempt("other", "cat "+filepath.Join(lib, "other")+" >/dev/null") + attempt("list", "ls "+lib+" | grep -q other") +
				attempt("list_root", "ls / >/dev/null") + attempt("write", "echo x > "+work+"/w") +
				`echo '{"waiting":"yes"}'; while [ ! -e ` + gate + ` ]; do sleep 0.01; done
` + attempt("replaced", "cat "+pins+" >/dev/null") + attempt("later", "cat "+later+" >/dev/null")
			tr, err := stdio.New(stdio.Config{Command: "/bin/sh", Args: []string{"-c", script}, CloseGrace: 200 * time.Millisecond,
				Launcher: Confine(Policy{AllowWrite: []string{work}}, 200*time.Millisecond)})
			require.NoError(t, err)
			rec := newRecorder()
			require.NoError(t, tr.Start(context.Background(), rec))
			require.Eventually(t, func() bool {
				rec.mu.Lock()
				defer rec.mu.Unlock()
				return len(rec.lines) > 0 && rec.lines[len(rec.lines)-1] == `{"waiting":"yes"}`
			}, 30*time.Second, 5*time.Millisecond)
			// The library writes its files as it does: a new file renamed
			// over the old; and a store written for the first time.
			require.NoError(t, os.WriteFile(pins+".tmp", []byte("p2"), 0o600))
			require.NoError(t, os.Rename(pins+".tmp", pins))
			require.NoError(t, os.WriteFile(later, []byte("t"), 0o600))
			require.NoError(t, os.WriteFile(gate, nil, 0o644))
			<-rec.closed
			require.NoError(t, tr.Close(context.Background()))
			got := map[string]any{}
			rec.mu.Lock()
			for _, l := range rec.lines {
				require.NoError(t, json.Unmarshal([]byte(l), &got), l)
			}
			rec.mu.Unlock()
			secret := map[bool]string{true: "denied", false: "ok"}[deny]
			require.Equal(t, map[string]any{"pins": secret, "tokens": secret, "replaced": secret, "later": secret,
				"other": "ok", "list": "ok", "list_root": "ok", "write": "ok", "waiting": "yes"}, got)
		})
	}
}
