package main

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"runtime"
	"sort"
	"strings"
	"time"
)

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "?"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "?"
}

func kernel() string {
	out, err := exec.Command("uname", "-r").Output()
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(out))
}

func header(b *strings.Builder, o options, start time.Time, load string) {
	host, _ := os.Hostname()
	fmt.Fprintf(b, "# LemonMCP side by side (`make bench`)\n\n")
	fmt.Fprintf(b, "Run %s on `%s`: %s, %d CPUs, Linux %s, %s.\n", start.UTC().Format("2006-01-02 15:04 UTC"), host, cpuModel(), runtime.NumCPU(), kernel(), runtime.Version())
	fmt.Fprintf(b, "Load average at the start: %s. The machine may be shared: compare ratios within this run, not absolute figures across runs.\n\n", load)
	fmt.Fprintf(b, "Every client is its own process, calling `tools/call` \"echo\" on the same server with protocol 2025-11-25 pinned; "+
		"clients alternate in %d rounds and each cell is the median of the rounds. "+
		"p50/p99: %d sequential calls; calls/s: %d calls with %d in flight on one client (the C host's rows: as many threads making blocking calls; "+
		"\"C host, queued\": one thread keeping them in flight with lmcp_client_call_queued, each completion popped from the queue starting the next); "+
		"RSS: the client process after the calls; "+
		"connect: process start (stdio) or first POST (HTTP) to ready. "+
		"The floor is the least code that speaks the protocol (hand-written JSON lines over stdio, one POST per call over HTTP); "+
		"×floor and ×best peer are ratios (for p50, RSS and connect lower is better; for calls/s higher is better), "+
		"the best peer being the better of go-sdk and mcp-go on that figure. "+
		"CPU µs/call: the client process's user + system time over the sequential calls (and over the %d-way ones) divided by the calls (getrusage), "+
		"which a loaded machine inflates less than latency. Figures are never asserted.\n", o.rounds, o.n, o.pn, o.par, o.par)
}

func median(fs []figures, k string) (float64, bool) {
	var v []float64
	for _, f := range fs {
		if x, ok := f[k]; ok {
			v = append(v, x)
		}
	}
	if len(v) == 0 {
		return 0, false
	}
	sort.Float64s(v)
	if len(v)%2 == 1 {
		return v[len(v)/2], true
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2, true
}

func num(v float64, ok bool, digits int) string {
	if !ok {
		return "–"
	}
	return fmt.Sprintf("%.*f", digits, v)
}

func ratio(v, ref float64, ok bool) string {
	if !ok || ref == 0 || math.IsNaN(ref) {
		return "–"
	}
	return fmt.Sprintf("%.2f×", v/ref)
}

// best is the better of the peers' figures on k.
func best(cs []client, fs [][]figures, k string, higher bool) (float64, bool) {
	var v float64
	found := false
	for i, c := range cs {
		if c.kind != "peer" {
			continue
		}
		x, ok := median(fs[i], k)
		if !ok {
			continue
		}
		if !found || (higher && x > v) || (!higher && x < v) {
			v, found = x, true
		}
	}
	return v, found
}

func floorOf(cs []client, fs [][]figures, k string) (float64, bool) {
	for i, c := range cs {
		if c.kind == "floor" {
			return median(fs[i], k)
		}
	}
	return 0, false
}

func callsTable(b *strings.Builder, gr group, cs []client, fs [][]figures, errs map[string]string, g int, o options) {
	fmt.Fprintf(b, "\n## %s, %s\n\n", gr.transport, gr.server)
	fmt.Fprintf(b, "| client | connect ms | first call µs | p50 µs | p50 − floor µs | p99 µs | CPU µs/call | calls/s (%d-way) | CPU µs/call (%d-way) | RSS MiB | p50 ×floor | p50 ×best peer | CPU ×floor | CPU ×best peer | calls/s ×floor | calls/s ×best peer | RSS ×best peer | connect ×best peer |\n", o.par, o.par)
	fmt.Fprintf(b, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	fp50, fok := floorOf(cs, fs, "p50_us")
	fcps, _ := floorOf(cs, fs, "cps")
	bp50, _ := best(cs, fs, "p50_us", false)
	bcps, _ := best(cs, fs, "cps", true)
	brss, _ := best(cs, fs, "rss_kb", false)
	bcon, _ := best(cs, fs, "connect_us", false)
	fcpu, _ := floorOf(cs, fs, "cpu_us")
	bcpu, _ := best(cs, fs, "cpu_us", false)
	var failed []string
	for i, c := range cs {
		if gr.sse && c.noSSE {
			continue
		}
		if len(fs[i]) == 0 {
			fmt.Fprintf(b, "| %s | failed |||||||||||||||||\n", c.name)
			if e, ok := errs[key(g, i)]; ok {
				failed = append(failed, c.name+": "+truncate(e, 300))
			}
			continue
		}
		con, cok := median(fs[i], "connect_us")
		first, firstOK := median(fs[i], "first_us")
		p50, pok := median(fs[i], "p50_us")
		p99, p99ok := median(fs[i], "p99_us")
		cps, cpsok := median(fs[i], "cps")
		rss, rok := median(fs[i], "rss_kb")
		cpu, cpuok := median(fs[i], "cpu_us")
		pcpu, pcpuok := median(fs[i], "pcpu_us")
		over := "–"
		if pok && fok {
			over = fmt.Sprintf("%+.1f", p50-fp50)
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", c.name,
			num(con/1e3, cok, 1), num(first, firstOK, 0), num(p50, pok, 1), over, num(p99, p99ok, 0), num(cpu, cpuok, 1), num(cps, cpsok, 0), num(pcpu, pcpuok, 1), num(rss/1024, rok, 1),
			ratio(p50, fp50, pok), ratio(p50, bp50, pok), ratio(cpu, fcpu, cpuok), ratio(cpu, bcpu, cpuok), ratio(cps, fcps, cpsok), ratio(cps, bcps, cpsok), ratio(rss, brss, rok), ratio(con, bcon, cok))
		if len(fs[i]) < o.rounds {
			if e, ok := errs[key(g, i)]; ok {
				failed = append(failed, fmt.Sprintf("%s: %d of %d rounds failed (%s)", c.name, o.rounds-len(fs[i]), o.rounds, truncate(e, 300)))
			}
		}
	}
	for _, f := range failed {
		fmt.Fprintf(b, "\n- %s", f)
	}
	if len(failed) > 0 {
		b.WriteString("\n")
	}
}

func largeTable(b *strings.Builder, groups []group, cs []client, fs [][]figures, errs map[string]string) {
	fmt.Fprintf(b, "\n## One 10 MiB result (`large` tool), median of the calls after a warm-up\n\n| client |")
	for _, g := range groups {
		fmt.Fprintf(b, " %s, %s: ms (peak RSS MiB) |", g.transport, g.server)
	}
	b.WriteString("\n|---|")
	for range groups {
		b.WriteString("---:|")
	}
	b.WriteString("\n")
	for i, c := range cs {
		if !c.large {
			continue
		}
		fmt.Fprintf(b, "| %s |", c.name)
		for g := range groups {
			f := fs[g][i]
			if groups[g].sse && c.noSSE {
				fmt.Fprintf(b, " – |")
				continue
			}
			if f == nil {
				fmt.Fprintf(b, " failed |")
				continue
			}
			// The best peer's time on this server, for the ratio.
			peer := math.NaN()
			for j, pc := range cs {
				if pc.kind == "peer" && fs[g][j] != nil && (math.IsNaN(peer) || fs[g][j]["large_ms"] < peer) {
					peer = fs[g][j]["large_ms"]
				}
			}
			fmt.Fprintf(b, " %.1f (%.0f) %s |", f["large_ms"], f["hwm_kb"]/1024, strings.TrimSuffix("("+ratio(f["large_ms"], peer, true)+" best peer)", "(– best peer)"))
		}
		b.WriteString("\n")
	}
	var failed []string
	for k, e := range errs {
		if strings.HasPrefix(k, "large") {
			failed = append(failed, truncate(e, 200))
		}
	}
	sort.Strings(failed)
	for _, f := range failed {
		fmt.Fprintf(b, "\n- failed: %s", f)
	}
	if len(failed) > 0 {
		b.WriteString("\n")
	}
}

func manyTable(b *strings.Builder, ns []int, cs []client, fs [][]figures, errs map[string]string) {
	fmt.Fprintf(b, "\n## N simultaneous stdio clients in one host process (a tiny C server each; each client made one call)\n\n"+
		"KiB per client is the host's RSS growth over its start divided by N: for the C host at N=1 that is mostly the Go runtime starting inside liblemonmcp. "+
		"OS threads: the host's, while all N are connected. Children left: the host's child processes (zombies included) two seconds after closing every client.\n\n")
	fmt.Fprintf(b, "| client | N | host RSS MiB | KiB per client | OS threads | connect all ms | children left after close |\n|---|---:|---:|---:|---:|---:|---:|\n")
	for i, c := range cs {
		if !c.many {
			continue
		}
		for k, n := range ns {
			f := fs[k][i]
			if f == nil {
				fmt.Fprintf(b, "| %s | %d | failed: %s |||||\n", c.name, n, truncate(errs["many"+key(k, i)], 120))
				continue
			}
			fmt.Fprintf(b, "| %s | %d | %.1f | %.0f | %.0f | %.0f | %.0f |\n", c.name, n, f["rss_kb"]/1024, f["rss_per_client_kb"], f["threads"], f["connect_all_ms"], f["children_left"])
		}
	}
}

func startTable(b *strings.Builder, vs []*startVariant) {
	fmt.Fprintf(b, "\n## Starting a stdio server: direct, under the sandbox helper, confined (C host, a tiny C server)\n\n"+
		"From lmcp_client_new to ready, 20 starts after one warm-up, the best round's median and 90th percentile; "+
		"\"more\" is the median over the direct start (goal for confined: at most 20 ms more).\n\n")
	fmt.Fprintf(b, "| start | p50 ms | p90 ms | more ms |\n|---|---:|---:|---:|\n")
	var base float64
	for i, v := range vs {
		if v.f == nil {
			fmt.Fprintf(b, "| %s | failed: %s |||\n", v.name, truncate(v.err, 120))
			continue
		}
		if i == 0 {
			base = v.f["start_p50_ms"]
		}
		fmt.Fprintf(b, "| %s | %.2f | %.2f | %+.2f |\n", v.name, v.f["start_p50_ms"], v.f["start_p90_ms"], v.f["start_p50_ms"]-base)
	}
}

// target is one goal of issue #41, checked against this run's medians: a
// LemonMCP row's figure over a reference row's, at most (or, for calls/s,
// at least) the bound.
type target struct {
	what           string
	group          string // "transport, server"
	row, ref       string // client names
	key            string // the figure
	bound          float64
	higherIsBetter bool
}

var targets = []target{
	{"HTTP p50 at most mcp-go's", "Streamable HTTP, minimal server", "LemonMCP, C host", "mcp-go v1.2.1", "p50_us", 1, false},
	{"HTTP CPU per call at most 0.5× mcp-go's", "Streamable HTTP, minimal server", "LemonMCP, C host", "mcp-go v1.2.1", "cpu_us", 0.5, false},
	{"HTTP 16-way at least 1.5× mcp-go's", "Streamable HTTP, minimal server", "LemonMCP, C host", "mcp-go v1.2.1", "cps", 1.5, true},
	{"HTTP 16-way at least 1.5× mcp-go's, queued calls", "Streamable HTTP, minimal server", "LemonMCP, C host, queued", "mcp-go v1.2.1", "cps", 1.5, true},
	{"legacy SSE p50 at most mcp-go's", "legacy HTTP+SSE, go-sdk server", "LemonMCP, C host", "mcp-go v1.2.1", "p50_us", 1, false},
	{"legacy SSE CPU per call at most mcp-go's", "legacy HTTP+SSE, go-sdk server", "LemonMCP, C host", "mcp-go v1.2.1", "cpu_us", 1, false},
	{"Python sync CPU per call at most 3× the C host's", "stdio, minimal server", "LemonMCP, Python sync", "LemonMCP, C host", "cpu_us", 3, false},
	{"Python sync p50 at most 1.5× the C host's", "stdio, minimal server", "LemonMCP, Python sync", "LemonMCP, C host", "p50_us", 1.5, false},
	{"Python async 16-way at least 0.5× the C host's", "stdio, minimal server", "LemonMCP, Python async", "LemonMCP, C host", "cps", 0.5, true},
	// The same against a C host that keeps its calls in flight as the asyncio
	// client does (one thread, the queue), for comparison.
	{"Python async 16-way at least 0.5× the C host's, queued calls", "stdio, minimal server", "LemonMCP, Python async", "LemonMCP, C host, queued", "cps", 0.5, true},
}

// targetsTable prints the machine's mode (the floor's sequential p50) and
// each target of issue #41 with this run's ratio: figures of one run,
// reported, never asserted.
func targetsTable(b *strings.Builder, groups []group, cs []client, calls [][][]figures) {
	find := func(gname, cname, key string) (float64, bool) {
		for g, gr := range groups {
			if gr.transport+", "+gr.server != gname {
				continue
			}
			for i, c := range cs {
				if c.name == cname {
					return median(calls[g][i], key)
				}
			}
		}
		return 0, false
	}
	fmt.Fprintf(b, "\n## The machine's mode, and the per-call targets (issue #41)\n\n")
	b.WriteString("The floor's sequential p50 in this run (a 2-vCPU virtual machine is either in its fast mode, where the threads of a call wake each other on one vCPU, or in its slow one, where each wake-up crosses to a halted vCPU: docs/abi-cost.md):")
	for g, gr := range groups {
		for i, c := range cs {
			if c.kind == "floor" {
				if v, ok := median(calls[g][i], "p50_us"); ok {
					fmt.Fprintf(b, " %s, %s %.1f µs;", gr.transport, gr.server, v)
				}
			}
		}
	}
	b.WriteString(" load average " + loadavg() + " at the end.\n\n")
	b.WriteString("| target | transport, server | row | reference | row's figure | reference's | ratio | met |\n|---|---|---|---|---:|---:|---:|---|\n")
	for _, t := range targets {
		v, ok := find(t.group, t.row, t.key)
		r, rok := find(t.group, t.ref, t.key)
		if !ok || !rok || r == 0 {
			fmt.Fprintf(b, "| %s | %s | %s | %s | – | – | – | not measured |\n", t.what, t.group, t.row, t.ref)
			continue
		}
		q := v / r
		met := q <= t.bound
		if t.higherIsBetter {
			met = q >= t.bound
		}
		verdict := "no"
		if met {
			verdict = "yes"
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %.1f | %.1f | %.2f× | %s |\n", t.what, t.group, t.row, t.ref, v, r, q, verdict)
	}
}
