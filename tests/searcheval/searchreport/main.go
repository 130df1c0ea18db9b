// Command searchreport prints the tool search's figures on real catalogues
// (see package searcheval): recall at 1, 3 and 5 over queries.json, the
// bytes of list_tools with every tool against the deferred list, and the
// time of one search of 1,000 tools. `make bench` runs it; -misses also
// lists the queries whose tools were not all in the top 5.
//
//	searchreport -fixture build/fixtures/mcpfixture [-runs 50] [-misses]
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/lemonmcp/lemonmcp/tests/searcheval"
)

func main() {
	fixture := flag.String("fixture", "", "the mcpfixture binary (a live server of the catalogue)")
	runs := flag.Int("runs", 50, "runs of each query in the 1,000-tool timing")
	misses := flag.Bool("misses", false, "list the queries whose tools were not all in the top 5")
	flag.Parse()
	if *fixture == "" || *runs < 1 {
		fmt.Fprintln(os.Stderr, "usage: searchreport -fixture PATH [-runs N] [-misses]")
		os.Exit(2)
	}
	if err := run(*fixture, *runs, *misses); err != nil {
		fmt.Fprintln(os.Stderr, "searchreport:", err)
		os.Exit(1)
	}
}

func run(fixture string, runs int, showMisses bool) error {
	tmp, err := os.MkdirTemp("", "searchreport")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	replay, err := searcheval.BuildReplayServer(tmp)
	if err != nil {
		return err
	}
	qs, err := searcheval.LoadQueries()
	if err != nil {
		return err
	}

	cfg, err := searcheval.RealConfig(replay, fixture, false)
	if err != nil {
		return err
	}
	h, closeHost, err := searcheval.Start(cfg)
	if err != nil {
		return err
	}
	fullBytes, tools, err := searcheval.ListBytes(h)
	if err != nil {
		closeHost()
		return err
	}
	outs, err := searcheval.Rank(h, qs)
	closeHost()
	if err != nil {
		return err
	}
	sum := searcheval.Summarize(outs)

	cfg, err = searcheval.RealConfig(replay, fixture, true)
	if err != nil {
		return err
	}
	h, closeHost, err = searcheval.Start(cfg)
	if err != nil {
		return err
	}
	deferredBytes, deferredTools, err := searcheval.ListBytes(h)
	closeHost()
	if err != nil {
		return err
	}

	cfg, err = searcheval.ThousandConfig(replay, true)
	if err != nil {
		return err
	}
	h, closeHost, err = searcheval.Start(cfg)
	if err != nil {
		return err
	}
	bigDeferredBytes, _, err := searcheval.ListBytes(h)
	closeHost()
	if err != nil {
		return err
	}
	cfg, err = searcheval.ThousandConfig(replay, false)
	if err != nil {
		return err
	}
	h, closeHost, err = searcheval.Start(cfg)
	if err != nil {
		return err
	}
	bigBytes, _, err := searcheval.ListBytes(h)
	if err != nil {
		closeHost()
		return err
	}
	timing, err := searcheval.TimeSearches(h, qs, runs)
	closeHost()
	if err != nil {
		return err
	}

	cats, _ := searcheval.Catalogues()
	fmt.Printf("Tool search on real catalogues (%d recorded servers + the live fixture: %d tools; %d queries)\n", len(cats), tools, len(qs))
	fmt.Printf("  %-10s %8s %8s\n", "", "recall", "hit")
	for i, k := range searcheval.Ks {
		fmt.Printf("  %-10s %8.3f %8.3f\n", fmt.Sprintf("at %d", k), sum.Recall[i], sum.Hit[i])
	}
	fmt.Printf("  list_tools JSON: %d bytes with every tool, %d bytes deferred (%d tool) — %.1f%% smaller\n",
		fullBytes, deferredBytes, deferredTools, 100*(1-float64(deferredBytes)/float64(fullBytes)))
	fmt.Printf("  list_tools JSON of %d tools: %d bytes with every tool, %d bytes deferred — %.1f%% smaller\n",
		timing.Tools, bigBytes, bigDeferredBytes, 100*(1-float64(bigDeferredBytes)/float64(bigBytes)))
	fmt.Printf("  one search of %d tools: median %.3f ms; slowest query (median of %d runs) %.3f ms (%q); slowest single run %.3f ms\n",
		timing.Tools, ms(timing.Median), timing.Runs, ms(timing.SlowestQuery), timing.SlowestQueryText, ms(timing.SlowestRun))
	if showMisses {
		for _, o := range outs {
			if o.Recall(5) < 1 {
				fmt.Printf("  miss: %q wants %s, got %s\n", o.Query.Query, strings.Join(o.Query.Want, ", "), strings.Join(o.Top, ", "))
			}
		}
	}
	return nil
}

func ms(d interface{ Microseconds() int64 }) float64 { return float64(d.Microseconds()) / 1000 }
