package sandbox

import (
	"os"
	"syscall"
	"time"

	"github.com/lemonmcp/lemonmcp/transport"
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
		a := &helperArgs{grace: grace, server: append([]string{s.Path}, s.Argv...)}
		return launch(helper, a, s.Env, 0, nil)
	}
}

// launch is the stdio.Launch that runs the helper with a. The helper gets
// the lifeline on descriptor 3 and the status pipe (status.go) on 4.
func launch(helper string, a *helperArgs, env []string, flags uintptr, release func()) (*stdio.Launch, error) {
	lifeR, lifeW, err := os.Pipe()
	if err != nil {
		if release != nil {
			release()
		}
		return nil, transport.Errorf(transport.CodeTransport, "cannot start the sandbox helper: %v", err)
	}
	statR, statW, err := os.Pipe()
	if err != nil {
		lifeR.Close()
		lifeW.Close()
		if release != nil {
			release()
		}
		return nil, transport.Errorf(transport.CodeTransport, "cannot start the sandbox helper: %v", err)
	}
	a.status = true
	l := &stdio.Launch{
		Path:         helper,
		Argv:         append([]string{HelperName}, a.argv()...),
		Env:          env,
		Files:        []*os.File{lifeR, statW},
		Lifeline:     lifeW,
		ServerStatus: func() (syscall.WaitStatus, bool) { return readStatus(statR) },
		Release: func() {
			statR.Close() // already closed once the status was read
			if release != nil {
				release()
			}
		},
	}
	if flags != 0 {
		l.Cloneflags = flags
		l.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}}
		l.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}}
	}
	return l, nil
}
