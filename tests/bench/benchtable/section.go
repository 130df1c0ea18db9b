package main

// Sections of RESULTS.md that another make target owns: `benchtable
// -section TITLE -gobench FILE` turns `go test -bench` output into a
// table and replaces (or appends) the section of that title in -out,
// between marker comments; the full run (make bench) keeps every such
// section when it rewrites the file, so a table in RESULTS.md always
// comes from its make target.

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"
)

// benchLine is one result line of go test -bench: name (without the
// -GOMAXPROCS suffix), iterations, ns/op.
var benchLine = regexp.MustCompile(`^(Benchmark\S+?)(?:-\d+)?\s+(\d+)\s+([0-9.]+) ns/op`)

// goBenchRuns reads go test -bench output: the ns/op of every run, by
// benchmark name, and the names in first-seen order.
func goBenchRuns(r io.Reader) (map[string][]float64, []string, error) {
	runs := map[string][]float64{}
	var order []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		m := benchLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		ns, err := strconv.ParseFloat(m[3], 64)
		if err != nil {
			return nil, nil, err
		}
		if _, ok := runs[m[1]]; !ok {
			order = append(order, m[1])
		}
		runs[m[1]] = append(runs[m[1]], ns)
	}
	return runs, order, sc.Err()
}

func medianOf(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func quantileOf(v []float64, q float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s[int(q*float64(len(s)-1)+0.5)]
}

// goBenchTable is the markdown of one section: a row per benchmark with
// the median, the 10th and 90th percentiles and the range of its runs,
// in ms, and the median minus the "memory" row's of its group (the rows
// that share the name up to its last "/"): the store's own cost.
func goBenchTable(title, note string, runs map[string][]float64, order []string, now time.Time) string {
	var b strings.Builder
	host, _ := os.Hostname()
	fmt.Fprintf(&b, "## %s\n\n", title)
	fmt.Fprintf(&b, "Run %s on `%s`: %s, %d CPUs, Linux %s, %s; load average %s.", now.UTC().Format("2006-01-02 15:04 UTC"),
		host, cpuModel(), runtime.NumCPU(), kernel(), runtime.Version(), loadavg())
	if note != "" {
		fmt.Fprintf(&b, " %s", note)
	}
	b.WriteString(" Each cell is over the runs of `go test -bench` (ms per operation); figures are never asserted.\n\n")
	base := map[string]float64{}
	group := func(name string) string { return name[:strings.LastIndex(name, "/")+1] }
	for _, name := range order {
		if strings.HasSuffix(name, "/memory") {
			base[group(name)] = medianOf(runs[name])
		}
	}
	b.WriteString("| benchmark | runs | median ms | median − memory ms | p10 ms | p90 ms | min ms | max ms |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, name := range order {
		v := runs[name]
		med := medianOf(v)
		s := append([]float64(nil), v...)
		sort.Float64s(s)
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s | %s | %s |\n", strings.TrimPrefix(name, "Benchmark"), len(v),
			ms(med), ms(med-base[group(name)]), ms(quantileOf(v, 0.1)), ms(quantileOf(v, 0.9)), ms(s[0]), ms(s[len(s)-1]))
	}
	return b.String()
}

func ms(ns float64) string { return strconv.FormatFloat(ns/1e6, 'f', 3, 64) }

func sectionStart(title string) string { return "<!-- section: " + title + " -->" }
func sectionEnd(title string) string   { return "<!-- end section: " + title + " -->" }

var sectionMarker = regexp.MustCompile(`(?s)<!-- section: ([^>]*?) -->\n.*?<!-- end section: ([^>]*?) -->\n?`)

// replaceSection puts body as the section title of doc: in place of the
// section of that title, or at the end.
func replaceSection(doc, title, body string) string {
	block := sectionStart(title) + "\n" + strings.TrimRight(body, "\n") + "\n" + sectionEnd(title) + "\n"
	for _, loc := range sectionMarker.FindAllStringSubmatchIndex(doc, -1) {
		if doc[loc[2]:loc[3]] == title {
			return doc[:loc[0]] + block + doc[loc[1]:]
		}
	}
	if doc != "" && !strings.HasSuffix(doc, "\n\n") {
		doc = strings.TrimRight(doc, "\n") + "\n\n"
	}
	return doc + block
}

// keptSections are the marked sections of doc, for a rewrite to keep.
func keptSections(doc string) string {
	var b strings.Builder
	for _, m := range sectionMarker.FindAllString(doc, -1) {
		b.WriteString("\n")
		b.WriteString(strings.TrimRight(m, "\n") + "\n")
	}
	return b.String()
}

// runSection is the -section mode.
func runSection(out, title, goBench, note string) error {
	f, err := os.Open(goBench)
	if err != nil {
		return err
	}
	defer f.Close()
	runs, order, err := goBenchRuns(f)
	if err != nil {
		return err
	}
	if len(order) == 0 {
		return fmt.Errorf("no benchmark result in %s", goBench)
	}
	body := goBenchTable(title, note, runs, order, time.Now())
	fmt.Print(body)
	old, err := os.ReadFile(out)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	return os.WriteFile(out, []byte(replaceSection(string(old), title, body)), 0o644)
}
