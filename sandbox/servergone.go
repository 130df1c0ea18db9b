package sandbox

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// serverGone returns a channel closed when the server, the helper's one
// child, has exited: the transport tells by it a stdout that closed with
// the server from a server that closed its stdout and runs on, while the
// helper is still ending what the server left. The server is found in
// /proc/HELPER/task/*/children (host pids, whatever the helper's PID
// namespace) once the helper has said it runs, and watched through a
// pidfd on the runtime's poller: the child whose innermost pid (NSpid in
// its status) is nsPID, the server's pid as the helper saw it. nil when
// it cannot be found.
func serverGone(helper, nsPID int) <-chan struct{} {
	tasks, _ := filepath.Glob("/proc/" + strconv.Itoa(helper) + "/task/*/children")
	var pids []int
	for _, f := range tasks {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, field := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(field); err == nil && innermostPID(pid) == nsPID {
				pids = append(pids, pid)
			}
		}
	}
	switch {
	case len(tasks) == 0 || nsPID == 0:
		return nil // no /proc/PID/task/TID/children here: unknown
	case len(pids) == 0:
		// The helper writes its setup record once the server is forked:
		// no such child now means the server has exited and been reaped.
		gone := make(chan struct{})
		close(gone)
		return gone
	case len(pids) > 1:
		return nil
	}
	fd, err := unix.PidfdOpen(pids[0], unix.PIDFD_NONBLOCK)
	if err != nil {
		return nil
	}
	f := os.NewFile(uintptr(fd), "pidfd") // pollable: non-blocking
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil
	}
	gone := make(chan struct{})
	go func() {
		defer close(gone)
		defer f.Close()
		_ = rc.Read(func(fd uintptr) bool {
			p := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
			n, err := unix.Poll(p, 0)
			return err != unix.EINTR && n > 0 || err != nil && err != unix.EINTR
		})
	}()
	return gone
}

// innermostPID is pid's number in its own PID namespace (the last NSpid
// field of its status), 0 when it cannot be read.
func innermostPID(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "NSpid:"); ok {
			f := strings.Fields(rest)
			if len(f) == 0 {
				return 0
			}
			n, _ := strconv.Atoi(f[len(f)-1])
			return n
		}
	}
	return 0
}
