package stdio

import (
	"encoding/binary"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"
)

// Reaping without a thread per child. os.Process.Wait blocks an OS thread
// in waitid for the child's whole life, so a host with 1,000 stdio servers
// would hold 1,000 threads doing nothing. Instead each child's pidfd (a
// file descriptor that becomes readable when the process exits, Linux 5.3
// and later) joins the runtime's network poller, the single epoll set that
// already watches every pipe: a waiting child costs a parked goroutine and
// no thread, and the reap is a waitid(P_PIDFD, WNOHANG) once the pidfd says
// the child has exited. Only that child is ever waited for (never
// waitpid(-1): the host owns other children), and a pidfd cannot name a
// recycled pid. Where pidfds are unavailable (old kernels, seccomp
// filters), the blocking os.Process.Wait is used as before.

const (
	sysPidfdOpen = 434 // the same number on every architecture
	pPIDFD       = 3   // waitid's idtype for a pidfd
)

var pidfdOnce = sync.OnceValue(func() bool {
	// pidfd_open on ourselves proves the kernel (and any seccomp filter)
	// allows pidfds; CLONE_PIDFD, which spawn uses, is older still.
	fd, _, errno := syscall.Syscall(sysPidfdOpen, uintptr(os.Getpid()), 0, 0)
	if errno != 0 {
		return false
	}
	syscall.Close(int(fd))
	return true
})

// holdReap, when a test sets it, runs before each child is waited for: a
// reap as late as on a loaded machine.
var holdReap atomic.Pointer[func()]

// pidfdRefused is set once clone has refused CLONE_PIDFD (spawn.go).
var pidfdRefused atomic.Bool

// pidfdSupported reports whether spawn should ask clone for a pidfd.
func pidfdSupported() bool { return pidfdOnce() && !pidfdRefused.Load() }

// siginfo is the kernel's siginfo_t as waitid fills it for a child:
// signo, errno and code (code before errno on MIPS), then, at the union's
// offset (8-byte aligned on 64-bit), pid, uid and status.
type siginfo [128]byte

func (si *siginfo) field(off uintptr) int32 {
	return int32(binary.NativeEndian.Uint32(si[off:]))
}

// union is the offset of the union: after three ints, aligned as a pointer.
const union = (12 + unsafe.Sizeof(uintptr(0)) - 1) &^ (unsafe.Sizeof(uintptr(0)) - 1)

func (si *siginfo) code() int32 {
	if strings.HasPrefix(runtime.GOARCH, "mips") {
		return si.field(4)
	}
	return si.field(8)
}

func (si *siginfo) pid() int32    { return si.field(union) }
func (si *siginfo) status() int32 { return si.field(union + 8) }

// The si_code values of a child's end.
const (
	cldExited = 1
	cldKilled = 2
	cldDumped = 3
)

// waitStatus turns waitid's report into the wait(2) status word.
func (si *siginfo) waitStatus() (syscall.WaitStatus, bool) {
	switch si.code() {
	case cldExited:
		return syscall.WaitStatus(si.status()&0xff) << 8, true
	case cldKilled:
		return syscall.WaitStatus(si.status() & 0x7f), true
	case cldDumped:
		return syscall.WaitStatus(si.status()&0x7f | 0x80), true
	}
	return 0, false
}

// wait reaps the child. It runs from Start on, so the child never lingers
// as a zombie whatever else happens.
func (t *Transport) wait() {
	defer close(t.exited)
	defer t.serverStatus()
	if hold := holdReap.Load(); hold != nil {
		(*hold)()
	}
	if t.pidfd >= 0 {
		if ws, known, ok := reapPidfd(t.pidfd); ok {
			t.status, t.statusKnown = ws, known
			// The child is gone; os.Process only holds its own pidfd.
			_ = t.proc.Release()
			return
		}
	}
	st, err := t.proc.Wait()
	if err == nil {
		t.status, t.statusKnown = st.Sys().(syscall.WaitStatus)
	}
}

// serverStatus replaces the launched program's status by the server's
// own, when the program told it (Launch.ServerStatus).
func (t *Transport) serverStatus() {
	if t.launch == nil || t.launch.ServerStatus == nil {
		return
	}
	if ws, ok := t.launch.ServerStatus(); ok {
		t.status, t.statusKnown = ws, true
	}
}

// reapPidfd waits, parked on the poller, for the process behind pidfd to
// exit and reaps it. It takes ownership of pidfd. ok is false when the
// pidfd cannot be polled (the caller then waits the blocking way); known is
// false when the child was reaped by someone else (SIGCHLD set to SIG_IGN).
func reapPidfd(pidfd int) (ws syscall.WaitStatus, known, ok bool) {
	if syscall.SetNonblock(pidfd, true) != nil {
		syscall.Close(pidfd)
		return 0, false, false
	}
	f := os.NewFile(uintptr(pidfd), "pidfd") // pollable: non-blocking
	defer f.Close()
	rc, err := f.SyscallConn()
	if err != nil {
		return 0, false, false
	}
	var si siginfo
	var werr syscall.Errno
	err = rc.Read(func(fd uintptr) bool {
		for {
			si = siginfo{}
			_, _, e := syscall.Syscall6(syscall.SYS_WAITID, pPIDFD, fd, uintptr(unsafe.Pointer(&si)),
				syscall.WEXITED|syscall.WNOHANG, 0, 0)
			switch e {
			case syscall.EINTR:
				continue
			case syscall.EAGAIN:
				return false // still running: wait for the pidfd
			case 0:
				return si.pid() != 0 // 0: still running
			}
			werr = e
			return true
		}
	})
	if err != nil {
		// Not pollable after all (the poller refused the pidfd): nothing
		// was reaped, so the blocking wait still works.
		return 0, false, false
	}
	if werr != 0 {
		return 0, false, true // ECHILD: reaped by the kernel or the host
	}
	ws, known = si.waitStatus()
	return ws, known, true
}
