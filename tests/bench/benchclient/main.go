// Command benchclient is the Go side of `make bench`: it connects one client
// (the floor, LemonMCP's core, the go-sdk client or the mcp-go client) to a
// server, measures it, and prints one JSON line of figures, the same line
// the C, Python and Elixir hosts print (see tests/bench/README.md):
//
//	benchclient -client NAME -mode calls -n 2000 -par 16 -pn 4000 (-stdio "CMD ARGS" | -url URL)
//	benchclient -client NAME -mode large -n 5 (-stdio ... | -url ...)
//	benchclient -client NAME -mode many -n 1000 -stdio ...
//
// calls: connect time, sequential p50/p99 of tools/call echo, calls/s with
// par calls in flight, RSS after. large: median time of a 10 MiB result,
// peak RSS. many: n clients at once in this process, RSS and threads.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// pinnedVersion keeps every client on the same protocol revision.
const pinnedVersion = "2025-11-25"

// largeBytes is the size of the large tool's text.
const largeBytes = 10 << 20

// caller is one connected client.
type caller interface {
	echo() error
	large() error
	close()
}

type target struct {
	cmd   []string // stdio: the server's command line
	url   string   // HTTP: the endpoint
	stdio bool
}

// sse: the endpoint is the legacy HTTP+SSE transport's (benchserver serves
// it under /sse), not Streamable HTTP's.
func (t target) sse() bool { return strings.HasSuffix(t.url, "/sse") }

var clients = map[string]func(target) (caller, error){
	"floor":    connectFloor,
	"lemonmcp": connectLemon,
	"go-sdk":   connectGoSDK,
	"mcp-go":   connectMCPGo,
}

func main() {
	name := flag.String("client", "floor", "floor, lemonmcp, go-sdk or mcp-go")
	mode := flag.String("mode", "calls", "calls, large or many")
	stdio := flag.String("stdio", "", "the server's command line (space-separated)")
	url := flag.String("url", "", "the server's Streamable HTTP endpoint")
	n := flag.Int("n", 2000, "sequential calls (calls), results (large) or clients (many)")
	par := flag.Int("par", 16, "calls in flight for the throughput figure")
	pn := flag.Int("pn", 4000, "calls for the throughput figure")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the measured calls here")
	flag.Parse()
	connect, ok := clients[*name]
	if !ok || (*stdio == "") == (*url == "") {
		fmt.Fprintln(os.Stderr, "benchclient: need a known -client and exactly one of -stdio and -url")
		os.Exit(2)
	}
	tg := target{url: *url, stdio: *stdio != ""}
	if tg.stdio {
		tg.cmd = strings.Fields(*stdio)
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fail(err)
		}
		pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	var out map[string]any
	var err error
	switch *mode {
	case "calls":
		out, err = measureCalls(connect, tg, *n, *par, *pn)
	case "large":
		out, err = measureLarge(connect, tg, *n)
	case "many":
		out, err = measureMany(connect, tg, *n)
	default:
		err = fmt.Errorf("unknown -mode %q", *mode)
	}
	if err != nil {
		pprof.StopCPUProfile()
		fail(err)
	}
	b, _ := json.Marshal(out)
	fmt.Println(string(b))
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "benchclient:", err)
	os.Exit(1)
}

// cpuTime is the CPU time (user + system) the process has used, every
// thread: over a run of calls, divided by the calls, it is what one call
// costs the client however loaded the machine is.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func us(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }

func measureCalls(connect func(target) (caller, error), tg target, n, par, pn int) (map[string]any, error) {
	t0 := time.Now()
	c, err := connect(tg)
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	connectTime := time.Since(t0)
	defer c.close()
	// The first call is measured too: it is what a short-lived host pays.
	t0 = time.Now()
	if err := c.echo(); err != nil {
		return nil, err
	}
	first := time.Since(t0)
	for i := 0; i < min(n/10, 200); i++ {
		if err := c.echo(); err != nil {
			return nil, err
		}
	}
	lat := make([]time.Duration, n)
	cpu0 := cpuTime()
	for i := range lat {
		t0 := time.Now()
		if err := c.echo(); err != nil {
			return nil, err
		}
		lat[i] = time.Since(t0)
	}
	cpuCall := us(cpuTime()-cpu0) / float64(n)
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	if p, ok := c.(interface{ parallel() }); ok {
		p.parallel()
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var perr error
	t0 = time.Now()
	cpu0 = cpuTime()
	for w := 0; w < par; w++ {
		wg.Add(1)
		go func(k int) {
			defer wg.Done()
			for i := 0; i < k; i++ {
				if err := c.echo(); err != nil {
					mu.Lock()
					perr = err
					mu.Unlock()
					return
				}
			}
		}(pn / par)
	}
	wg.Wait()
	wall := time.Since(t0)
	pcpuCall := us(cpuTime()-cpu0) / float64(pn/par*par)
	if perr != nil {
		return nil, perr
	}
	return map[string]any{
		"connect_us": us(connectTime), "first_us": us(first),
		"p50_us": us(lat[n/2]), "p99_us": us(lat[n*99/100]),
		"cps": float64(pn/par*par) / wall.Seconds(), "rss_kb": procStatus("VmRSS"), "threads": procStatus("Threads"),
		"cpu_us": cpuCall, "pcpu_us": pcpuCall,
	}, nil
}

func measureLarge(connect func(target) (caller, error), tg target, n int) (map[string]any, error) {
	c, err := connect(tg)
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	defer c.close()
	if err := c.large(); err != nil { // warm-up: buffers grow once
		return nil, err
	}
	ts := make([]time.Duration, n)
	for i := range ts {
		t0 := time.Now()
		if err := c.large(); err != nil {
			return nil, err
		}
		ts[i] = time.Since(t0)
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i] < ts[j] })
	return map[string]any{"large_ms": float64(ts[n/2].Microseconds()) / 1e3, "hwm_kb": procStatus("VmHWM")}, nil
}

// measureMany holds n clients at once, each having made one call: the
// host's memory and threads with n servers.
func measureMany(connect func(target) (caller, error), tg target, n int) (map[string]any, error) {
	base := procStatus("VmRSS")
	cs := make([]caller, 0, n)
	closeAll := func() {
		var wg sync.WaitGroup
		for _, c := range cs {
			wg.Add(1)
			go func() { defer wg.Done(); c.close() }()
		}
		wg.Wait()
		cs = nil
	}
	defer closeAll()
	t0 := time.Now()
	var mu sync.Mutex
	var wg sync.WaitGroup
	var cerr error
	// Connect in batches, as a host starting many servers would.
	sem := make(chan struct{}, 32)
	for i := 0; i < n; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			c, err := connect(tg)
			if err == nil {
				err = c.echo()
			}
			mu.Lock()
			defer mu.Unlock()
			if c != nil {
				cs = append(cs, c)
			}
			if err != nil && cerr == nil {
				cerr = err
			}
		}()
	}
	wg.Wait()
	if cerr != nil {
		return nil, cerr
	}
	elapsed := time.Since(t0)
	time.Sleep(200 * time.Millisecond) // let idle threads settle
	rss := procStatus("VmRSS")
	threads := tasks()
	closeAll()
	return map[string]any{"clients": n, "rss_kb": rss, "rss_per_client_kb": float64(rss-base) / float64(n),
		"threads": threads, "connect_all_ms": float64(elapsed.Milliseconds()), "children_left": childrenLeft()}, nil
}

// childrenLeft counts this process's children, zombies included, once the
// clients are closed (waiting up to two seconds for them to go): what a
// client leaves behind.
func childrenLeft() int {
	self := strconv.Itoa(os.Getpid())
	count := func() int {
		ents, err := os.ReadDir("/proc")
		if err != nil {
			return -1
		}
		n := 0
		for _, e := range ents {
			if e.Name()[0] < '0' || e.Name()[0] > '9' {
				continue
			}
			b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
			if err != nil {
				continue
			}
			// After the last ')': state ppid ...
			if i := strings.LastIndexByte(string(b), ')'); i >= 0 {
				if f := strings.Fields(string(b[i+1:])); len(f) > 1 && f[1] == self {
					n++
				}
			}
		}
		return n
	}
	deadline := time.Now().Add(2 * time.Second)
	for {
		n := count()
		if n <= 0 || time.Now().After(deadline) {
			return n
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// procStatus reads one kB or count field of /proc/self/status.
func procStatus(field string) int {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return -1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			v, _ := strconv.Atoi(strings.Fields(rest)[0])
			return v
		}
	}
	return -1
}

// tasks counts this process's OS threads.
func tasks() int {
	ents, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return -1
	}
	return len(ents)
}

var errNoResult = errors.New("the reply carried no result")
