package stdio

import (
	"fmt"
	"syscall"
)

// exitReport describes how the server ended, for ClosedError. The
// ExitCode is -1 unless the server exited normally. known is false when
// the status could not be learned, typically because the host set SIGCHLD
// to SIG_IGN and the kernel reaped the child itself.
func exitReport(ws syscall.WaitStatus, known bool) (msg string, code int, signal string) {
	switch {
	case !known:
		return "server exited; its exit status is unknown", -1, ""
	case ws.Exited():
		return fmt.Sprintf("server exited with status %d", ws.ExitStatus()), ws.ExitStatus(), ""
	case ws.Signaled():
		name := signalName(ws.Signal())
		msg := "server was killed by " + name
		if ws.CoreDump() {
			msg += " (core dumped)"
		}
		return msg, -1, name
	}
	return "server exited; its exit status is unknown", -1, ""
}

// signalNames maps signals to their conventional names; syscall's String
// gives descriptions ("killed"), and hosts want "SIGKILL".
var signalNames = map[syscall.Signal]string{
	syscall.SIGABRT:   "SIGABRT",
	syscall.SIGALRM:   "SIGALRM",
	syscall.SIGBUS:    "SIGBUS",
	syscall.SIGCHLD:   "SIGCHLD",
	syscall.SIGCONT:   "SIGCONT",
	syscall.SIGFPE:    "SIGFPE",
	syscall.SIGHUP:    "SIGHUP",
	syscall.SIGILL:    "SIGILL",
	syscall.SIGINT:    "SIGINT",
	syscall.SIGIO:     "SIGIO",
	syscall.SIGKILL:   "SIGKILL",
	syscall.SIGPIPE:   "SIGPIPE",
	syscall.SIGPROF:   "SIGPROF",
	syscall.SIGPWR:    "SIGPWR",
	syscall.SIGQUIT:   "SIGQUIT",
	syscall.SIGSEGV:   "SIGSEGV",
	syscall.SIGSTKFLT: "SIGSTKFLT",
	syscall.SIGSTOP:   "SIGSTOP",
	syscall.SIGSYS:    "SIGSYS",
	syscall.SIGTERM:   "SIGTERM",
	syscall.SIGTRAP:   "SIGTRAP",
	syscall.SIGTSTP:   "SIGTSTP",
	syscall.SIGTTIN:   "SIGTTIN",
	syscall.SIGTTOU:   "SIGTTOU",
	syscall.SIGURG:    "SIGURG",
	syscall.SIGUSR1:   "SIGUSR1",
	syscall.SIGUSR2:   "SIGUSR2",
	syscall.SIGVTALRM: "SIGVTALRM",
	syscall.SIGWINCH:  "SIGWINCH",
	syscall.SIGXCPU:   "SIGXCPU",
	syscall.SIGXFSZ:   "SIGXFSZ",
}

func signalName(s syscall.Signal) string {
	if name, ok := signalNames[s]; ok {
		return name
	}
	return fmt.Sprintf("signal %d", int(s))
}
