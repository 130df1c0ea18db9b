package sandbox

import (
	"errors"
	"flag"
	"strconv"
	"strings"
	"time"
)

// helperArgs is what the library tells the helper on its command line,
// ahead of "--" and the server's own path and argv. It is built by
// (*plan).argv and read back by parseHelperArgs; both live here so the
// two sides cannot drift.
type helperArgs struct {
	namespaces bool          // cloned into new namespaces: set them up, run as their init
	grace      time.Duration // how long descendants get between SIGTERM and SIGKILL
	uid, gid   int           // the identity the server runs as (namespaces only)
	readDeny   []string      // Landlock: no reads beneath these
	write      []string      // Landlock: writes allowed beneath these
	writeDeny  []string      // Landlock: except beneath these
	landlock   bool          // apply the file system rules
	netDeny    bool          // Landlock TCP rules with nothing allowed (no network namespace)
	denyUnix   bool          // the seccomp filter: no AF_UNIX socket for the server (seccomp.go)
	processes  int           // 0: no limit
	openFiles  int           // 0: no limit
	memory     int64         // bytes of address space, 0: no limit
	proxy      string        // the library's proxy socket, bridged to a loopback port (-ns)
	probe      bool          // set up, report what holds, exit
	status     bool          // descriptor 4 is the status pipe (status.go)
	server     []string      // path, then argv
}

type pathList struct{ list *[]string }

func (p pathList) String() string { return "" }
func (p pathList) Set(v string) error {
	*p.list = append(*p.list, v)
	return nil
}

func (a *helperArgs) argv() []string {
	out := []string{"-grace=" + strconv.FormatInt(a.grace.Milliseconds(), 10)}
	if a.namespaces {
		out = append(out, "-ns", "-uid="+strconv.Itoa(a.uid), "-gid="+strconv.Itoa(a.gid))
	}
	if a.landlock {
		out = append(out, "-landlock")
		for _, p := range a.readDeny {
			out = append(out, "-deny-read="+p)
		}
		for _, p := range a.write {
			out = append(out, "-write="+p)
		}
		for _, p := range a.writeDeny {
			out = append(out, "-deny-write="+p)
		}
	}
	if a.netDeny {
		out = append(out, "-deny-net")
	}
	if a.denyUnix {
		out = append(out, "-deny-unix-sockets")
	}
	if a.processes > 0 {
		out = append(out, "-processes="+strconv.Itoa(a.processes))
	}
	if a.openFiles > 0 {
		out = append(out, "-open-files="+strconv.Itoa(a.openFiles))
	}
	if a.memory > 0 {
		out = append(out, "-memory="+strconv.FormatInt(a.memory, 10))
	}
	if a.proxy != "" {
		out = append(out, "-proxy="+a.proxy)
	}
	if a.probe {
		out = append(out, "-probe")
	}
	if a.status {
		out = append(out, "-status")
	}
	out = append(out, "--")
	return append(out, a.server...)
}

func parseHelperArgs(args []string) (*helperArgs, error) {
	a := &helperArgs{}
	fs := flag.NewFlagSet("lemonmcp-sandbox", flag.ContinueOnError)
	graceMs := fs.Int64("grace", 2000, "milliseconds between SIGTERM and SIGKILL for descendants")
	fs.BoolVar(&a.namespaces, "ns", false, "running as init of new namespaces")
	fs.IntVar(&a.uid, "uid", 0, "the server's uid (with -ns)")
	fs.IntVar(&a.gid, "gid", 0, "the server's gid (with -ns)")
	fs.BoolVar(&a.landlock, "landlock", false, "apply Landlock file system rules")
	fs.Var(pathList{&a.readDeny}, "deny-read", "no reads beneath this path (repeatable)")
	fs.Var(pathList{&a.write}, "write", "writes allowed beneath this path (repeatable)")
	fs.Var(pathList{&a.writeDeny}, "deny-write", "no writes beneath this path (repeatable)")
	fs.BoolVar(&a.netDeny, "deny-net", false, "deny TCP bind and connect with Landlock")
	fs.BoolVar(&a.denyUnix, "deny-unix-sockets", false, "refuse the server new AF_UNIX sockets (seccomp)")
	fs.IntVar(&a.processes, "processes", 0, "process limit")
	fs.IntVar(&a.openFiles, "open-files", 0, "open file limit")
	fs.Int64Var(&a.memory, "memory", 0, "address space limit in bytes")
	fs.StringVar(&a.proxy, "proxy", "", "the egress proxy's Unix socket (with -ns)")
	fs.BoolVar(&a.probe, "probe", false, "report what can be enforced and exit")
	fs.BoolVar(&a.status, "status", false, "write how the server ended on descriptor 4")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	a.grace = time.Duration(*graceMs) * time.Millisecond
	a.server = fs.Args()
	if !a.probe && len(a.server) < 2 {
		return nil, errors.New("usage: lemonmcp-sandbox [options] -- /path/to/server argv0 [args...]")
	}
	for _, p := range append(append(append([]string(nil), a.readDeny...), a.write...), a.writeDeny...) {
		if !strings.HasPrefix(p, "/") {
			return nil, errors.New("paths must be absolute: " + p)
		}
	}
	return a, nil
}
