package stdio

import (
	"os"
	"syscall"
)

// A Launcher runs the server through another program, the sandbox helper
// (package sandbox): the helper starts the server, confines it, and ends
// every process it leaves behind. It is asked at every start, so a
// restarted server is launched (and confined) afresh. A nil Launch with a
// nil error runs the server directly.
type Launcher func(Server) (*Launch, error)

// Server is what a Launcher is asked to run: the resolved executable, its
// argv (argv[0] as configured), the environment built from the
// configuration and the working directory.
type Server struct {
	Path string
	Argv []string
	Env  []string
	Dir  string
}

// Launch is the program to start in the server's place.
type Launch struct {
	Path string
	Argv []string
	Env  []string
	// Files become the child's descriptors 3, 4, ...; spawn closes them in
	// this process once the child holds them.
	Files []*os.File
	// Namespaces the child is cloned into, with its identity maps; zero
	// for none.
	Cloneflags  uintptr
	UidMappings []syscall.SysProcIDMap
	GidMappings []syscall.SysProcIDMap
	// Lifeline is this process's end of a pipe the launched program
	// watches: closing it (or this process dying) makes the program kill
	// every process of the server at once and exit. Close uses it before
	// SIGKILL, which the program itself could not survive to act on.
	Lifeline *os.File
	// ServerStatus, when set, is asked once the launched program has been
	// reaped how the server itself ended: the program (the sandbox helper,
	// the init of a PID namespace) cannot die by the server's signal, so
	// its own wait status would report a kill as "exited 128+N". ok false
	// (the program died before it could tell) keeps the program's status.
	ServerStatus func() (ws syscall.WaitStatus, ok bool)
	// Release, when set, runs once the launched program has been reaped
	// (or failed to start), to free what the launch held (a private
	// temporary directory, a proxy).
	Release func()
	// StartFailed, when set, turns the error of starting the program
	// (clone refused its namespaces) into the start's error.
	StartFailed func(err error) error
	// Started, when set, is called once the launched program runs and
	// waits (bounded) for it to tell whether it started the server: its
	// report (the sandbox helper's: what it set up for this start) is
	// kept for Report; an error ends the start, the program killed and
	// reaped, and is what Start returns.
	Started func() (report any, err error)
	// ServerGone, when set, is asked once the server runs (with the
	// launched program's pid) for a channel
	// closed when the server itself has exited (nil: unknown). The
	// launched program outlives the server a moment (it ends what the
	// server left), so a stdout that closes with the server is told from
	// a server that closed its stdout and runs on by this, not by the
	// program's exit.
	ServerGone func(pid int) <-chan struct{}
	// Warnings, when set, is called once the server runs with a function
	// that reports a warning of the launcher's (what the sandbox's proxy
	// refused the server while it runs) to the transport's sink.
	Warnings func(warn func(text string))
	// Note, when set, is asked once the server has gone away on its own:
	// a sentence of the library's (never the server's output) added to the
	// closed message, such as what the sandbox refused it.
	Note func() string
}

// note is what the launch adds to a closed message, "" for nothing.
func (l *Launch) note() string {
	if l == nil || l.Note == nil {
		return ""
	}
	return l.Note()
}

// serverGone is the launch's ServerGone channel, nil when unknown.
func (l *Launch) serverGone(pid int) <-chan struct{} {
	if l == nil || l.ServerGone == nil {
		return nil
	}
	return l.ServerGone(pid)
}

// release closes what a launch holds in this process.
func (l *Launch) release() {
	if l == nil {
		return
	}
	if l.Lifeline != nil {
		l.Lifeline.Close()
	}
	if l.Release != nil {
		l.Release()
	}
}
