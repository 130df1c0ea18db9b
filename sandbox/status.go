package sandbox

import (
	"os"
	"syscall"
)

// statusFD is the descriptor on which the helper finds the write end of
// the status pipe (lifelineFD is 3).
const statusFD = 4

// The status record tells the library how the server ended. The helper
// cannot pass a death by signal on in its own wait status: as the init of
// a PID namespace it cannot die by the signals it sends itself, so it
// exits 128+N, which the library would report as an exit code. Once the
// server is reaped the helper writes one record on statusFD (4 bytes, so
// a single atomic pipe write): 'L', the kind ('x' exited, 's' killed by a
// signal, 'c' killed with a core dump), the exit code or signal number,
// '\n'. No record (the helper was killed itself, or could not start the
// server) leaves the helper's own status to report.
const statusRecordLen = 4

const (
	statusExited = 'x'
	statusKilled = 's'
	statusCore   = 'c'
)

// statusRecord encodes ws; ok is false for a status that is not an end.
func statusRecord(ws syscall.WaitStatus) (rec [statusRecordLen]byte, ok bool) {
	switch {
	case ws.Exited():
		return [statusRecordLen]byte{'L', statusExited, byte(ws.ExitStatus()), '\n'}, true
	case ws.Signaled() && ws.CoreDump():
		return [statusRecordLen]byte{'L', statusCore, byte(ws.Signal()), '\n'}, true
	case ws.Signaled():
		return [statusRecordLen]byte{'L', statusKilled, byte(ws.Signal()), '\n'}, true
	}
	return rec, false
}

// parseStatusRecord decodes a record into the wait(2) status word it
// stands for.
func parseStatusRecord(b []byte) (syscall.WaitStatus, bool) {
	if len(b) != statusRecordLen || b[0] != 'L' || b[3] != '\n' {
		return 0, false
	}
	v := syscall.WaitStatus(b[2])
	switch b[1] {
	case statusExited:
		return v << 8, true
	case statusKilled:
		if v == 0 || v > 0x7e {
			return 0, false
		}
		return v, true
	case statusCore:
		if v == 0 || v > 0x7e {
			return 0, false
		}
		return v | 0x80, true
	}
	return 0, false
}

// writeStatus is the helper's side: one record on statusFD, once the
// server has been reaped. Errors are ignored: without a record the
// library falls back to the helper's own status.
func writeStatus(ws syscall.WaitStatus) {
	if rec, ok := statusRecord(ws); ok {
		_, _ = syscall.Write(statusFD, rec[:])
	}
}

// readStatus is the library's side, called once the helper has been
// reaped: its write end is closed by then (it is close-on-exec in the
// helper, so the server never held it), so one non-blocking read finds
// the record or nothing. It closes r.
func readStatus(r *os.File) (syscall.WaitStatus, bool) {
	defer r.Close()
	rc, err := r.SyscallConn()
	if err != nil {
		return 0, false
	}
	var b [statusRecordLen + 1]byte
	n := 0
	_ = rc.Read(func(fd uintptr) bool {
		for {
			m, err := syscall.Read(int(fd), b[:])
			if err == syscall.EINTR {
				continue
			}
			if m > 0 {
				n = m
			}
			return true // never wait: the writer is gone
		}
	})
	return parseStatusRecord(b[:n])
}
