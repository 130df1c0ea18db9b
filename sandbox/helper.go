package sandbox

import (
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// lifelineFD is the descriptor on which the helper finds its end of the
// lifeline pipe (stdio.Launch.Lifeline holds the other end).
const lifelineFD = 3

// exitSetupFailed is the helper's exit status when it could not start the
// server at all (the shell's "command cannot be executed" is 126; 125 is
// the convention of env and friends for "the wrapper failed").
const exitSetupFailed = 125

// Main is the helper executable's entry point (cmd/lemonmcp-sandbox). It
// confines itself as its arguments ask, starts the server, then stays as
// the server's reaper: when the server exits, when the library cuts the
// lifeline, or when the library's process dies, every process the server
// started ends, daemons included, and the helper exits with the server's
// status.
func Main() {
	// Landlock, no_new_privs and the capability bounding set belong to a
	// thread, not to the process, and a child inherits them from the
	// thread that forked it: every step and the fork run on this thread.
	runtime.LockOSThread()
	a, err := parseHelperArgs(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "lemonmcp-sandbox:", err)
		os.Exit(exitSetupFailed)
	}
	// The lifeline must not leak into the server: a server holding it
	// would keep it open after the library let go.
	syscall.CloseOnExec(lifelineFD)
	if a.status {
		// Nor the status pipe: the library reads it once we are reaped,
		// and a server holding it would only delay the EOF.
		syscall.CloseOnExec(statusFD)
	}
	env := &setup{args: a, env: os.Environ(), enumerate: a.readDeny}
	if a.proxy != "" && a.namespaces {
		url, err := startBridge(a.proxy)
		if err != nil {
			fmt.Fprintln(os.Stderr, "lemonmcp-sandbox: no way to the network proxy:", err)
			os.Exit(exitSetupFailed)
		}
		env.env = proxyEnv(env.env, url)
	}
	env.confine()
	if a.probe {
		env.filterUnixSockets() // a throwaway process: try the filter here
		env.report(os.Stdout)
		os.Exit(0)
	}
	os.Exit(env.run())
}

// run starts the server and reaps until it and everything it started are
// gone; it returns the helper's exit status.
func (s *setup) run() int {
	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs, syscall.SIGCHLD, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT)
	if !s.args.namespaces {
		// Orphans (a daemon's double fork) are reparented to the nearest
		// subreaper: to us, not to init, so we can still find and end them.
		_ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
	}
	// Last, on this locked thread only: the server inherits the filter,
	// the helper's other threads (the proxy bridge) keep their sockets.
	s.filterUnixSockets()
	pid, err := syscall.ForkExec(s.args.server[0], s.args.server[1:], &syscall.ProcAttr{
		Env:   s.env,
		Files: []uintptr{0, 1, 2},
		Sys:   s.serverAttr(),
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "lemonmcp-sandbox: cannot start the server: %v\n", err)
		return exitSetupFailed
	}
	cut := watchLifeline()
	r := &reaper{self: os.Getpid(), init: s.args.namespaces, server: pid}
	for {
		select {
		case sig := <-sigs:
			if sig != syscall.SIGCHLD {
				// The library's SIGTERM to the group reaches the server
				// too, unless it has a session of its own (namespaces).
				_ = syscall.Kill(pid, sig.(syscall.Signal))
				continue
			}
			if r.reapServer() {
				r.endAll(s.args.grace, sigs, cut)
				return s.end(r.serverWs)
			}
		case <-cut:
			// The server dies by the same SIGKILL as the rest, and the
			// library hears so, as without the helper.
			r.killAll()
			if !r.serverDone {
				return 128 + int(syscall.SIGKILL)
			}
			return s.end(r.serverWs)
		}
	}
}

// filterUnixSockets installs the Unix socket filter when asked (and
// no_new_privs, which it needs, holds).
func (s *setup) filterUnixSockets() {
	if !s.args.denyUnix || !s.noNewPrivs {
		return
	}
	if err := denyUnixSockets(); err != nil {
		s.fail("seccomp", err)
		return
	}
	s.seccomp = true
}

// watchLifeline returns a channel closed when the library's end of the
// lifeline closes (or its process dies).
func watchLifeline() <-chan struct{} {
	cut := make(chan struct{})
	f := os.NewFile(lifelineFD, "lifeline")
	if f == nil {
		return cut
	}
	go func() {
		defer close(cut)
		var b [64]byte
		for {
			if _, err := f.Read(b[:]); err != nil {
				return
			}
		}
	}()
	return cut
}

// end tells the library how the server ended, on the status pipe, and
// returns the helper's exit status.
func (s *setup) end(ws syscall.WaitStatus) int {
	if s.args.status {
		writeStatus(ws)
	}
	return exitStatus(ws, s.args.namespaces)
}

// exitStatus turns the server's wait status into the helper's: the same
// exit code, or death by the same signal so the library reports it as the
// server's. The init of a PID namespace cannot die by its own signal, so
// it exits 128+signal as a shell would report it; the status record
// (status.go) is what lets the library report the signal all the same.
func exitStatus(ws syscall.WaitStatus, pidInit bool) int {
	switch {
	case ws.Exited():
		return ws.ExitStatus()
	case ws.Signaled():
		sig := ws.Signal()
		if !pidInit {
			signal.Reset(sig)
			_ = syscall.Kill(os.Getpid(), sig)
			time.Sleep(10 * time.Millisecond) // the signal is delivered before this ends
		}
		return 128 + int(sig)
	}
	return exitSetupFailed
}
