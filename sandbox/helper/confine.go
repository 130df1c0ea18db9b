package helper

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/lemonmcp/lemonmcp/sandbox/wire"
)

// The layers a step belongs to, as a failure names them.
const (
	layerNamespaces = "namespaces"
	layerLandlock   = "Landlock"
	layerSeccomp    = "seccomp"
	layerLimits     = "limits"
	layerPrivileges = "privileges"
	layerProxy      = "the proxy"
	layerHelper     = "the helper"
)

// setup is the helper's confinement, step by step, and what each step
// achieved: the report it sends the library once the server runs.
type setup struct {
	args *wire.Args
	env  []string // the server's environment

	report wire.Report
	// hidden counts the denyRead paths hidden by mounts; enumerate holds
	// those left to the Landlock enumeration (all of them, before
	// hideDenied or without it).
	hidden    int
	enumerate []string
	// secretsLeft are the secrets hideSecrets could not hide (without
	// namespaces: all of them), left to the enumeration.
	secretsLeft []string
	// fail is called when a step fails and the start is not best effort;
	// it does not return (exitFailed), except in tests.
	fail func(wire.Failure)
}

// step records the outcome of one step: nil is done; an error ends the
// start, naming layer and step, unless the policy is best effort, where
// it joins the report's missing list. It reports whether the step held.
func (s *setup) step(layer, step string, err error) bool {
	if err == nil {
		return true
	}
	f := wire.Failure{Layer: layer, Step: step, Error: errText(err)}
	if s.args.BestEffort || s.args.Probe {
		s.report.Missing = append(s.report.Missing, f.String())
		return false
	}
	s.fail(f)
	return false
}

// errText is the system's description of err.
func errText(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno.Error()
	}
	return err.Error()
}

// exitFailed tells the library which step failed, on the status pipe and
// on stderr (bubblewrap's way: the start ends at the first failure), and
// exits without starting the server.
func exitFailed(a *wire.Args) func(wire.Failure) {
	return func(f wire.Failure) {
		if a.Status {
			_, _ = syscall.Write(wire.StatusFD, wire.FailureRecord(f))
		}
		fmt.Fprintln(os.Stderr, wire.HelperName+":", f.String())
		os.Exit(wire.ExitSetupFailed)
	}
}

// newSetup starts the report from what nothing has been done yet.
func newSetup(a *wire.Args) *setup {
	s := &setup{args: a, env: os.Environ(), fail: exitFailed(a), secretsLeft: a.Secrets}
	s.enumerate = append(append([]string(nil), a.ReadDeny...), a.Secrets...)
	s.report = wire.Report{Namespaces: a.Namespaces, Proc: "host", Reaper: "subreaper", Network: "host", UnixSockets: "allowed"}
	if a.Namespaces {
		s.report.Reaper, s.report.Network = "pid-namespace", "none"
	}
	return s
}

// confine applies everything the arguments ask for to this thread (and,
// for mounts and rlimits, this process).
func (s *setup) confine() {
	a := s.args
	if a.Namespaces {
		if s.mountProc() {
			s.hideSecrets()
			s.hideDenied()
		}
	}
	s.setLimits()
	if a.Namespaces || a.Landlock {
		// Without it Landlock refuses to restrict an unprivileged thread,
		// and a setuid program could regain what the sandbox removed.
		s.report.NoNewPrivs = s.step(layerPrivileges, "prctl(PR_SET_NO_NEW_PRIVS)", unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
	}
	if a.Namespaces {
		s.dropPrivileges()
	}
	if a.Landlock || a.NetDeny {
		s.restrict()
	}
}

// mountProc makes the mount namespace private and mounts a /proc of the
// new PID namespace: the server must not read the application's
// /proc/PID/environ through the host's /proc.
func (s *setup) mountProc() bool {
	if !s.step(layerNamespaces, "mount --make-rprivate /", unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, "")) {
		return false
	}
	if !s.step(layerNamespaces, "mount /proc", unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "")) {
		return false
	}
	s.report.Proc = "private"
	if s.args.Processes > 0 {
		// Since Linux 6.14 pid_max belongs to the PID namespace: it bounds
		// the processes of the namespace whoever runs them, root included
		// (whom RLIMIT_NPROC does not bind). The kernel's floor is 301.
		n := max(s.args.Processes+1, 301)
		if !s.step(layerLimits, "the PID namespace's pid_max", os.WriteFile("/proc/sys/kernel/pid_max", []byte(strconv.Itoa(n)), 0)) {
			s.report.Limits = false
		}
	}
	return true
}

// hideDenied mounts an empty tmpfs of mode 000 over each denyRead
// directory (and /dev/null over each denied file) in the server's mount
// namespace, so Landlock can grant reads of the whole tree: nothing to
// enumerate, every other directory listable, files created later
// readable. A path that could not be hidden stays with the Landlock
// enumeration (rules.go), which denies it as surely. A path that does not
// exist yet is left out: there is nothing to hide, and keeping it would
// make its ancestors unlistable.
func (s *setup) hideDenied() {
	var rest []string
	for _, p := range canonical(s.args.ReadDeny) {
		fi, err := os.Stat(p)
		if err != nil {
			continue
		}
		if fi.IsDir() {
			err = unix.Mount("tmpfs", p, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC|unix.MS_RDONLY, "size=0,mode=000")
		} else {
			err = unix.Mount("/dev/null", p, "", unix.MS_BIND, "")
		}
		if err != nil {
			rest = append(rest, p)
		} else {
			s.hidden++
		}
	}
	s.enumerate = append(rest, s.secretsLeft...)
}

// hideSecrets keeps the library's secrets (a token store, a pin file) out
// of the server's mount namespace for good. A mount over the file itself
// would not do: the library writes them by renaming a new file over the
// old, which detaches such a mount, and one written after the start would
// have none. So the secret's directory (which the library makes before it
// names the secret) is replaced by a read-only tmpfs of the same
// mode holding every other entry, each bind-mounted from the real one:
// the server lists and uses them as before, and never sees the secret,
// whatever the library writes there later. An entry created in that
// directory after the start is not visible to the server. A secret that
// cannot be hidden this way is left to the Landlock enumeration
// (secretsLeft), which denies it as surely, at the cost of leaving its
// ancestors unlistable.
func (s *setup) hideSecrets() {
	s.secretsLeft = nil
	hide := map[string]map[string]bool{} // directory: the names to leave out
	var order []string
	for _, p := range canonical(s.args.Secrets) {
		dir, name := filepath.Dir(p), filepath.Base(p)
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			continue // no directory, no secret (the library makes it beforehand)
		}
		if dir == "/" {
			s.secretsLeft = append(s.secretsLeft, p)
			continue
		}
		if hide[dir] == nil {
			hide[dir] = map[string]bool{}
			order = append(order, dir)
		}
		hide[dir][name] = true
	}
	for _, dir := range order {
		if err := shadowDir(dir, hide[dir]); err != nil {
			for name := range hide[dir] {
				s.secretsLeft = append(s.secretsLeft, filepath.Join(dir, name))
			}
		}
	}
}

// shadowDir mounts over dir a read-only tmpfs that holds dir's entries
// but those named in leave, each bind-mounted from the real one.
func shadowDir(dir string, leave map[string]bool) (err error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	// The real entries, held open so they can be bound once the tmpfs
	// hides them.
	type kept struct {
		name   string
		fd     int
		isDir  bool
		target string // a symbolic link's, copied rather than bound
	}
	var keep []kept
	defer func() {
		for _, k := range keep {
			if k.fd >= 0 {
				unix.Close(k.fd)
			}
		}
	}()
	for _, e := range entries {
		if leave[e.Name()] {
			continue
		}
		path := filepath.Join(dir, e.Name())
		if e.Type()&os.ModeSymlink != 0 {
			target, err := os.Readlink(path)
			if err != nil {
				return err
			}
			keep = append(keep, kept{name: e.Name(), fd: -1, target: target})
			continue
		}
		fd, err := unix.Open(path, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return err
		}
		keep = append(keep, kept{name: e.Name(), fd: fd, isDir: e.IsDir()})
	}
	opts := "size=64k,mode=" + strconv.FormatUint(uint64(fi.Mode().Perm()), 8)
	if err := unix.Mount("tmpfs", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, opts); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = unix.Unmount(dir, unix.MNT_DETACH)
		}
	}()
	for _, k := range keep {
		at := filepath.Join(dir, k.name)
		switch {
		case k.fd < 0:
			err = os.Symlink(k.target, at)
		case k.isDir:
			err = os.Mkdir(at, 0o700)
		default:
			err = os.WriteFile(at, nil, 0o600)
		}
		if err != nil {
			return err
		}
		if k.fd >= 0 {
			if err = unix.Mount("/proc/self/fd/"+strconv.Itoa(k.fd), at, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
				return err
			}
		}
	}
	return unix.Mount("", dir, "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV, "")
}

// ThreadRoom is how many more threads the helper's Go runtime may
// start after the process limit is set (blocking system calls, GC).
const ThreadRoom = 8

// ownThreads is the number of this process's threads (1 if unknown).
func ownThreads() int {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil || len(tasks) == 0 {
		return 1
	}
	return len(tasks)
}

func (s *setup) setLimits() {
	a := s.args
	s.report.Limits = true
	set := func(name string, res int, v uint64) {
		// syscall.Setrlimit, not unix: the Go runtime raises the soft
		// RLIMIT_NOFILE at start and restores the original in children
		// unless the change goes through the syscall package.
		if !s.step(layerLimits, "setrlimit("+name+")", syscall.Setrlimit(res, &syscall.Rlimit{Cur: v, Max: v})) {
			s.report.Limits = false
		}
	}
	if a.Processes > 0 {
		// RLIMIT_NPROC counts every task of the uid in the user namespace,
		// this helper's threads too (it stays, the namespace's reaper): they
		// are added, with room for the threads its runtime starts later,
		// or a loaded machine's extra runtime threads leave the server fewer
		// processes than it was given, or none (fork fails with EAGAIN).
		set("RLIMIT_NPROC", unix.RLIMIT_NPROC, uint64(a.Processes+ownThreads()+ThreadRoom))
	}
	if a.OpenFiles > 0 {
		set("RLIMIT_NOFILE", unix.RLIMIT_NOFILE, uint64(a.OpenFiles))
	}
	if a.Memory > 0 {
		// RLIMIT_DATA, not RLIMIT_AS: Node and the JVM reserve far more
		// address space than they use, and the data limit counts what a
		// process actually maps writable.
		set("RLIMIT_DATA", unix.RLIMIT_DATA, uint64(a.Memory))
	}
}

// dropPrivileges empties the capability bounding set (and the inheritable
// and ambient sets) the helper holds as root of the new user namespace, so
// the server, exec'd as uid 0 of that namespace (the user's own uid
// outside), gets no capability: it cannot undo a mount nor raise a limit.
// A nested user namespace giving the server its own uid back (as
// bubblewrap does) would need its maps written through /proc after
// Landlock forbids it.
func (s *setup) dropPrivileges() {
	for c := 0; c <= unix.CAP_LAST_CAP; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && err != unix.EINVAL {
			s.step(layerPrivileges, "prctl(PR_CAPBSET_DROP)", err)
			return
		}
	}
	if !s.step(layerPrivileges, "prctl(PR_CAP_AMBIENT_CLEAR_ALL)", unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)) {
		return
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if !s.step(layerPrivileges, "capget", unix.Capget(&hdr, &data[0])) {
		return
	}
	data[0].Inheritable, data[1].Inheritable = 0, 0
	s.step(layerPrivileges, "capset", unix.Capset(&hdr, &data[0]))
}

// serverAttr is how the server is forked.
func (s *setup) serverAttr() *syscall.SysProcAttr {
	// Pdeathsig: the helper is single-threaded where it forks (locked),
	// so the server dies with the helper, whoever kills it.
	sys := &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if s.args.Namespaces {
		// A session of its own: no controlling terminal to inject input
		// into (TIOCSTI), and the library's signals go through us.
		sys.Setsid = true
	}
	return sys
}

// restrict applies the Landlock rules to this thread, with every right
// the kernel's ABI handles (landlock.go).
func (s *setup) restrict() {
	abi, errata, err := kernelABI()
	if !s.step(layerLandlock, "landlock_create_ruleset(VERSION)", err) {
		return
	}
	rights := rightsFor(abi, errata)
	attr := unix.LandlockRulesetAttr{}
	if s.args.Landlock {
		attr.Access_fs = rights.fs
	}
	if s.args.NetDeny {
		if rights.net == 0 {
			s.step(layerLandlock, "TCP rules", fmt.Errorf("Landlock ABI %d has no network rights (ABI 4 and later)", abi))
		}
		// No rule follows: every TCP bind and connect is refused. UDP is
		// not covered by Landlock; only a network namespace stops it.
		attr.Access_net = rights.net
	}
	// The server may not signal processes outside its domain (the
	// application among them) nor reach abstract Unix sockets bound
	// outside it.
	attr.Scoped = rights.scoped
	if abi >= 6 && rights.scoped&unix.LANDLOCK_SCOPE_SIGNAL == 0 && !s.args.Namespaces {
		s.step(layerLandlock, "signal scoping", errors.New("the kernel lacks the fix to ABI 6 signal scoping (erratum 2)"))
	}
	size := unsafe.Sizeof(attr)
	switch {
	case abi < 4:
		size = unsafe.Offsetof(attr.Access_net)
	case abi < 6:
		size = unsafe.Offsetof(attr.Scoped)
	}
	fd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), size, 0)
	if errno != 0 {
		s.step(layerLandlock, "landlock_create_ruleset", errno)
		return
	}
	defer unix.Close(int(fd))
	if s.args.Landlock {
		for _, r := range fsRules(rights.fs, s.enumerate, append(append([]string(nil), s.args.ReadDeny...), s.args.Secrets...), s.args.Write, s.args.WriteDeny) {
			if err := addRule(int(fd), r); err != nil {
				s.step(layerLandlock, "landlock_add_rule("+r.path+")", err)
				return
			}
		}
	}
	if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, fd, 0, 0); errno != 0 {
		s.step(layerLandlock, "landlock_restrict_self", errno)
		return
	}
	s.report.Landlock = abi
	s.report.LandlockRights = append(names(attr.Access_fs, fsRightNames), names(attr.Access_net, netRightNames)...)
	s.report.Scoped = names(attr.Scoped, scopeNames)
	if attr.Access_net != 0 && !s.args.Namespaces {
		s.report.Network = "tcp-denied"
	}
}

// addRule grants r. A path that vanished since the rules were computed is
// simply not granted.
func addRule(ruleset int, r fsRule) error {
	pfd, err := unix.Open(r.path, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	defer unix.Close(pfd)
	attr := unix.LandlockPathBeneathAttr{Allowed_access: r.access, Parent_fd: int32(pfd)}
	if _, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(ruleset), unix.LANDLOCK_RULE_PATH_BENEATH,
		uintptr(unsafe.Pointer(&attr)), 0, 0, 0); errno != 0 {
		return errno
	}
	return nil
}
