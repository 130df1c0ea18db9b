// Command benchtable runs `make bench`: every client side by side against
// the same servers, alternating, and prints the table (also written to
// tests/bench/RESULTS.md). Each client is a separate program that prints
// one JSON line of figures (see tests/bench/README.md); this driver only
// starts servers and clients, and formats. Figures are for comparison
// within one run: the machines are shared and noisy, and nothing here
// checks a figure.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// client is one way of making calls.
type client struct {
	name  string
	argv  []string // the command before the common flags
	env   []string // added to the environment
	dir   string   // working directory, "" for the current one
	kind  string   // "floor", "ours", "peer" or "anchor" (the Python SDK: not a best peer)
	py    bool     // a LemonMCP Python row, compared with the anchors
	many  bool     // takes part in the N-simultaneous-clients table
	large bool     // takes part in the 10 MiB table
	noSSE bool     // speaks no legacy HTTP+SSE: left out of that group
}

// group is one transport and server pairing.
type group struct {
	transport, server string
	target            []string // -stdio CMD or -url URL
	sse               bool     // the legacy HTTP+SSE transport: clients with noSSE sit it out
}

// figures is one client's JSON line.
type figures map[string]float64

type options struct {
	bin, python, pyPath, exDir, lib, out, pyBench string
	rounds, n, par, pn, largeN                    int
	many                                          []int
	skip                                          map[string]bool
	pySDKs                                        pySDKFlag
	timeout                                       time.Duration
}

func main() {
	var o options
	var many, skip string
	flag.StringVar(&o.bin, "bin", "build/bench", "directory holding benchserver, benchclient, bench_host and tinyserver")
	flag.StringVar(&o.python, "python", "python3", "the Python interpreter")
	flag.StringVar(&o.pyPath, "pypath", "bindings/python", "the Python binding's directory (PYTHONPATH)")
	flag.StringVar(&o.exDir, "exdir", "bindings/elixir_nif", "the Elixir binding's mix project")
	flag.StringVar(&o.lib, "lib", "build/liblemonmcp.so.1", "liblemonmcp, for the Elixir binding")
	flag.StringVar(&o.out, "out", "tests/bench/RESULTS.md", "where the table is written")
	flag.StringVar(&o.pyBench, "pybench", "", "a shell command whose output (the Python binding's own bench) is appended")
	flag.IntVar(&o.rounds, "rounds", 3, "alternating rounds; each cell is the median")
	flag.IntVar(&o.n, "n", 2000, "sequential calls per client and round")
	flag.IntVar(&o.par, "par", 16, "calls in flight for the throughput figure")
	flag.IntVar(&o.pn, "pn", 4000, "calls for the throughput figure")
	flag.IntVar(&o.largeN, "large", 3, "10 MiB results per client")
	flag.StringVar(&many, "many", "1,100,1000", "numbers of simultaneous stdio clients")
	flag.StringVar(&skip, "skip", "", "comma-separated clients to leave out (python, elixir)")
	flag.Var(&o.pySDKs, "pysdk", "VERSION=PYTHON: a Python SDK release and the interpreter of its venv (repeatable)")
	flag.DurationVar(&o.timeout, "timeout", 3*time.Minute, "bound on one client run")
	var section, goBench, note string
	flag.StringVar(&section, "section", "", "instead of the full run: write the section of this title into -out (replacing it) from -gobench")
	flag.StringVar(&goBench, "gobench", "", "with -section: a file of go test -bench output")
	flag.StringVar(&note, "note", "", "with -section: a sentence added to the section's header")
	flag.Parse()
	if section != "" {
		if err := runSection(o.out, section, goBench, note); err != nil {
			fmt.Fprintln(os.Stderr, "benchtable:", err)
			os.Exit(1)
		}
		return
	}
	for _, s := range strings.Split(many, ",") {
		if v, err := strconv.Atoi(strings.TrimSpace(s)); err == nil && v > 0 {
			o.many = append(o.many, v)
		}
	}
	o.skip = map[string]bool{}
	for _, s := range strings.Split(skip, ",") {
		o.skip[strings.TrimSpace(s)] = true
	}
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "benchtable:", err)
		os.Exit(1)
	}
}

func abs(p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	return a
}

func clients(o options) []client {
	bc := abs(filepath.Join(o.bin, "benchclient"))
	cs := []client{
		{name: "floor", argv: []string{bc, "-client", "floor"}, kind: "floor", many: true, large: true, noSSE: true},
		{name: "LemonMCP, Go core", argv: []string{bc, "-client", "lemonmcp"}, kind: "ours", large: true},
		{name: "LemonMCP, C host", argv: []string{abs(filepath.Join(o.bin, "bench_host"))}, kind: "ours", many: true, large: true},
		// The same, its 16 calls in flight kept by one thread with queued calls
		// instead of 16 threads making blocking ones.
		{name: "LemonMCP, C host, queued", argv: []string{abs(filepath.Join(o.bin, "bench_host")), "-queue", "1"}, kind: "ours"},
		// The same with a telemetry handler set: what telemetry costs a call.
		{name: "LemonMCP, C host, telemetry", argv: []string{abs(filepath.Join(o.bin, "bench_host")), "-telemetry", "1"}, kind: "ours"},
		// The same blocking calls through lmcp_host_call_tool_sync, one server.
		{name: "LemonMCP, C host (multi-server host)", argv: []string{abs(filepath.Join(o.bin, "bench_host")), "-host", "1"}, kind: "ours", large: true},
	}
	if !o.skip["python"] {
		py := []string{o.python, abs("tests/bench/clients/pyclient.py")}
		env := []string{"LEMONMCP_PYTHONPATH=" + abs(o.pyPath), "PYTHONDONTWRITEBYTECODE=1"}
		cs = append(cs,
			client{name: "LemonMCP, Python sync", argv: append(append([]string{}, py...), "-client", "sync"), env: env, kind: "ours", py: true, large: true},
			client{name: "LemonMCP, Python async", argv: append(append([]string{}, py...), "-client", "async"), env: env, kind: "ours", py: true, large: true})
	}
	if !o.skip["elixir"] {
		cs = append(cs, client{name: "LemonMCP, Elixir", argv: []string{"mix", "run", abs("tests/bench/clients/exclient.exs")},
			env: []string{"LEMONMCP_LIB=" + abs(o.lib), "MIX_ENV=test"}, dir: abs(o.exDir), kind: "ours", large: true, noSSE: true})
	}
	cs = append(cs, pySDKClients(o)...)
	return append(cs,
		client{name: "go-sdk v1.8.0", argv: []string{bc, "-client", "go-sdk"}, kind: "peer", many: true, large: true},
		client{name: "mcp-go v1.2.1", argv: []string{bc, "-client", "mcp-go"}, kind: "peer", many: true, large: true})
}

// runClient runs one client program and parses its JSON line.
func runClient(o options, c client, args ...string) (figures, error) {
	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.argv[0], append(append([]string{}, c.argv[1:]...), args...)...)
	cmd.Env = append(os.Environ(), c.env...)
	cmd.Dir = c.dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%v: %s", err, lastLine(errb.String()))
	}
	// The JSON line is the last line (mix may print compilation notes).
	line := lastLine(out.String())
	var f figures
	if err := json.Unmarshal([]byte(line), &f); err != nil {
		return nil, fmt.Errorf("no JSON line in the output: %q", truncate(out.String(), 200))
	}
	return f, nil
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// httpServer starts a benchserver on a free port and returns its URL; it
// stops when stop is called (its stdin closes).
func httpServer(o options, kind string) (url string, stop func(), err error) {
	cmd := exec.Command(abs(filepath.Join(o.bin, "benchserver")), "-server", kind, "-http", "127.0.0.1:0")
	in, err := cmd.StdinPipe()
	if err != nil {
		return "", nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		in.Close()
		cmd.Wait()
		return "", nil, fmt.Errorf("the %s HTTP server did not start", kind)
	}
	go io.Copy(io.Discard, out)
	return strings.TrimSpace(line), func() { in.Close(); cmd.Wait() }, nil
}

func run(o options) error {
	start := time.Now()
	cs := clients(o)
	serverBin := abs(filepath.Join(o.bin, "benchserver"))
	groups := []group{
		{transport: "stdio", server: "go-sdk server", target: []string{"-stdio", serverBin + " -server sdk"}},
		{transport: "stdio", server: "minimal server", target: []string{"-stdio", serverBin + " -server raw"}},
	}
	for _, kind := range []string{"sdk", "raw"} {
		url, stop, err := httpServer(o, kind)
		if err != nil {
			return err
		}
		defer stop()
		name := map[string]string{"sdk": "go-sdk server", "raw": "minimal server"}[kind]
		groups = append(groups, group{transport: "Streamable HTTP", server: name, target: []string{"-url", url}})
		if kind == "sdk" {
			// The legacy transport beside it, on the same server process.
			groups = append(groups, group{transport: "legacy HTTP+SSE", server: name, target: []string{"-url", strings.TrimSuffix(url, "/mcp") + "/sse"}, sse: true})
		}
	}
	loadBefore := loadavg()

	// calls[g][c] holds one figures per round.
	calls := make([][][]figures, len(groups))
	errs := map[string]string{}
	for g := range calls {
		calls[g] = make([][]figures, len(cs))
	}
	common := []string{"-mode", "calls", "-n", strconv.Itoa(o.n), "-par", strconv.Itoa(o.par), "-pn", strconv.Itoa(o.pn)}
	for r := 0; r < o.rounds; r++ {
		for g, gr := range groups {
			// Alternating: each round starts with a different client, so
			// none always runs first (or last) on a warming machine.
			for k := range cs {
				i := (k + r + g) % len(cs)
				if gr.sse && cs[i].noSSE {
					continue
				}
				progress("round %d/%d  %s, %s  %s", r+1, o.rounds, gr.transport, gr.server, cs[i].name)
				f, err := runClient(o, cs[i], append(append([]string{}, common...), gr.target...)...)
				if err != nil {
					errs[key(g, i)] = err.Error()
					continue
				}
				calls[g][i] = append(calls[g][i], f)
			}
		}
	}

	large := make([][]figures, len(groups))
	for g, gr := range groups {
		large[g] = make([]figures, len(cs))
		for i, c := range cs {
			if !c.large || (gr.sse && c.noSSE) {
				continue
			}
			progress("10 MiB  %s, %s  %s", gr.transport, gr.server, c.name)
			f, err := runClient(o, c, append([]string{"-mode", "large", "-n", strconv.Itoa(o.largeN)}, gr.target...)...)
			if err != nil {
				errs["large"+key(g, i)] = err.Error()
				continue
			}
			large[g][i] = f
		}
	}

	tiny := abs(filepath.Join(o.bin, "tinyserver"))
	many := make([][]figures, len(o.many))
	for k, n := range o.many {
		many[k] = make([]figures, len(cs))
		for i, c := range cs {
			if !c.many {
				continue
			}
			progress("%d clients  %s", n, c.name)
			f, err := runClient(o, c, "-mode", "many", "-n", strconv.Itoa(n), "-stdio", tiny)
			if err != nil {
				errs["many"+key(k, i)] = err.Error()
				continue
			}
			many[k][i] = f
		}
	}

	starts := startRuns(o, tiny)

	var pyOut string
	if o.pyBench != "" {
		progress("the Python binding's own bench")
		out, err := exec.Command("sh", "-c", o.pyBench).CombinedOutput()
		pyOut = string(out)
		if err != nil {
			pyOut += "\n(failed: " + err.Error() + ")"
		}
	}

	var b strings.Builder
	header(&b, o, start, loadBefore)
	targetsTable(&b, groups, cs, calls)
	for g, gr := range groups {
		callsTable(&b, gr, cs, calls[g], errs, g, o)
	}
	pyAnchorTable(&b, groups, cs, calls)
	largeTable(&b, groups, cs, large, errs)
	manyTable(&b, o.many, cs, many, errs)
	startTable(&b, starts)
	if pyOut != "" {
		fmt.Fprintf(&b, "\n## The Python binding's own bench (bindings/python/bench/bench_call.py)\n\n```\n%s\n```\n", strings.TrimSpace(pyOut))
	}
	fmt.Fprintf(&b, "\nTotal run time %s; load average before %s, after %s.\n", time.Since(start).Round(time.Second), loadBefore, loadavg())
	fmt.Print(b.String())
	// The sections other targets own (make bench-tokenstores) stay.
	if old, err := os.ReadFile(o.out); err == nil {
		b.WriteString(keptSections(string(old)))
	}
	return os.WriteFile(o.out, []byte(b.String()), 0o644)
}

// startVariant is one way of starting a stdio server.
type startVariant struct {
	name string
	args []string // added to bench_host's
	env  []string
	f    figures
	err  string
}

// startRuns measures a stdio server's start (connect to ready, then close)
// directly, under the sandbox helper as a reaper, and confined, each
// round in turn.
func startRuns(o options, tiny string) []*startVariant {
	vs := []*startVariant{
		// A helper path that does not exist: the library starts the
		// server itself, as before the helper.
		{name: "direct (no helper)", env: []string{"LEMONMCP_SANDBOX_HELPER=/nonexistent"}},
		{name: "under the helper (reaper, the default)"},
		{name: "confined (sandbox {})", args: []string{"-sandbox", "{}"}},
		{name: "confined with allowedDomains (proxy)", args: []string{"-sandbox", `{"network":{"allowedDomains":["example.com"]}}`}},
	}
	host := client{argv: []string{abs(filepath.Join(o.bin, "bench_host"))}}
	for r := 0; r < o.rounds; r++ {
		for _, v := range vs {
			progress("start round %d/%d  %s", r+1, o.rounds, v.name)
			c := host
			c.env = v.env
			f, err := runClient(o, c, append([]string{"-mode", "start", "-n", "20", "-stdio", tiny}, v.args...)...)
			if err != nil {
				v.err = err.Error()
				continue
			}
			if v.f == nil || f["start_p50_ms"] < v.f["start_p50_ms"] {
				v.f = f // the best round: the least disturbed by the shared machine
			}
		}
	}
	return vs
}

func key(g, i int) string { return strconv.Itoa(g) + "/" + strconv.Itoa(i) }

func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench: "+format+"\n", args...)
}
