//go:build tokenstores

package tokenstores

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	crand "crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/tests/internal/fixturebin"
)

const (
	tokenPeriod = 2 * time.Second // the strict server's access token period
	runFor      = 7 * time.Second // each phase's calling time
	startDelay  = 3 * time.Second // from spawning to the common start instant
)

var builds struct {
	once              sync.Once
	fixture, goWorker string
	cWorker           string
	removes           []func()
	err               error
}

// TestMain removes the binaries the tests built.
func TestMain(m *testing.M) {
	code := m.Run()
	for _, remove := range builds.removes {
		remove()
	}
	if builds.cWorker != "" {
		_ = os.Remove(builds.cWorker)
	}
	os.Exit(code)
}

func binaries(t *testing.T) (fixture, goWorker string) {
	t.Helper()
	builds.once.Do(func() {
		var remove func()
		if builds.fixture, remove, builds.err = fixturebin.Build("../fixtures/oauthfixture"); builds.err != nil {
			return
		}
		builds.removes = append(builds.removes, remove)
		if builds.goWorker, remove, builds.err = fixturebin.Build("./goworker"); builds.err == nil {
			builds.removes = append(builds.removes, remove)
		}
	})
	require.NoError(t, builds.err)
	return builds.fixture, builds.goWorker
}

// cWorker compiles cworker/cworker.c against the library make lib built.
func cWorker(t *testing.T) string {
	t.Helper()
	if builds.cWorker != "" {
		return builds.cWorker
	}
	build := filepath.Join(repoRoot(t), "build")
	if _, err := os.Stat(filepath.Join(build, "liblemonmcp.so")); err != nil {
		t.Fatal("the C library is not built: run make lib (make test-tokenstores does)")
	}
	bin := filepath.Join(os.TempDir(), fmt.Sprintf("tokenstores-cworker-%d", os.Getpid()))
	out, err := exec.Command("gcc", "-std=c11", "-O1", "-Wall", "-Werror", "-D_GNU_SOURCE", "-pthread",
		"-I"+filepath.Join(build, "include"), "-o", bin, filepath.Join("cworker", "cworker.c"),
		"-L"+build, "-llemonmcp", "-Wl,-rpath,"+build).CombinedOutput()
	require.NoError(t, err, "compiling cworker/cworker.c: %s", out)
	builds.cWorker = bin
	return bin
}

// repoRoot is the checkout this test module lives in.
func repoRoot(t *testing.T) string {
	abs, err := filepath.Abs("../..")
	require.NoError(t, err)
	return abs
}

// pythonEnv is the environment that imports the in-tree binding.
func pythonEnv(t *testing.T) []string {
	root := repoRoot(t)
	if _, err := os.Stat(filepath.Join(root, "bindings/python/lemonmcp/liblemonmcp.so")); err != nil {
		t.Fatal("the Python binding has no library: run make python-dev (make test-tokenstores does)")
	}
	return append(os.Environ(), "PYTHONPATH="+filepath.Join(root, "bindings/python"))
}

// exEbin is the Elixir binding's compiled application, with the NIF in its
// priv/ (make elixir-nif, a prerequisite of make test-tokenstores).
func exEbin(t *testing.T) string {
	ebin := filepath.Join(repoRoot(t), "bindings/elixir_nif/_build/test/lib/lemon_mcp/ebin")
	if _, err := os.Stat(filepath.Join(ebin, "lemon_mcp.app")); err != nil {
		t.Fatal("the Elixir binding is not built: run make elixir-nif (make test-tokenstores does)")
	}
	if _, err := os.Stat(filepath.Join(ebin, "../priv/lmcp_nif.so")); err != nil {
		t.Fatal("the Elixir binding has no NIF: run make elixir-nif (make test-tokenstores does)")
	}
	return ebin
}

func python() string {
	if p := os.Getenv("PYTHON"); p != "" {
		return p
	}
	return "python3"
}

// strictServer runs the strict authorization server + MCP server and
// returns its base URL.
func strictServer(t *testing.T, graceMS int, flags ...string) string {
	fixture, _ := binaries(t)
	base, stop, err := fixturebin.Serve(fixture, append([]string{"-strict-refresh", "-initial-refresh-token", "rt-0", "-client-secret=",
		"-token-period-ms", strconv.Itoa(int(tokenPeriod.Milliseconds())), "-expires-in", "0",
		"-reuse-grace-ms", strconv.Itoa(graceMS)}, flags...)...)
	require.NoError(t, err)
	t.Cleanup(stop)
	return base
}

type strictStats struct {
	Redemptions  int `json:"redemptions"`
	Reuses       int `json:"reuses"`
	Revocations  int `json:"revocations"`
	GraceAnswers int `json:"grace_answers"`
	Refused      int `json:"refused"`
	WrongKey     int `json:"wrong_key"`
}

func statsOf(t *testing.T, base string) strictStats {
	resp, err := http.Get(base + "/_strict")
	require.NoError(t, err)
	defer resp.Body.Close()
	var s strictStats
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&s))
	return s
}

// store is one shared store configuration under test.
type store struct {
	name string
	spec func(t *testing.T, phase string) map[string]any
}

func stores() []store {
	out := []store{{"file", func(t *testing.T, phase string) map[string]any {
		return map[string]any{"type": "file", "path": filepath.Join(t.TempDir(), phase+".json")}
	}}}
	for _, s := range []struct{ name, env string }{{"postgres", "LEMONMCP_TEST_POSTGRES_URL"}, {"redis", "LEMONMCP_TEST_REDIS_URL"}} {
		if url := os.Getenv(s.env); url != "" {
			out = append(out, store{s.name, func(t *testing.T, phase string) map[string]any {
				return map[string]any{"type": s.name, "url": url, "key": fmt.Sprintf("%s-%s-%d", t.Name(), phase, time.Now().UnixNano())}
			}})
		}
	}
	return out
}

func clientConfig(base string, tokenStore map[string]any) map[string]any {
	tokenStore["lease_ms"] = 1500
	return map[string]any{
		"transport": map[string]any{"type": "streamable_http", "url": base + "/mcp"},
		"timeouts":  map[string]any{"ready_ms": 30000, "call_ms": 30000},
		"auth":      map[string]any{"client_id": "lemon", "refresh_token": "rt-0", "token_store": tokenStore},
	}
}

func writeJSON(t *testing.T, dir, name string, v any) string {
	path := filepath.Join(dir, name)
	data, err := json.Marshal(v)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, data, 0o600))
	return path
}

// worker is one spawned process.
type worker struct {
	lang string
	cmd  *exec.Cmd
	out  strings.Builder // read once done is closed
	done chan struct{}   // closed when it exited; err is then its status
	err  error
}

func spawn(t *testing.T, lang string, cmd *exec.Cmd) *worker {
	w := &worker{lang: lang, cmd: cmd, done: make(chan struct{})}
	cmd.Stdout = &w.out
	cmd.Stderr = &w.out
	require.NoError(t, cmd.Start())
	go func() { w.err = cmd.Wait(); close(w.done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill() // no process outlives its test
		<-w.done
	})
	return w
}

// spawnEx starts the Elixir worker (exworker.exs: one BEAM, `processes`
// Elixir processes calling) and waits for its "ready" line: a BEAM boots
// slower than the other workers, so it learns the common start instant
// only then, from the line begin writes to its stdin. Stopped by PID when
// the test ends, whatever happens.
func spawnEx(t *testing.T, cfg string, processes int) (w *worker, begin func(start, until time.Time)) {
	cmd := exec.Command("elixir", "-pa", exEbin(t), "exworker.exs", cfg, strconv.Itoa(processes))
	// One scheduler that never spins idle: the suite has two loaded cores.
	cmd.Env = append(os.Environ(), "ELIXIR_ERL_OPTIONS=+S 1:1 +sbwt none +sbwtdcpu none +sbwtdio none")
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	w = &worker{lang: "elixir", cmd: cmd, done: make(chan struct{})}
	require.NoError(t, cmd.Start())
	spawned := time.Now()
	ready := make(chan struct{})
	go func() {
		scanner := bufio.NewScanner(stdout)
		wasReady := false
		for scanner.Scan() {
			if line := scanner.Text(); line == "ready" && !wasReady {
				close(ready)
				wasReady = true
			} else {
				w.out.WriteString(line + "\n")
			}
		}
		w.err = cmd.Wait() // after the last read: Wait closes the pipe
		w.out.WriteString(stderr.String())
		close(w.done)
	}()
	t.Cleanup(func() {
		_ = stdin.Close()
		_ = cmd.Process.Kill() // no BEAM outlives its test
		<-w.done
	})
	select {
	case <-ready:
		t.Logf("elixir worker ready %s after its spawn", time.Since(spawned).Round(time.Millisecond))
	case <-w.done:
		t.Fatalf("the elixir worker exited before it was ready: %v: %s", w.err, w.out.String())
	case <-time.After(2 * time.Minute):
		t.Fatal("the elixir worker was not ready after 2 minutes")
	}
	return w, func(start, until time.Time) {
		_, err := fmt.Fprintf(stdin, "%d %d\n", start.UnixMilli(), until.UnixMilli())
		require.NoError(t, err, "writing the start instant to the elixir worker")
		_ = stdin.Close()
	}
}

type result struct {
	OK     int      `json:"ok"`
	Failed int      `json:"failed"`
	Errors []string `json:"errors"`
}

// runPhase starts the workers at one instant, kills `kills` of them at
// random moments, runs the command line over and over meanwhile, and
// checks every survivor. A non-empty dpopKey (PEM) is every worker's
// auth.dpop.key_pem.
func runPhase(t *testing.T, base string, tokenStore map[string]any, kills int, dpopKey string) {
	_, goWorker := binaries(t)
	dir := t.TempDir()
	config := func() map[string]any {
		c := clientConfig(base, tokenStore)
		if dpopKey != "" {
			c["auth"].(map[string]any)["dpop"] = map[string]any{"key_pem": dpopKey}
		}
		return c
	}
	cfg := writeJSON(t, dir, "client.json", config())
	hostCfg := writeJSON(t, dir, "mcp.json", map[string]any{"mcpServers": map[string]any{"strict": config()}})
	// The host file spells the transport as url, the client file as
	// transport: rewrite the host entry.
	var host map[string]any
	data, _ := os.ReadFile(hostCfg)
	require.NoError(t, json.Unmarshal(data, &host))
	entry := host["mcpServers"].(map[string]any)["strict"].(map[string]any)
	delete(entry, "transport")
	entry["url"] = base + "/mcp"
	hostCfg = writeJSON(t, dir, "mcp.json", host)

	pyEnv := pythonEnv(t)
	// The BEAM first: the instant everyone starts at is fixed once it runs.
	exWorker, beginEx := spawnEx(t, cfg, 3)
	start := time.Now().Add(startDelay)
	until := start.Add(runFor)
	startMS, untilMS := strconv.FormatInt(start.UnixMilli(), 10), strconv.FormatInt(until.UnixMilli(), 10)
	t.Logf("spawning at %s", time.Now().Format("15:04:05.000"))
	cBin := cWorker(t)
	var workers []*worker
	for i := 0; i < 2; i++ {
		workers = append(workers, spawn(t, "go", exec.Command(goWorker, "-config", cfg, "-threads", "4", "-start-at", startMS, "-until", untilMS)))
		py := exec.Command(python(), "pyworker.py", cfg, "3", startMS, untilMS)
		py.Env = pyEnv
		workers = append(workers, spawn(t, "python", py))
		workers = append(workers, spawn(t, "c", exec.Command(cBin, cfg, "3", startMS, untilMS)))
	}
	beginEx(start, until)
	workers = append(workers, exWorker)

	// The command line: short-lived runs sharing the grant, one started
	// per token period from the common start (a run slower than a period
	// is followed at once), not back to back: the suite is CPU bound, and
	// each run still meets a token the others refresh.
	type cliResult struct {
		runs     int
		failures []string
	}
	cliDone := make(chan cliResult, 1)
	go func() {
		var r cliResult
		for next := start; next.Before(until); next = next.Add(tokenPeriod) {
			time.Sleep(time.Until(next)) // pacing, not a synchronization
			cmd := exec.Command(python(), "-m", "lemonmcp", "--config", hostCfg, "call", "strict__echo", "text=cli")
			cmd.Env = pyEnv
			out, err := cmd.CombinedOutput()
			r.runs++
			if err != nil {
				r.failures = append(r.failures, fmt.Sprintf("%v: %s", err, out))
			}
		}
		cliDone <- r
	}()

	// With kills, the BEAM is always one of the killed (it is the last
	// worker), the others are drawn at random.
	killed := map[*worker]bool{}
	victims := rand.Perm(len(workers) - 1)[:max(kills-1, 0)]
	if kills > 0 {
		victims = append(victims, len(workers)-1)
	}
	for _, i := range victims {
		w := workers[i]
		killed[w] = true
		at := start.Add(time.Duration(rand.Int64N(int64(runFor - time.Second))))
		t.Logf("killing the %s worker %s after the start", w.lang, at.Sub(start).Round(time.Millisecond))
		go func() {
			time.Sleep(time.Until(at))
			_ = w.cmd.Process.Signal(syscall.SIGKILL)
		}()
	}

	ctx, cancel := context.WithTimeout(context.Background(), startDelay+runFor+60*time.Second)
	defer cancel()
	for _, w := range workers {
		select {
		case <-w.done:
			if killed[w] {
				continue
			}
			r := requireAllCalls(t, w)
			t.Logf("%s worker: %d calls, done %s after the deadline", w.lang, r.OK, time.Since(until).Round(time.Millisecond))
		case <-ctx.Done():
			t.Fatalf("%s worker still running", w.lang)
		}
	}
	cli := <-cliDone
	t.Logf("command line: %d runs, done %s after the deadline", cli.runs, time.Since(until).Round(time.Millisecond))
	require.Empty(t, cli.failures, "every command-line run succeeds")
}

// requireAllCalls reads an exited worker's result line: it made calls and
// every one succeeded.
func requireAllCalls(t *testing.T, w *worker) result {
	require.NoError(t, w.err, "%s worker: %s", w.lang, w.out.String())
	line := w.out.String()
	if i := strings.LastIndex(strings.TrimSpace(line), "\n"); i >= 0 {
		line = line[i+1:]
	}
	var r result
	require.NoError(t, json.Unmarshal([]byte(strings.TrimSpace(line)), &r), "%s worker: %s", w.lang, w.out.String())
	require.Zero(t, r.Failed, "%s worker: every call succeeds: %v", w.lang, r.Errors)
	require.Positive(t, r.OK, "%s worker made no call", w.lang)
	return r
}

func checkServer(t *testing.T, base string) {
	s := statsOf(t, base)
	t.Logf("strict server: %+v", s)
	require.Zero(t, s.Reuses, "no refresh token redeemed twice")
	require.Zero(t, s.Revocations, "no grant revoked")
	require.Zero(t, s.Refused, "no dead refresh token presented")
	// One redemption per expiry: the first grant, then one per period
	// boundary of the run (plus the seconds of start-up and shut-down).
	expiries := int((startDelay+runFor)/tokenPeriod) + 2
	require.Positive(t, s.Redemptions)
	require.LessOrEqual(t, s.Redemptions, expiries, "about one redemption per expiry")
}

// TestSharedGrant: Go, C and Python processes with threads, a BEAM with
// Elixir processes, and command line runs, share one grant on each store;
// none redeems a refresh token twice. "with kills": processes are
// SIGKILLed at random moments (a holder may die between redeeming and
// committing), the BEAM and one other drawn at random, against a server
// that grants a reuse window as Okta's 30 s default does. "dpop": every
// process is given the same DPoP key, and the server binds the grant's
// tokens to it (oauthfixture -dpop).
func TestSharedGrant(t *testing.T) {
	for _, phase := range []struct {
		name           string
		graceMS, kills int
		dpop           bool
	}{{"all", 0, 0, false}, {"with kills", 30000, 2, false}, {"dpop", 0, 0, true}} {
		for _, st := range stores() {
			if phase.dpop && st.name != "file" {
				continue // the binding is the stores' business: one is enough
			}
			t.Run(phase.name+"/"+st.name, func(t *testing.T) {
				var flags []string
				key := ""
				if phase.dpop {
					flags, key = []string{"-dpop"}, dpopKeyPEM(t)
				}
				base := strictServer(t, phase.graceMS, flags...)
				runPhase(t, base, st.spec(t, strings.ReplaceAll(phase.name, " ", "-")), phase.kills, key)
				checkServer(t, base)
			})
		}
	}
}

// dpopKeyPEM is a new P-256 key as a SEC 1 PEM: the one key every process
// sharing a DPoP-bound grant must sign with.
func dpopKeyPEM(t *testing.T) string {
	key, err := ecdsa.GenerateKey(elliptic.P256(), crand.Reader)
	require.NoError(t, err)
	der, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	return string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}))
}

// TestWithoutSharedStoreTheGrantIsRevoked is the control: the same
// processes, each with its tokens in memory only, redeem the same refresh
// token and the strict server revokes the grant. (What the tests above
// prove does not hold by accident of timing.)
func TestWithoutSharedStoreTheGrantIsRevoked(t *testing.T) {
	_, goWorker := binaries(t)
	base := strictServer(t, 0)
	cfg := clientConfig(base, map[string]any{})
	delete(cfg["auth"].(map[string]any), "token_store") // the tokens in each process's memory only
	path := writeJSON(t, t.TempDir(), "client.json", cfg)
	start := time.Now().Add(startDelay)
	until := start.Add(2 * time.Second)
	var workers []*worker
	for i := 0; i < 3; i++ {
		workers = append(workers, spawn(t, "go", exec.Command(goWorker, "-config", path, "-threads", "2",
			"-start-at", strconv.FormatInt(start.UnixMilli(), 10), "-until", strconv.FormatInt(until.UnixMilli(), 10))))
	}
	for _, w := range workers {
		select {
		case <-w.done:
		case <-time.After(startDelay + time.Minute):
			t.Fatal("a worker is still running")
		}
	}
	s := statsOf(t, base)
	t.Logf("strict server: %+v", s)
	require.Positive(t, s.Reuses+s.Refused, "processes without a shared store redeem one refresh token more than once")
}
