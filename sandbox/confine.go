package sandbox

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// setup is the helper's confinement, step by step, and what each step
// achieved; the probe prints the latter (report) for the library.
type setup struct {
	args *helperArgs
	env  []string // the server's environment

	procPrivate bool // a /proc of the new PID namespace is mounted
	pidMax      bool // the namespace's pid_max caps the process count
	userns      bool // the server runs in a user namespace of its own, under its own uid
	capsDropped bool // the capability bounding set is empty
	noNewPrivs  bool // no_new_privs is set
	landlockABI int  // the Landlock ABI applied, 0 for none
	limits      bool // every rlimit asked for is set
	seccomp     bool // the Unix socket filter is installed (seccomp.go)
	failures    []string
	// hidden counts the denyRead paths hidden by mounts; enumerate holds
	// those left to the Landlock enumeration (all of them, before
	// hideDenied or without it).
	hidden    int
	enumerate []string
}

func (s *setup) fail(step string, err error) {
	s.failures = append(s.failures, step+": "+err.Error())
}

// confine applies everything the arguments ask for to this thread (and,
// for mounts and rlimits, this process).
func (s *setup) confine() {
	a := s.args
	if a.namespaces {
		s.mountProc()
		if s.procPrivate {
			s.hideDenied()
		}
	}
	s.setLimits()
	if a.namespaces || a.landlock {
		// Without it Landlock refuses to restrict an unprivileged thread,
		// and a setuid program could regain what the sandbox removed.
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			s.fail("no_new_privs", err)
		} else {
			s.noNewPrivs = true
		}
	}
	if a.namespaces {
		s.dropPrivileges()
	}
	if a.landlock || a.netDeny {
		s.restrict()
	}
}

// mountProc makes the mount namespace private and mounts a /proc of the
// new PID namespace: the server must not read the application's
// /proc/PID/environ through the host's /proc.
func (s *setup) mountProc() {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		s.fail("private mounts", err)
		return
	}
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		s.fail("mount /proc", err)
		return
	}
	s.procPrivate = true
	if s.args.processes > 0 {
		// Since Linux 6.14 pid_max belongs to the PID namespace: it bounds
		// the processes of the namespace whoever runs them, root included
		// (whom RLIMIT_NPROC does not bind). The kernel's floor is 301.
		n := max(s.args.processes+1, 301)
		if err := os.WriteFile("/proc/sys/kernel/pid_max", []byte(strconv.Itoa(n)), 0); err != nil {
			s.fail("pid_max", err)
		} else {
			s.pidMax = true
		}
	}
}

// hideDenied mounts an empty read-only tmpfs over each denyRead directory
// (and /dev/null over each denied file) in the server's mount namespace,
// so Landlock can grant reads of the whole tree: nothing to enumerate,
// every other directory listable, files created later readable. A path
// that could not be hidden stays with the Landlock enumeration (rules.go).
// A path that does not exist yet is left out: there is nothing to hide,
// and keeping it would make its ancestors unlistable.
func (s *setup) hideDenied() {
	var rest []string
	for _, p := range canonical(s.args.readDeny) {
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
	s.enumerate = rest
}

func (s *setup) setLimits() {
	a := s.args
	set := func(name string, res int, v uint64) bool {
		// syscall.Setrlimit, not unix: the Go runtime raises the soft
		// RLIMIT_NOFILE at start and restores the original in children
		// unless the change goes through the syscall package.
		if err := syscall.Setrlimit(res, &syscall.Rlimit{Cur: v, Max: v}); err != nil {
			s.fail(name, err)
			return false
		}
		return true
	}
	ok := true
	if a.processes > 0 {
		ok = set("RLIMIT_NPROC", unix.RLIMIT_NPROC, uint64(a.processes)) && ok
	}
	if a.openFiles > 0 {
		ok = set("RLIMIT_NOFILE", unix.RLIMIT_NOFILE, uint64(a.openFiles)) && ok
	}
	if a.memory > 0 {
		// RLIMIT_DATA, not RLIMIT_AS: Node and the JVM reserve far more
		// address space than they use, and the data limit counts what a
		// process actually maps writable.
		ok = set("RLIMIT_DATA", unix.RLIMIT_DATA, uint64(a.memory)) && ok
	}
	s.limits = ok
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
			s.fail("capability bounding set", err)
			return
		}
	}
	_ = unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err == nil {
		data[0].Inheritable, data[1].Inheritable = 0, 0
		_ = unix.Capset(&hdr, &data[0])
	}
	s.capsDropped = true
}

// serverAttr is how the server is forked.
func (s *setup) serverAttr() *syscall.SysProcAttr {
	// Pdeathsig: the helper is single-threaded where it forks (locked),
	// so the server dies with the helper, whoever kills it.
	sys := &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if s.args.namespaces {
		// A session of its own: no controlling terminal to inject input
		// into (TIOCSTI), and the library's signals go through us.
		sys.Setsid = true
	}
	return sys
}

// landlockABI is the kernel's Landlock ABI version, 0 when unavailable.
func landlockABI() int {
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 {
		return 0
	}
	return int(v)
}

// restrict applies the Landlock rules to this thread.
func (s *setup) restrict() {
	abi := landlockABI()
	if abi == 0 {
		s.fail("landlock", unix.ENOSYS)
		return
	}
	attr := unix.LandlockRulesetAttr{}
	if s.args.landlock {
		attr.Access_fs = handledFS(abi)
	}
	if s.args.netDeny && abi >= 4 {
		// No rule follows: every TCP bind and connect is refused. UDP is
		// not covered by Landlock; only a network namespace stops it.
		attr.Access_net = unix.LANDLOCK_ACCESS_NET_BIND_TCP | unix.LANDLOCK_ACCESS_NET_CONNECT_TCP
	}
	if abi >= 6 {
		// The server may not signal processes outside its domain (the
		// application among them) nor reach abstract Unix sockets bound
		// outside it.
		attr.Scoped = unix.LANDLOCK_SCOPE_SIGNAL | unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
	}
	size := unsafe.Sizeof(attr)
	if abi < 6 {
		size = unsafe.Offsetof(attr.Scoped)
	}
	if abi < 4 {
		size = unsafe.Offsetof(attr.Access_net)
	}
	fd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), size, 0)
	if errno != 0 {
		s.fail("landlock ruleset", errno)
		return
	}
	defer unix.Close(int(fd))
	if s.args.landlock {
		for _, r := range fsRules(abi, s.enumerate, s.args.readDeny, s.args.write, s.args.writeDeny) {
			addRule(int(fd), r) // a path that vanished meanwhile is simply not granted
		}
	}
	if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, fd, 0, 0); errno != 0 {
		s.fail("landlock restrict", errno)
		return
	}
	s.landlockABI = abi
}

func addRule(ruleset int, r fsRule) {
	pfd, err := unix.Open(r.path, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	defer unix.Close(pfd)
	attr := unix.LandlockPathBeneathAttr{Allowed_access: r.access, Parent_fd: int32(pfd)}
	unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(ruleset), unix.LANDLOCK_RULE_PATH_BENEATH,
		uintptr(unsafe.Pointer(&attr)), 0, 0, 0)
}

// report prints what holds, one "key=value" a line, for the library's probe.
func (s *setup) report(w io.Writer) {
	b := func(v bool) string {
		if v {
			return "1"
		}
		return "0"
	}
	fmt.Fprintf(w, "namespaces=%s\nproc=%s\npidmax=%s\ncaps=%s\nnnp=%s\nlandlock=%d\nlimits=%s\nseccomp=%s\n",
		b(s.args.namespaces), b(s.procPrivate), b(s.pidMax), b(s.capsDropped),
		b(s.noNewPrivs), s.landlockABI, b(s.limits), b(s.seccomp))
	for _, f := range s.failures {
		fmt.Fprintf(w, "failed=%s\n", f)
	}
}
