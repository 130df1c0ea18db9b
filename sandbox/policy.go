package sandbox

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/lemonmcp/lemonmcp/sandbox/wire"
	"github.com/lemonmcp/lemonmcp/transport"
	"github.com/lemonmcp/lemonmcp/transport/stdio"
)

// Policy is what a confined server is granted. Reads are allowed except
// beneath DenyRead (and the library's own secrets, DenySecret); writes are
// denied except beneath AllowWrite (and the server's private temporary and
// cache directories) minus DenyWrite; the network is closed. Paths are
// absolute, variables already resolved.
type Policy struct {
	AllowWrite []string
	DenyRead   []string
	DenyWrite  []string
	// AllowedDomains opens HTTP(S) to these names ("*.example.com" for
	// any subdomain) through the library's proxy; DeniedDomains wins over
	// it.
	AllowedDomains []string
	DeniedDomains  []string
	// AllowAllUnixSockets lets the server create AF_UNIX sockets, and so
	// reach any socket file it can read (sandbox-runtime's
	// "allowAllUnixSockets"); by default a seccomp filter refuses them.
	AllowAllUnixSockets bool
	// Limits; zero means none.
	Processes int
	OpenFiles int
	Memory    int64 // bytes
	// BestEffort ("required": false) runs the server with the layers that
	// hold and reports the others missing. By default a server whose
	// sandbox cannot be set up in full does not start, and the error
	// names the layer and why.
	BestEffort bool
}

// Report says what confines a server (wire.Report).
type Report = wire.Report

// probe is what the helper could set up on this machine, learnt once per
// process by running it with -probe (a few milliseconds). It answers
// "what could this machine do" (Features, and a policy's check before a
// start); what a server got is the helper's own report of its start.
type probe struct {
	helper     bool
	namespaces bool
	nsErr      string // why the namespaces could not be had
	report     wire.Report
}

var probed = sync.OnceValue(func() probe { return probeHelper(helperPath()) })

// probeArgs are the steps the probe tries: every flag a start may pass
// (-status among them), so a helper of another release that refuses one
// is reported missing, rather than failing every start.
func probeArgs(ns bool) *wire.Args {
	return &wire.Args{Probe: true, Status: true, BestEffort: true, Landlock: true, DenyUnix: true, Namespaces: ns,
		UID: os.Getuid(), GID: os.Getgid(), Processes: 400, OpenFiles: 1024, Write: []string{os.TempDir()},
		Secrets: []string{"/nonexistent/lemonmcp-probe"}}
}

// probeHelper runs helper with -probe, in new namespaces and, when those
// are refused, without.
func probeHelper(helper string) probe {
	if helper == "" {
		return probe{}
	}
	run := func(ns bool) (*wire.Report, error) {
		cmd := exec.Command(helper, probeArgs(ns).Argv()...)
		if ns {
			cmd.SysProcAttr = &syscall.SysProcAttr{
				Cloneflags:  nsCloneflags,
				UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
				GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
			}
		}
		out, err := cmd.Output()
		var exit *exec.ExitError
		if err != nil && (errors.As(err, &exit) || len(out) == 0) {
			// A failed wait with the whole report read is not a failure:
			// a host that ignores SIGCHLD (the BEAM) has its children
			// reaped by the kernel, and waiting then finds none.
			if err != nil && exit == nil {
				var errno syscall.Errno
				if errors.As(err, &errno) {
					return nil, errno
				}
			}
			return nil, err
		}
		line, _, _ := bytes.Cut(out, []byte{'\n'})
		r, _, err := wire.ParseSetup(line)
		return r, err
	}
	r, err := run(true)
	if err == nil {
		return probe{helper: true, namespaces: true, report: *r}
	}
	nsErr := err.Error()
	if r, err = run(false); err != nil {
		return probe{}
	}
	return probe{helper: true, nsErr: nsErr, report: *r}
}

// unmet lists what p asks for that this machine cannot give, each naming
// its layer and why, as the probe found it.
func (p *Policy) unmet() []string {
	pr := probed()
	if !pr.helper {
		return []string{"the helper: " + HelperName + " was not found beside the library (nor in $" + HelperEnv + ")"}
	}
	var out []string
	if !pr.namespaces {
		out = append(out, "namespaces: clone(CLONE_NEWUSER|CLONE_NEWPID|CLONE_NEWNET|...) failed: "+pr.nsErr)
	}
	for _, m := range pr.report.Missing {
		switch {
		case strings.HasPrefix(m, "seccomp:") && p.AllowAllUnixSockets:
		case strings.HasPrefix(m, "limits:") && p.Processes == 0 && p.OpenFiles == 0 && p.Memory == 0:
		default:
			out = append(out, m)
		}
	}
	return out
}

// Features is what a server confined on this machine can get, from the
// probe, for lmcp_features: nil without the helper.
func Features() *Report {
	pr := probed()
	if !pr.helper {
		return nil
	}
	r := pr.report
	if !pr.namespaces {
		r.Missing = append([]string{"namespaces: " + pr.nsErr}, r.Missing...)
	}
	return &r
}

// setupWait bounds how long the helper may take to confine itself and
// exec the server (the Landlock enumeration of a large tree included).
const setupWait = 2 * time.Minute

// sandboxError is a start refused because a layer could not be set up.
func sandboxError(format string, args ...any) *transport.Error {
	e := transport.Errorf(transport.CodeTransport, "sandbox: "+format, args...).WithCause(transport.CauseSandboxUnavailable)
	e.Permanent = true
	return e
}

// Confine returns the launcher that runs a server under p. grace is the
// stdio transport's CloseGrace.
func Confine(p Policy, grace time.Duration) stdio.Launcher {
	return func(s stdio.Server) (*stdio.Launch, error) {
		unmet := p.unmet()
		if len(unmet) > 0 && !p.BestEffort {
			return nil, sandboxError("cannot be set up in full, and the policy requires it (\"required\": false runs with what holds): %s",
				strings.Join(unmet, "; "))
		}
		pr := probed()
		if !pr.helper {
			// Best effort, and nothing to confine with: the server runs
			// directly, and its report says so.
			rep := &Report{Network: "host", Proc: "host", Reaper: "none", UnixSockets: "allowed", Missing: unmet}
			return &stdio.Launch{Path: s.Path, Argv: s.Argv, Env: s.Env,
				Started: func() (any, error) { return rep, nil }}, nil
		}
		tmp, err := os.MkdirTemp("", "lemonmcp-sandbox-")
		if err != nil {
			return nil, sandboxError("the helper: cannot create the private temporary directory: %v", errText(err))
		}
		release := func() { _ = os.RemoveAll(tmp) }
		var px *proxy
		if len(p.AllowedDomains) > 0 && pr.namespaces {
			if px, err = startProxy(domainRules{allowed: p.AllowedDomains, denied: p.DeniedDomains}); err != nil {
				release()
				return nil, sandboxError("the proxy: cannot start: %v", errText(err))
			}
			release = func() { px.close(); _ = os.RemoveAll(tmp) }
		}
		env, caches, releaseCache, err := privateDirs(s, tmp)
		if err != nil {
			release()
			return nil, sandboxError("the helper: cannot create the cache directory: %v", errText(err))
		}
		releaseDirs := release
		release = func() { releaseCache(); releaseDirs() }
		a := &wire.Args{
			Namespaces: pr.namespaces,
			Grace:      grace,
			UID:        os.Getuid(),
			GID:        os.Getgid(),
			Landlock:   true,
			ReadDeny:   p.DenyRead,
			Secrets:    secretPaths(),
			Write:      append(append([]string(nil), p.AllowWrite...), tmp, caches),
			WriteDeny:  p.DenyWrite,
			NetDeny:    !pr.namespaces,
			DenyUnix:   !p.AllowAllUnixSockets,
			Processes:  p.Processes,
			OpenFiles:  p.OpenFiles,
			Memory:     p.Memory,
			BestEffort: p.BestEffort,
			Server:     append([]string{s.Path}, s.Argv...),
		}
		if px != nil {
			a.Proxy = px.socket()
		}
		var flags uintptr
		if pr.namespaces {
			flags = nsCloneflags
		}
		l, err := launch(helperPath(), a, env, flags, release)
		if l == nil {
			return l, err
		}
		started := l.Started
		l.Started = func() (any, error) {
			r, err := started()
			if err != nil {
				return nil, err
			}
			rep := r.(*Report)
			// What the library itself could not give, on top of what the
			// helper could not set up.
			var extra []string
			if !pr.namespaces {
				extra = append(extra, "namespaces: "+pr.nsErr)
				if len(p.AllowedDomains) > 0 {
					extra = append(extra, "the proxy: allowedDomains needs a network namespace")
				}
			}
			rep.Missing = append(append([]string(nil), extra...), rep.Missing...)
			return rep, nil
		}
		if px != nil {
			l.Note = px.Refusals
			l.Warnings = px.setWarn
		}
		return l, err
	}
}

func errText(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno.Error()
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
