package helper

import (
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/lemonmcp/lemonmcp/sandbox/wire"
)

// Main is the helper executable's entry point (cmd/lemonmcp-sandbox). It
// confines itself as its arguments ask, every step checked (the first
// that fails ends the start, naming its layer, unless the policy is best
// effort), starts the server, tells the library on the status pipe what
// it set up, then stays as the server's reaper: when the server exits,
// when the library cuts the lifeline, or when the library's process dies,
// every process the server started ends, daemons included, and the
// helper exits with the server's status.
func Main() {
	// Landlock, no_new_privs and the capability bounding set belong to a
	// thread, not to the process, and a child inherits them from the
	// thread that forked it: every step and the fork run on this thread.
	runtime.LockOSThread()
	a, err := wire.ParseArgs(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, wire.HelperName+":", err)
		os.Exit(wire.ExitSetupFailed)
	}
	// The lifeline must not leak into the server: a server holding it
	// would keep it open after the library let go.
	syscall.CloseOnExec(wire.LifelineFD)
	if a.Status {
		// Nor the status pipe: the library reads its end once we are
		// reaped, and a server holding it would only delay the EOF.
		syscall.CloseOnExec(wire.StatusFD)
	}
	s := newSetup(a)
	if a.Proxy != "" && a.Namespaces {
		url, err := startBridge(a.Proxy)
		if s.step(layerProxy, "the loopback bridge to the proxy", err) {
			s.env = proxyEnv(s.env, url)
			s.report.Network = "proxy"
		}
	}
	s.confine()
	if a.Probe {
		// A throwaway process: try here what run does last, so the
		// probe reports what a start would get (qemu-user, for one,
		// refuses the subreaper).
		s.becomeSubreaper()
		s.filterUnixSockets()
		os.Stdout.Write(wire.SetupRecord(&s.report, 0))
		os.Exit(0)
	}
	os.Exit(s.run())
}

// run starts the server and reaps until it and everything it started are
// gone; it returns the helper's exit status.
func (s *setup) run() int {
	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs, syscall.SIGCHLD, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT)
	s.becomeSubreaper()
	// Last, on this locked thread only: the server inherits the filter,
	// the helper's other threads (the proxy bridge) keep their sockets.
	s.filterUnixSockets()
	pid, err := syscall.ForkExec(s.args.Server[0], s.args.Server[1:], &syscall.ProcAttr{
		Env:   s.env,
		Files: []uintptr{0, 1, 2},
		Sys:   s.serverAttr(),
	})
	if err != nil {
		// Not a layer that could be best effort: there is no server.
		s.args.BestEffort = false
		s.step(layerHelper, "exec of the server", err)
		return wire.ExitSetupFailed
	}
	if s.args.Status {
		_, _ = syscall.Write(wire.StatusFD, wire.SetupRecord(&s.report, pid))
	}
	// The server's stdin, stdout and stderr are its own: holding copies
	// would keep them open after the server closed them, and a server
	// that closes its stdout while still running would go unnoticed.
	letGoOfStdio()
	cut := watchLifeline()
	r := &reaper{self: os.Getpid(), init: s.args.Namespaces, server: pid}
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
				r.endAll(s.args.Grace, sigs, cut)
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

// becomeSubreaper, without namespaces (where the helper is the init of
// the server's PID namespace), makes the helper its descendants' reaper:
// orphans (a daemon's double fork) are reparented to the nearest
// subreaper, to us rather than to init, so we can still find and end them.
func (s *setup) becomeSubreaper() {
	if s.args.Namespaces {
		return
	}
	if !s.step(layerHelper, "prctl(PR_SET_CHILD_SUBREAPER)", unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)) {
		s.report.Reaper = "none"
	}
}

// letGoOfStdio points the helper's descriptors 0, 1 and 2 at /dev/null.
func letGoOfStdio() {
	null, err := syscall.Open(os.DevNull, syscall.O_RDWR|syscall.O_CLOEXEC, 0)
	if err != nil {
		// Closing is enough: nothing the helper opens later lands on
		// 0-2 that the server could mistake for its own.
		for fd := 0; fd <= 2; fd++ {
			_ = syscall.Close(fd)
		}
		return
	}
	for fd := 0; fd <= 2; fd++ {
		_ = unix.Dup3(null, fd, 0)
	}
	if null > 2 {
		_ = syscall.Close(null)
	}
}

// filterUnixSockets installs the Unix socket filter when asked (and
// no_new_privs, which it needs, holds).
func (s *setup) filterUnixSockets() {
	if !s.args.DenyUnix {
		return
	}
	if !s.report.NoNewPrivs {
		s.step(layerSeccomp, "the Unix socket filter", fmt.Errorf("needs no_new_privs, which did not hold"))
		return
	}
	if s.step(layerSeccomp, "the Unix socket filter", denyUnixSockets()) {
		s.report.UnixSockets = "denied"
	}
}

// watchLifeline returns a channel closed when the library's end of the
// lifeline closes (or its process dies).
func watchLifeline() <-chan struct{} {
	cut := make(chan struct{})
	f := os.NewFile(wire.LifelineFD, "lifeline")
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
// returns the helper's exit status. Without a record (a failed write) the
// library falls back to the helper's own status.
func (s *setup) end(ws syscall.WaitStatus) int {
	if s.args.Status {
		if rec, ok := wire.EndRecord(ws); ok {
			_, _ = syscall.Write(wire.StatusFD, rec[:])
		}
	}
	return exitStatus(ws, s.args.Namespaces)
}

// exitStatus turns the server's wait status into the helper's: the same
// exit code, or death by the same signal so the library reports it as the
// server's. The init of a PID namespace cannot die by its own signal, so
// it exits 128+signal as a shell would report it; the end record is what
// lets the library report the signal all the same.
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
	return wire.ExitSetupFailed
}
