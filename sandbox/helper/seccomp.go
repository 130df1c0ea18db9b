package helper

import (
	"errors"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The seccomp filter: the server may not create an AF_UNIX socket.
// Landlock (ABI 7) scopes abstract Unix sockets but not pathname ones, and
// a socket file is reachable wherever reads are allowed: without the
// filter a confined server could connect to the Docker daemon, a D-Bus bus
// or an SSH agent the user's processes reach, and act outside the sandbox
// through them. socketpair(2) stays allowed (it connects to nothing
// outside; Node and Python use it for their children's pipes), and so does
// the helper's own bridge to the proxy, which runs on other threads: the
// filter is installed on the helper's locked thread just before it forks
// the server, which inherits it, as Landlock. io_uring_setup(2) is refused
// too, since an io_uring can create sockets without socket(2). Syscalls of
// another ABI (32-bit x86, x32) are refused as a whole: theirs reach
// socket through other numbers.

// What the filter does not block, as sandbox-runtime's seccomp
// documentation lists it for its own (docs/sandbox.md, "Stated limits"):
//   - descriptors the server inherits: a socket or file open in the helper
//     without close-on-exec when it execs the server is the server's (the
//     helper passes only stdin, stdout and stderr; what the application
//     leaks into the helper without close-on-exec would pass through);
//   - descriptors passed over SCM_RIGHTS: a Unix socket the server already
//     holds (a socketpair, an inherited one) can receive any descriptor a
//     process outside sends it, a connected socket included, and the filter
//     never sees socket(2) for it;
//   - with allowAllUnixSockets the filter is not installed at all: the
//     server may connect to every socket file it can read (the Docker
//     daemon, a D-Bus bus, an SSH agent), and Landlock does not stop it;
//   - sockets of other families (AF_NETLINK, AF_PACKET as far as the
//     namespace's capabilities allow): the network namespace, not this
//     filter, keeps them from the host's interfaces.

// errNoSeccompArch: no filter is built for this architecture.
var errNoSeccompArch = errors.New("no seccomp filter for this architecture")

// seccomp_data offsets (linux/seccomp.h): nr, arch, then the arguments
// (the low 32 bits of the first, little-endian).
const (
	seccompNr   = 0
	seccompArch = 4
	seccompArg0 = 16
)

// bpfInsn is one instruction of the filter, its jumps named by label ("" is
// the next instruction).
type bpfInsn struct {
	code   uint16
	k      uint32
	jt, jf string
	label  string
}

// unixSocketFilter is the program for this architecture.
func unixSocketFilter() ([]unix.SockFilter, error) {
	if nativeAudit == 0 {
		return nil, errNoSeccompArch
	}
	const (
		ld  = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		jge = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
		ret = unix.BPF_RET | unix.BPF_K
	)
	prog := []bpfInsn{
		{code: ld, k: seccompArch},
		{code: jeq, k: nativeAudit, jf: "deny"},
		{code: ld, k: seccompNr},
	}
	if foreignSyscallBit != 0 {
		prog = append(prog, bpfInsn{code: jge, k: foreignSyscallBit, jt: "deny"})
	}
	prog = append(prog,
		bpfInsn{code: jeq, k: unix.SYS_SOCKET, jt: "socket"},
		bpfInsn{code: jeq, k: unix.SYS_IO_URING_SETUP, jt: "deny", jf: "allow"},
		bpfInsn{label: "socket", code: ld, k: seccompArg0},
		bpfInsn{code: jeq, k: unix.AF_UNIX, jt: "deny", jf: "allow"},
		bpfInsn{label: "allow", code: ret, k: unix.SECCOMP_RET_ALLOW},
		bpfInsn{label: "deny", code: ret, k: unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)&unix.SECCOMP_RET_DATA},
	)
	at := map[string]int{}
	for i, in := range prog {
		if in.label != "" {
			at[in.label] = i
		}
	}
	jump := func(from int, label string) uint8 {
		if label == "" {
			return 0
		}
		return uint8(at[label] - from - 1)
	}
	out := make([]unix.SockFilter, len(prog))
	for i, in := range prog {
		out[i] = unix.SockFilter{Code: in.code, K: in.k, Jt: jump(i, in.jt), Jf: jump(i, in.jf)}
	}
	return out, nil
}

// denyUnixSockets installs the filter on the calling thread (which must
// have no_new_privs); what it forks next inherits it.
func denyUnixSockets() error {
	filter, err := unixSocketFilter()
	if err != nil {
		return err
	}
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	return unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&prog)), 0, 0)
}
