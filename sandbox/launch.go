package sandbox

import (
	"bytes"
	"errors"
	"os"
	"syscall"
	"time"

	"github.com/lemonmcp/lemonmcp/sandbox/wire"
	"github.com/lemonmcp/lemonmcp/transport/stdio"
)

// nsCloneflags are the namespaces a confined server's helper is cloned
// into: its own users, mounts, processes, network and System V IPC.
const nsCloneflags = syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID |
	syscall.CLONE_NEWNET | syscall.CLONE_NEWIPC

// Reaper returns the launcher that runs an unconfined server under the
// helper, so that nothing the server starts outlives it (daemons that
// double-fork and call setsid included), or nil when the helper is not
// installed: the server then runs as before, its process group the only
// bound on what it leaves behind. grace is the stdio transport's
// CloseGrace, given to leftovers between SIGTERM and SIGKILL.
func Reaper(grace time.Duration) stdio.Launcher {
	helper := helperPath()
	if helper == "" {
		return nil
	}
	return func(s stdio.Server) (*stdio.Launch, error) {
		// Best effort: the server asked for no confinement, and a reaper
		// the machine refuses (qemu-user has no PR_SET_CHILD_SUBREAPER)
		// leaves it as it would run without the helper, not refused.
		a := &wire.Args{Grace: grace, BestEffort: true, Server: append([]string{s.Path}, s.Argv...)}
		l, err := launch(helper, a, s.Env, 0, nil)
		if l != nil {
			// The report of an unconfined server is nothing: it is not
			// sandboxed, whatever reaps it.
			started := l.Started
			l.Started = func() (any, error) {
				if _, err := started(); err != nil {
					return nil, err
				}
				return nil, nil
			}
		}
		return l, err
	}
}

// launch is the stdio.Launch that runs the helper with a. The helper gets
// the lifeline on descriptor 3 and the status pipe (wire/status.go) on 4.
func launch(helper string, a *wire.Args, env []string, flags uintptr, release func()) (*stdio.Launch, error) {
	lifeR, lifeW, err := os.Pipe()
	if err != nil {
		if release != nil {
			release()
		}
		return nil, sandboxError("the helper: cannot start it: %v", errText(err))
	}
	statR, statW, err := os.Pipe()
	if err != nil {
		lifeR.Close()
		lifeW.Close()
		if release != nil {
			release()
		}
		return nil, sandboxError("the helper: cannot start it: %v", errText(err))
	}
	a.Status = true
	st := &statusPipe{r: statR}
	l := &stdio.Launch{
		Path:         helper,
		Argv:         append([]string{HelperName}, a.Argv()...),
		Env:          env,
		Files:        []*os.File{lifeR, statW},
		Lifeline:     lifeW,
		Started:      func() (any, error) { return st.setup() },
		ServerGone:   func(helper int) <-chan struct{} { return serverGone(helper, st.serverPID) },
		ServerStatus: st.end,
		Release: func() {
			statR.Close() // already closed once the status was read
			if release != nil {
				release()
			}
		},
	}
	l.StartFailed = func(err error) error {
		if flags != 0 {
			return sandboxError("namespaces: clone(CLONE_NEWUSER|CLONE_NEWPID|CLONE_NEWNET|...) failed: %s", errText(err))
		}
		return sandboxError("the helper: cannot start it: %s", errText(err))
	}
	if flags != 0 {
		l.Cloneflags = flags
		l.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}}
		l.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}}
	}
	return l, nil
}

// statusPipe is the library's end of the helper's status pipe.
type statusPipe struct {
	r         *os.File
	serverPID int    // the server's pid in the helper's PID namespace
	rest      []byte // read past the setup record: the end record, if the server was that quick
}

// setup waits for the helper's first record: what it set up, or the step
// that failed (which ends the start).
func (p *statusPipe) setup() (*Report, error) {
	_ = p.r.SetReadDeadline(time.Now().Add(setupWait))
	var buf []byte
	var chunk [512]byte
	for !bytes.Contains(buf, []byte{'\n'}) && len(buf) < 64<<10 {
		n, err := p.r.Read(chunk[:])
		buf = append(buf, chunk[:n]...)
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				return nil, sandboxError("the helper: did not start the server within %s", setupWait)
			}
			break
		}
	}
	line, rest, _ := bytes.Cut(buf, []byte{'\n'})
	p.rest = rest
	r, pid, err := wire.ParseSetup(line)
	p.serverPID = pid
	if err != nil {
		var se *wire.SetupError
		if errors.As(err, &se) {
			return nil, sandboxError("%s", se.Failure.String())
		}
		return nil, sandboxError("%s", err.Error())
	}
	return r, nil
}

// end is called once the helper has been reaped: its write end is closed
// by then (close-on-exec in the helper, so the server never held it), so
// one non-blocking read finds the end record or nothing. It closes r.
func (p *statusPipe) end() (syscall.WaitStatus, bool) {
	defer p.r.Close()
	b := append([]byte(nil), p.rest...)
	if rc, err := p.r.SyscallConn(); err == nil {
		var chunk [64]byte
		_ = rc.Read(func(fd uintptr) bool {
			for {
				m, err := syscall.Read(int(fd), chunk[:])
				if err == syscall.EINTR {
					continue
				}
				if m > 0 {
					b = append(b, chunk[:m]...)
					continue
				}
				return true // never wait: the writer is gone
			}
		})
	}
	return wire.ParseEndRecord(b)
}
