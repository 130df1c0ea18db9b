package sandbox

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/lemonmcp/lemonmcp/transport"
	"github.com/lemonmcp/lemonmcp/transport/stdio"
)

// Policy is what a confined server is granted. Reads are allowed except
// beneath DenyRead; writes are denied except beneath AllowWrite (and the
// server's private temporary and cache directories) minus DenyWrite; the
// network is closed. Paths are absolute, variables already resolved.
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
	// Required makes a server whose sandbox lacks any layer fail to start,
	// naming what is missing, rather than run with what is available.
	Required bool
}

// Report says what is enforced for a server, as lmcp_host_servers and a
// client's diagnostics show it.
type Report struct {
	Namespaces bool   `json:"namespaces"`
	Landlock   int    `json:"landlock"`
	Network    string `json:"network"`
	Proc       string `json:"proc"`
	NoNewPrivs bool   `json:"noNewPrivs"`
	Limits     bool   `json:"limits"`
	// Reaper is how the server's descendants are ended: "pid-namespace"
	// or "subreaper" ("none" without the helper).
	Reaper string `json:"reaper"`
	// UnixSockets is "denied" when the seccomp filter refuses the server
	// new AF_UNIX sockets, "allowed" otherwise.
	UnixSockets string   `json:"unixSockets"`
	Missing     []string `json:"missing,omitempty"`
}

// probe is what the helper could set up on this machine, learnt once per
// process by running it with -probe (a few milliseconds).
type probe struct {
	helper     bool
	namespaces bool
	proc       bool
	pidMax     bool
	nnp        bool
	landlock   int
	limits     bool
	seccomp    bool
}

var probed = sync.OnceValue(func() probe { return probeHelper(helperPath()) })

// probeHelper runs helper with -probe. The probe passes every flag a start
// may pass (-status among them), so a helper of another release that
// refuses one is reported missing, rather than failing every start.
func probeHelper(helper string) probe {
	if helper == "" {
		return probe{}
	}
	run := func(ns bool) (map[string]string, bool) {
		a := &helperArgs{probe: true, status: true, landlock: true, denyUnix: true, namespaces: ns, processes: 400, openFiles: 1024}
		cmd := exec.Command(helper, a.argv()...)
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
			return nil, false
		}
		kv := map[string]string{}
		sc := bufio.NewScanner(strings.NewReader(string(out)))
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), "="); ok {
				kv[k] = v
			}
		}
		return kv, true
	}
	kv, ok := run(true)
	ok = ok && kv["nnp"] != ""
	if !ok {
		if kv, ok = run(false); !ok || kv["nnp"] == "" {
			return probe{}
		}
	}
	abi, _ := strconv.Atoi(kv["landlock"])
	return probe{
		helper:     true,
		namespaces: kv["namespaces"] == "1",
		proc:       kv["proc"] == "1",
		pidMax:     kv["pidmax"] == "1",
		nnp:        kv["nnp"] == "1",
		landlock:   abi,
		limits:     kv["limits"] == "1",
		seccomp:    kv["seccomp"] == "1",
	}
}

// Report says what a server started under p gets on this machine.
func (p *Policy) Report() Report {
	pr := probed()
	r := Report{Landlock: pr.landlock, Namespaces: pr.namespaces, NoNewPrivs: pr.nnp, Limits: pr.limits}
	miss := func(what string) { r.Missing = append(r.Missing, what) }
	if !pr.helper {
		miss("the sandbox helper (" + HelperName + ")")
	}
	switch {
	case pr.namespaces:
		r.Reaper, r.Network = "pid-namespace", "none"
	case pr.helper:
		r.Reaper = "subreaper"
		if pr.landlock >= 4 {
			r.Network = "tcp-denied" // UDP stays open without a network namespace
		} else {
			r.Network = "host"
		}
		miss("user namespaces")
	default:
		r.Reaper, r.Network = "none", "host"
	}
	if pr.proc {
		r.Proc = "private"
	} else {
		r.Proc = "host"
		if pr.namespaces {
			miss("a private /proc")
		}
	}
	if pr.helper && pr.landlock == 0 {
		miss("Landlock")
	}
	if len(p.AllowedDomains) > 0 {
		if pr.namespaces {
			r.Network = "proxy"
		} else {
			miss("a network namespace for the allowedDomains proxy")
		}
	}
	r.UnixSockets = "allowed"
	switch {
	case p.AllowAllUnixSockets:
	case pr.seccomp:
		r.UnixSockets = "denied"
	case pr.helper:
		miss("a seccomp filter for Unix sockets")
	}
	if p.Processes > 0 && !pr.pidMax && os.Getuid() == 0 {
		miss("a process limit for root (per-namespace pid_max)")
	}
	return r
}

// Confine returns the launcher that runs a server under p. grace is the
// stdio transport's CloseGrace.
func Confine(p Policy, grace time.Duration) stdio.Launcher {
	return func(s stdio.Server) (*stdio.Launch, error) {
		rep := p.Report()
		if p.Required && len(rep.Missing) > 0 {
			e := transport.Errorf(transport.CodeTransport, "sandbox required but unavailable: %s",
				strings.Join(rep.Missing, "; "))
			e.Permanent = true
			return nil, e
		}
		pr := probed()
		if !pr.helper {
			return nil, nil // degraded to nothing: the report says so
		}
		tmp, err := os.MkdirTemp("", "lemonmcp-sandbox-")
		if err != nil {
			return nil, transport.Errorf(transport.CodeTransport, "cannot create the sandbox's temporary directory: %v", err)
		}
		release := func() { _ = os.RemoveAll(tmp) }
		var px *proxy
		if len(p.AllowedDomains) > 0 && pr.namespaces {
			if px, err = startProxy(domainRules{allowed: p.AllowedDomains, denied: p.DeniedDomains}); err != nil {
				release()
				return nil, transport.Errorf(transport.CodeTransport, "cannot start the sandbox's network proxy: %v", err)
			}
			release = func() { px.close(); _ = os.RemoveAll(tmp) }
		}
		env, caches, err := privateDirs(s, tmp)
		if err != nil {
			release()
			return nil, transport.Errorf(transport.CodeTransport, "cannot create the sandbox's cache directory: %v", err)
		}
		a := &helperArgs{
			namespaces: pr.namespaces,
			grace:      grace,
			uid:        os.Getuid(),
			gid:        os.Getgid(),
			landlock:   pr.landlock > 0,
			readDeny:   p.DenyRead,
			write:      append(append([]string(nil), p.AllowWrite...), tmp, caches),
			writeDeny:  p.DenyWrite,
			netDeny:    !pr.namespaces,
			denyUnix:   pr.seccomp && !p.AllowAllUnixSockets,
			processes:  p.Processes,
			openFiles:  p.OpenFiles,
			memory:     p.Memory,
			server:     append([]string{s.Path}, s.Argv...),
		}
		if px != nil {
			a.proxy = px.socket()
		}
		var flags uintptr
		if pr.namespaces {
			flags = nsCloneflags
		}
		l, err := launch(helperPath(), a, env, flags, release)
		if l != nil && px != nil {
			l.Note = px.Refusals
		}
		return l, err
	}
}

// privateDirs gives the server its private temporary directory and its
// cache directories, which npx and uvx need writable: per server (by its
// command line), kept across restarts under the user's cache directory.
func privateDirs(s stdio.Server, tmp string) (env []string, caches string, err error) {
	base, err := os.UserCacheDir()
	if err != nil {
		base = filepath.Join(os.TempDir(), "lemonmcp-cache-"+strconv.Itoa(os.Getuid()))
	}
	sum := sha256.Sum256([]byte(s.Path + "\x00" + strings.Join(s.Argv, "\x00")))
	caches = filepath.Join(base, "lemonmcp", "sandbox", hex.EncodeToString(sum[:8]))
	vars := map[string]string{
		"TMPDIR":           tmp,
		"HOME":             filepath.Join(caches, "home"),
		"NPM_CONFIG_CACHE": filepath.Join(caches, "npm"),
		"XDG_CACHE_HOME":   filepath.Join(caches, "cache"),
		"UV_CACHE_DIR":     filepath.Join(caches, "uv"),
	}
	for k, dir := range vars {
		if k != "TMPDIR" {
			if err := os.MkdirAll(dir, 0o700); err != nil {
				return nil, "", err
			}
		}
	}
	for _, kv := range s.Env {
		k, _, _ := strings.Cut(kv, "=")
		if _, ours := vars[k]; !ours {
			env = append(env, kv)
		}
	}
	for k, v := range vars {
		env = append(env, k+"="+v)
	}
	return env, caches, nil
}
