package stdio

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/lemonmcp/lemonmcp/transport"
)

// fallbackPath is searched when the child's environment has no PATH, the
// way execvp falls back to a default search path.
const fallbackPath = "/usr/local/bin:/usr/bin:/bin"

// child is a started server process and the parent's ends of its pipes.
type child struct {
	proc   *os.Process
	stdin  *os.File // write end; pollable, so write deadlines work
	stdout *os.File // read end
	stderr *os.File // read end, nil unless Stderr is "capture"
	pidfd  int      // the process's pidfd, -1 when pidfds are unavailable
	launch *Launch  // nil unless a Launcher runs the server
	report any      // the launch's report of this start (Launch.Started)
}

// spawn starts the server described by cfg (already normalized).
func spawn(cfg Config) (*child, error) {
	env := buildEnv(cfg.EnvInherit, cfg.Env, os.Environ())
	if err := checkCwd(cfg.Cwd); err != nil {
		return nil, err
	}
	path, err := resolveCommand(cfg.Command, cfg.Cwd, env)
	if err != nil {
		return nil, err
	}

	// The parent's ends come from os.Pipe, which registers them with the
	// runtime poller: that is what makes SetWriteDeadline on stdin and
	// SetReadDeadline on stdout work. The child's ends are closed here
	// once the child holds them; keeping them open would stop us from
	// ever seeing EOF.
	var parentEnds, childEnds []*os.File
	closeAll := func(files []*os.File) {
		for _, f := range files {
			if f != nil {
				f.Close()
			}
		}
	}
	fail := func(err error) (*child, error) {
		closeAll(childEnds)
		closeAll(parentEnds)
		return nil, transport.Errorf(transport.CodeTransport, "cannot start server: %s", errnoText(err))
	}

	inR, inW, err := os.Pipe()
	if err != nil {
		return fail(err)
	}
	childEnds, parentEnds = append(childEnds, inR), append(parentEnds, inW)
	outR, outW, err := os.Pipe()
	if err != nil {
		return fail(err)
	}
	childEnds, parentEnds = append(childEnds, outW), append(parentEnds, outR)

	c := &child{stdin: inW, stdout: outR}
	var errW *os.File
	switch cfg.Stderr {
	case StderrMerge:
		errW = outW
	case StderrDiscard:
		if errW, err = os.OpenFile(os.DevNull, os.O_WRONLY, 0); err != nil {
			return fail(err)
		}
		childEnds = append(childEnds, errW)
	default:
		var errR *os.File
		if errR, errW, err = os.Pipe(); err != nil {
			return fail(err)
		}
		childEnds, parentEnds = append(childEnds, errW), append(parentEnds, errR)
		c.stderr = errR
	}

	argv := append([]string{cfg.Command}, cfg.Args...)
	files := []*os.File{inR, outW, errW}
	var launch *Launch
	if cfg.Launcher != nil {
		if launch, err = cfg.Launcher(Server{Path: path, Argv: argv, Env: env, Dir: cfg.Cwd}); err != nil {
			closeAll(childEnds)
			closeAll(parentEnds)
			return nil, err
		}
	}
	if launch != nil { // nil: the launcher lets the server run directly
		path, argv, env = launch.Path, launch.Argv, launch.Env
		files = append(files, launch.Files...)
		childEnds = append(childEnds, launch.Files...)
	}
	// A group of its own, so shutdown can signal the server and everything
	// it started with one kill(-pgid), and so a terminal Ctrl-C aimed at
	// the host does not reach the server behind the host's back.
	sys := &syscall.SysProcAttr{Setpgid: true}
	if launch != nil {
		sys.Cloneflags = launch.Cloneflags
		sys.UidMappings, sys.GidMappings = launch.UidMappings, launch.GidMappings
	}
	pidfd := -1
	if pidfdSupported() {
		// clone hands over the pidfd atomically: the reaper polls it
		// (reaper.go), and it names this process even if the pid is
		// recycled.
		sys.PidFD = &pidfd
	}
	attr := &os.ProcAttr{Dir: cfg.Cwd, Env: env, Files: files, Sys: sys}
	proc, err := os.StartProcess(path, argv, attr)
	if err != nil && sys.PidFD != nil && errors.Is(err, syscall.EINVAL) {
		// Some clone implementations refuse CLONE_PIDFD although
		// pidfd_open works (qemu-user, which runs the arm64 tests): start
		// without it, and stop asking (the reaper falls back to wait4).
		pidfdRefused.Store(true)
		sys.PidFD, pidfd = nil, -1
		proc, err = os.StartProcess(path, argv, attr)
	}
	if err != nil {
		launch.release()
		if launch != nil && launch.StartFailed != nil {
			closeAll(childEnds)
			closeAll(parentEnds)
			return nil, launch.StartFailed(err)
		}
		if e := execError(cfg.Command, err); e != nil {
			closeAll(childEnds)
			closeAll(parentEnds)
			return nil, e
		}
		return fail(err)
	}
	closeAll(childEnds)
	if launch != nil && launch.Started != nil {
		rep, err := launch.Started()
		if err != nil {
			// The program refused the start (a sandbox layer that could
			// not be set up): it is gone or going; make sure, and reap it.
			_ = proc.Kill()
			_, _ = proc.Wait()
			if pidfd >= 0 {
				_ = syscall.Close(pidfd)
			}
			launch.release()
			closeAll(parentEnds)
			return nil, err
		}
		c.report = rep
	}
	c.proc, c.pidfd, c.launch = proc, pidfd, launch
	return c, nil
}

// resolveCommand turns the configured command into the absolute path to
// execute. PATH comes from the child's environment, not ours: that is the
// PATH the configuration author was reasoning about.
func resolveCommand(command, cwd string, env []string) (string, error) {
	if strings.Contains(command, "/") {
		path := command
		if cwd != "" && !filepath.IsAbs(path) {
			path = filepath.Join(cwd, path)
		}
		// Absolute, because the child changes to Cwd before exec and a
		// relative path would then be resolved a second time.
		abs, err := filepath.Abs(path)
		if err != nil {
			return "", notFound(command)
		}
		switch executable(abs) {
		case errMissing:
			return "", notFound(command)
		case errNotExec:
			return "", transport.Errorf(transport.CodeInvalidArgument, "not an executable file: %s", command).WithCause(transport.CauseNotExecutable)
		}
		return abs, nil
	}

	search, ok := lookupEnv(env, "PATH")
	if !ok {
		search = fallbackPath
	}
	for _, dir := range filepath.SplitList(search) {
		// Relative entries (including the empty one, which means ".")
		// are skipped: whether they would be relative to our directory
		// or to Cwd is ambiguous, and honouring them is the classic way
		// to run a planted binary from the current directory.
		if !filepath.IsAbs(dir) {
			continue
		}
		path := filepath.Join(dir, command)
		if executable(path) == nil {
			return path, nil
		}
	}
	return "", notFound(command)
}

var (
	errMissing = errors.New("missing")
	errNotExec = errors.New("not executable")
)

// executable reports whether path names a file we may plausibly execute.
// The mode bits are only a pre-check for a clear error message; exec
// itself has the last word (see execError).
func executable(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return errMissing
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		return errNotExec
	}
	return nil
}

func checkCwd(cwd string) error {
	if cwd == "" {
		return nil
	}
	fi, err := os.Stat(cwd)
	if err != nil {
		return transport.Errorf(transport.CodeInvalidArgument, "working directory not found: %s", cwd).WithCause(transport.CauseWorkingDirectory)
	}
	if !fi.IsDir() {
		return transport.Errorf(transport.CodeInvalidArgument, "working directory is not a directory: %s", cwd).WithCause(transport.CauseWorkingDirectory)
	}
	return nil
}

// notFound is a transport failure, not a configuration error: the same
// configuration works once the program is installed, and to the host it is
// "the server could not be started", like any other spawn failure.
func notFound(command string) error {
	e := transport.Errorf(transport.CodeTransport, "executable not found: %s", command).WithCause(transport.CauseExecutableNotFound)
	e.Permanent = true // a supervisor retrying it would only delay the report
	return e
}

// execError maps the exec failures that mean "this configuration cannot
// work" to CodeInvalidArgument; it returns nil for the rest (resource
// exhaustion and the like), which are transport failures.
func execError(command string, err error) error {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return nil
	}
	switch errno {
	case syscall.ENOENT, syscall.ENOTDIR:
		// The file was there a moment ago, so this is most likely a
		// missing "#!" interpreter or dynamic loader.
		e := transport.Errorf(transport.CodeTransport,
			"executable not found: %s (or its interpreter is missing)", command).WithCause(transport.CauseExecutableNotFound)
		e.Permanent = true
		return e
	case syscall.EACCES, syscall.EPERM:
		return transport.Errorf(transport.CodeInvalidArgument, "not allowed to execute: %s", command).WithCause(transport.CauseNotExecutable)
	case syscall.ENOEXEC:
		return transport.Errorf(transport.CodeInvalidArgument, "not an executable file: %s", command).WithCause(transport.CauseNotExecutable)
	}
	return nil
}

// errnoText is the system's description of err without the path or
// arguments that *PathError and friends prepend.
func errnoText(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno.Error()
	}
	return err.Error()
}
