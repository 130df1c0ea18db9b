package searcheval

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/lemonmcp/lemonmcp/host"
)

// Query is one task of queries.json and the host tool names that answer it.
type Query struct {
	Query string   `json:"query"`
	Want  []string `json:"want"`
}

// Dir is this package's directory (catalogues/, queries.json): this
// file's, or, built with -trimpath (make sets it; the file's path is then
// the module's), the working directory of its test or of a tool run from
// tests/.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	if filepath.IsAbs(file) {
		return filepath.Dir(file)
	}
	for _, d := range []string{".", "searcheval"} {
		if _, err := os.Stat(filepath.Join(d, "queries.json")); err == nil {
			if abs, err := filepath.Abs(d); err == nil {
				return abs
			}
		}
	}
	return "."
}

// LoadQueries reads queries.json.
func LoadQueries() ([]Query, error) {
	raw, err := os.ReadFile(filepath.Join(Dir(), "queries.json"))
	if err != nil {
		return nil, err
	}
	var qs []Query
	if err := json.Unmarshal(raw, &qs); err != nil {
		return nil, fmt.Errorf("queries.json: %v", err)
	}
	return qs, nil
}

// Catalogues lists the recorded catalogues by server name.
func Catalogues() (map[string]string, error) {
	paths, err := filepath.Glob(filepath.Join(Dir(), "catalogues", "*.json"))
	if err != nil || len(paths) == 0 {
		return nil, fmt.Errorf("no recorded catalogues in %s", filepath.Join(Dir(), "catalogues"))
	}
	out := map[string]string{}
	for _, p := range paths {
		out[strings.TrimSuffix(filepath.Base(p), ".json")] = p
	}
	return out, nil
}

// BuildReplayServer compiles replayserver into dir.
func BuildReplayServer(dir string) (string, error) {
	bin := filepath.Join(dir, "replayserver")
	cmd := exec.Command("go", "build", "-o", bin, "./replayserver")
	cmd.Dir = Dir()
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building replayserver: %v: %s", err, out)
	}
	return bin, nil
}

// server is one mcpServers entry.
func server(command string, args ...string) map[string]any {
	return map[string]any{
		"command":  command,
		"args":     args,
		"protocol": map[string]any{"mode": "legacy"},
		"timeouts": map[string]any{"ready_ms": 20000, "close_grace_ms": 300},
	}
}

// RealConfig is a host of every recorded catalogue (one replay server
// each) and the live fixture server, with deferred (deferred_tools) or not.
func RealConfig(replay, fixture string, deferred bool) ([]byte, error) {
	cats, err := Catalogues()
	if err != nil {
		return nil, err
	}
	servers := map[string]any{"fixture": server(fixture)}
	for name, path := range cats {
		servers[name] = server(replay, path)
	}
	cfg := map[string]any{"mcpServers": servers}
	if deferred {
		cfg["deferred_tools"] = map[string]any{"always_loaded": []string{}}
	}
	return json.Marshal(cfg)
}

// ThousandConfig is a host of one replay server offering exactly 1,000
// tools: the recorded catalogues, repeated; with deferred_tools or not.
func ThousandConfig(replay string, deferred bool) ([]byte, error) {
	cats, err := Catalogues()
	if err != nil {
		return nil, err
	}
	args := []string{"-copies", "20", "-max", "1000"}
	names := make([]string, 0, len(cats))
	for name := range cats {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, n := range names {
		args = append(args, cats[n])
	}
	cfg := map[string]any{"mcpServers": map[string]any{"big": server(replay, args...)}}
	if deferred {
		cfg["deferred_tools"] = map[string]any{"always_loaded": []string{}}
	}
	return json.Marshal(cfg)
}

// Start parses, connects and waits for a host; close releases it.
func Start(cfg []byte) (h *host.Host, close func(), err error) {
	h, cerr := host.Parse(cfg, "searcheval")
	if cerr != nil {
		return nil, nil, fmt.Errorf("host config: %s", cerr.Message)
	}
	close = func() {
		h.Close(5 * time.Second)
		h.Free()
	}
	if cerr := h.Connect(); cerr != nil {
		close()
		return nil, nil, fmt.Errorf("connect: %s", cerr.Message)
	}
	if cerr := h.WaitReady(60 * time.Second); cerr != nil {
		close()
		return nil, nil, fmt.Errorf("wait ready: %s", cerr.Message)
	}
	var states map[string]struct {
		State     string `json:"state"`
		LastError string `json:"last_error"`
	}
	_ = json.Unmarshal(h.Servers(), &states)
	for name, s := range states {
		if s.State != host.StateReady {
			close()
			return nil, nil, fmt.Errorf("server %s is %s: %s", name, s.State, s.LastError)
		}
	}
	return h, close, nil
}

// Ks are the cut-offs recall is reported at.
var Ks = []int{1, 3, 5}

// Outcome is one query's ranking.
type Outcome struct {
	Query Query
	Top   []string // the first max(Ks) results
}

// Recall is |wanted ∩ top k| / |wanted|.
func (o Outcome) Recall(k int) float64 {
	found := 0
	for _, w := range o.Query.Want {
		if slices.Contains(o.Top[:min(k, len(o.Top))], w) {
			found++
		}
	}
	return float64(found) / float64(len(o.Query.Want))
}

// Hit reports whether one wanted tool is in the top k.
func (o Outcome) Hit(k int) bool { return o.Recall(k) > 0 }

// Rank runs every query through h.SearchTools.
func Rank(h *host.Host, qs []Query) ([]Outcome, error) {
	out := make([]Outcome, len(qs))
	for i, q := range qs {
		raw, err := h.SearchTools(q.Query, host.SearchOptions{Limit: Ks[len(Ks)-1]})
		if err != nil {
			return nil, fmt.Errorf("query %q: %s", q.Query, err.Message)
		}
		var doc struct {
			Results []struct {
				Name string `json:"name"`
			} `json:"results"`
		}
		if err := json.Unmarshal(raw, &doc); err != nil {
			return nil, err
		}
		out[i].Query = q
		for _, r := range doc.Results {
			out[i].Top = append(out[i].Top, r.Name)
		}
	}
	return out, nil
}

// Summary is the mean recall and hit rate at each of Ks.
type Summary struct {
	Recall, Hit []float64
}

// Summarize averages the outcomes.
func Summarize(outs []Outcome) Summary {
	s := Summary{Recall: make([]float64, len(Ks)), Hit: make([]float64, len(Ks))}
	for _, o := range outs {
		for i, k := range Ks {
			s.Recall[i] += o.Recall(k)
			if o.Hit(k) {
				s.Hit[i]++
			}
		}
	}
	for i := range Ks {
		s.Recall[i] /= float64(len(outs))
		s.Hit[i] /= float64(len(outs))
	}
	return s
}

// ListBytes is the size of list_tools' JSON and its number of tools.
func ListBytes(h *host.Host) (bytes, tools int, err error) {
	raw, cerr := h.ListTools()
	if cerr != nil {
		return 0, 0, fmt.Errorf("list_tools: %s", cerr.Message)
	}
	var doc struct {
		Tools []json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return 0, 0, err
	}
	return len(raw), len(doc.Tools), nil
}

// Timing is the time of one search, per query: the median of its runs,
// the slowest of those medians, and the slowest single run.
type Timing struct {
	Tools                int
	Median, SlowestQuery time.Duration
	SlowestRun           time.Duration
	SlowestQueryText     string
	Runs                 int
}

// TimeSearches runs each query runs times through h.SearchTools (the
// index is built by a first search, outside the timing).
func TimeSearches(h *host.Host, qs []Query, runs int) (Timing, error) {
	var t Timing
	_, n, err := ListBytes(h)
	if err != nil {
		return t, err
	}
	t.Tools, t.Runs = n, runs
	if _, cerr := h.SearchTools("warm up", host.SearchOptions{Limit: 5}); cerr != nil {
		return t, fmt.Errorf("search: %s", cerr.Message)
	}
	var medians []time.Duration
	for _, q := range qs {
		d := make([]time.Duration, runs)
		for i := range d {
			start := time.Now()
			if _, cerr := h.SearchTools(q.Query, host.SearchOptions{Limit: 5}); cerr != nil {
				return t, fmt.Errorf("search %q: %s", q.Query, cerr.Message)
			}
			d[i] = time.Since(start)
		}
		slices.Sort(d)
		m := d[len(d)/2]
		medians = append(medians, m)
		if m > t.SlowestQuery {
			t.SlowestQuery, t.SlowestQueryText = m, q.Query
		}
		t.SlowestRun = max(t.SlowestRun, d[len(d)-1])
	}
	slices.Sort(medians)
	t.Median = medians[len(medians)/2]
	return t, nil
}
