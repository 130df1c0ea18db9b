package main

// The Python users' anchor: the official Python SDK's client (one row per
// release) against the same servers, and a table of LemonMCP's Python rows
// as ratios to it. The SDK rows are not peers: the best-peer columns stay
// the Go SDKs', so adding the anchor changes no other figure.

import (
	"fmt"
	"path/filepath"
	"strings"
)

// pySDK is one Python SDK release and the interpreter of the venv that
// holds it.
type pySDK struct{ version, python string }

// pySDKFlag collects -pysdk VERSION=PYTHON flags, in order.
type pySDKFlag []pySDK

func (f *pySDKFlag) String() string {
	var s []string
	for _, p := range *f {
		s = append(s, p.version+"="+p.python)
	}
	return strings.Join(s, ",")
}

func (f *pySDKFlag) Set(v string) error {
	version, python, ok := strings.Cut(v, "=")
	if !ok || version == "" || python == "" {
		return fmt.Errorf("want VERSION=PYTHON (a Python SDK release and its venv's interpreter), got %q", v)
	}
	*f = append(*f, pySDK{version, python})
	return nil
}

// pySDKClients are the anchor rows, unless -skip names pysdk.
func pySDKClients(o options) []client {
	if o.skip["pysdk"] {
		return nil
	}
	var cs []client
	for _, p := range o.pySDKs {
		cs = append(cs, client{name: "Python SDK mcp " + p.version, argv: []string{p.python, abs(filepath.Join("tests", "bench", "clients", "pysdk.py"))},
			env: []string{"PYTHONDONTWRITEBYTECODE=1"}, kind: "anchor", large: true, noSSE: true})
	}
	return cs
}

// pyAnchorTable shows each LemonMCP Python row's figures as ratios to each
// Python SDK release's, per transport and server: p50 (lower is better),
// calls/s with the in-flight calls (higher is better), RSS and connect
// (lower is better).
func pyAnchorTable(b *strings.Builder, groups []group, cs []client, calls [][][]figures) {
	var anchors, rows []int
	for i, c := range cs {
		switch {
		case c.kind == "anchor":
			anchors = append(anchors, i)
		case c.py:
			rows = append(rows, i)
		}
	}
	if len(anchors) == 0 || len(rows) == 0 {
		return
	}
	fmt.Fprintf(b, "\n## LemonMCP's Python rows against the official Python SDK\n\n"+
		"Each LemonMCP Python row's median over the same rounds divided by the Python SDK client's (`ClientSession.call_tool`, "+
		"P tasks on one event loop for calls/s). Both SDK releases offer only their newest handshake version, 2025-11-25, "+
		"and their client checks that the server agreed to it. For p50, RSS and connect lower is better; for calls/s higher is better.\n\n")
	metrics := []struct{ key, title string }{{"p50_us", "p50"}, {"cps", "calls/s"}, {"rss_kb", "RSS"}, {"connect_us", "connect"}}
	b.WriteString("| transport, server | client |")
	sep := "|---|---|"
	for _, m := range metrics {
		for _, a := range anchors {
			fmt.Fprintf(b, " %s ×%s |", m.title, strings.TrimPrefix(cs[a].name, "Python SDK "))
			sep += "---:|"
		}
	}
	b.WriteString("\n" + sep + "\n")
	for g, gr := range groups {
		for _, i := range rows {
			fmt.Fprintf(b, "| %s, %s | %s |", gr.transport, gr.server, cs[i].name)
			for _, m := range metrics {
				v, ok := median(calls[g][i], m.key)
				for _, a := range anchors {
					ref, refOK := median(calls[g][a], m.key)
					if !refOK {
						b.WriteString(" – |")
						continue
					}
					fmt.Fprintf(b, " %s |", ratio(v, ref, ok))
				}
			}
			b.WriteString("\n")
		}
	}
}
