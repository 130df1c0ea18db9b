package wire

import (
	"errors"
	"flag"
	"strconv"
	"strings"
	"time"
)

// HelperName is the helper executable's file name.
const HelperName = "lemonmcp-sandbox"

// LifelineFD is the descriptor on which the helper finds its end of the
// lifeline pipe (stdio.Launch.Lifeline holds the other end); StatusFD the
// write end of the status pipe (status.go).
const (
	LifelineFD = 3
	StatusFD   = 4
)

// ExitSetupFailed is the helper's exit status when it could not start the
// server at all (the shell's "command cannot be executed" is 126; 125 is
// the convention of env and friends for "the wrapper failed").
const ExitSetupFailed = 125

// Args is what the library tells the helper on its command line, ahead of
// "--" and the server's own path and argv. Argv writes it and ParseArgs
// reads it back: both live here so the two sides cannot drift.
type Args struct {
	Namespaces bool          // cloned into new namespaces: set them up, run as their init
	Grace      time.Duration // how long descendants get between SIGTERM and SIGKILL
	UID, GID   int           // the identity the server runs as (namespaces only)
	ReadDeny   []string      // Landlock: no reads beneath these
	// Secrets are denied as ReadDeny is, and also when they do not exist
	// yet: a token store written after the server started must not be
	// readable to it either.
	Secrets   []string
	Write     []string // Landlock: writes allowed beneath these
	WriteDeny []string // Landlock: except beneath these
	Landlock  bool     // apply the file system rules
	NetDeny   bool     // Landlock TCP rules with nothing allowed (no network namespace)
	DenyUnix  bool     // the seccomp filter: no AF_UNIX socket for the server
	Processes int      // 0: no limit
	OpenFiles int      // 0: no limit
	Memory    int64    // bytes of writable memory, 0: no limit
	Proxy     string   // the library's proxy socket, bridged to a loopback port (-ns)
	// BestEffort ("required": false) records a step that fails in the
	// report's missing list and goes on; without it the first failure
	// ends the start (a failure record, exit ExitSetupFailed).
	BestEffort bool
	Probe      bool     // set up, report what holds, exit
	Status     bool     // StatusFD is the status pipe
	Server     []string // path, then argv
}

type pathList struct{ list *[]string }

func (p pathList) String() string { return "" }
func (p pathList) Set(v string) error {
	*p.list = append(*p.list, v)
	return nil
}

// Argv is the helper's command line for a.
func (a *Args) Argv() []string {
	out := []string{"-grace=" + strconv.FormatInt(a.Grace.Milliseconds(), 10)}
	if a.Namespaces {
		out = append(out, "-ns", "-uid="+strconv.Itoa(a.UID), "-gid="+strconv.Itoa(a.GID))
	}
	if a.Landlock {
		out = append(out, "-landlock")
		for _, p := range a.ReadDeny {
			out = append(out, "-deny-read="+p)
		}
		for _, p := range a.Secrets {
			out = append(out, "-secret="+p)
		}
		for _, p := range a.Write {
			out = append(out, "-write="+p)
		}
		for _, p := range a.WriteDeny {
			out = append(out, "-deny-write="+p)
		}
	}
	if a.NetDeny {
		out = append(out, "-deny-net")
	}
	if a.DenyUnix {
		out = append(out, "-deny-unix-sockets")
	}
	if a.Processes > 0 {
		out = append(out, "-processes="+strconv.Itoa(a.Processes))
	}
	if a.OpenFiles > 0 {
		out = append(out, "-open-files="+strconv.Itoa(a.OpenFiles))
	}
	if a.Memory > 0 {
		out = append(out, "-memory="+strconv.FormatInt(a.Memory, 10))
	}
	if a.Proxy != "" {
		out = append(out, "-proxy="+a.Proxy)
	}
	if a.BestEffort {
		out = append(out, "-best-effort")
	}
	if a.Probe {
		out = append(out, "-probe")
	}
	if a.Status {
		out = append(out, "-status")
	}
	out = append(out, "--")
	return append(out, a.Server...)
}

// ParseArgs reads the helper's command line (without its argv[0]).
func ParseArgs(args []string) (*Args, error) {
	a := &Args{}
	fs := flag.NewFlagSet(HelperName, flag.ContinueOnError)
	graceMs := fs.Int64("grace", 2000, "milliseconds between SIGTERM and SIGKILL for descendants")
	fs.BoolVar(&a.Namespaces, "ns", false, "running as init of new namespaces")
	fs.IntVar(&a.UID, "uid", 0, "the server's uid (with -ns)")
	fs.IntVar(&a.GID, "gid", 0, "the server's gid (with -ns)")
	fs.BoolVar(&a.Landlock, "landlock", false, "apply Landlock file system rules")
	fs.Var(pathList{&a.ReadDeny}, "deny-read", "no reads beneath this path (repeatable)")
	fs.Var(pathList{&a.Secrets}, "secret", "no reads beneath this path, existing or not (repeatable)")
	fs.Var(pathList{&a.Write}, "write", "writes allowed beneath this path (repeatable)")
	fs.Var(pathList{&a.WriteDeny}, "deny-write", "no writes beneath this path (repeatable)")
	fs.BoolVar(&a.NetDeny, "deny-net", false, "deny TCP bind and connect with Landlock")
	fs.BoolVar(&a.DenyUnix, "deny-unix-sockets", false, "refuse the server new AF_UNIX sockets (seccomp)")
	fs.IntVar(&a.Processes, "processes", 0, "process limit")
	fs.IntVar(&a.OpenFiles, "open-files", 0, "open file limit")
	fs.Int64Var(&a.Memory, "memory", 0, "writable memory limit in bytes")
	fs.StringVar(&a.Proxy, "proxy", "", "the egress proxy's Unix socket (with -ns)")
	fs.BoolVar(&a.BestEffort, "best-effort", false, "report a step that fails and go on, instead of failing the start")
	fs.BoolVar(&a.Probe, "probe", false, "report what can be enforced and exit")
	fs.BoolVar(&a.Status, "status", false, "write the setup report and how the server ended on descriptor 4")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	a.Grace = time.Duration(*graceMs) * time.Millisecond
	a.Server = fs.Args()
	if !a.Probe && len(a.Server) < 2 {
		return nil, errors.New("usage: " + HelperName + " [options] -- /path/to/server argv0 [args...]")
	}
	for _, p := range append(append(append(append([]string(nil), a.ReadDeny...), a.Secrets...), a.Write...), a.WriteDeny...) {
		if !strings.HasPrefix(p, "/") {
			return nil, errors.New("paths must be absolute: " + p)
		}
	}
	return a, nil
}
