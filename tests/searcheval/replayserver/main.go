// Command replayserver is an MCP server over stdio that offers the tools of
// recorded tools/list results (tests/searcheval/catalogues/*.json), so that
// the tool search is measured through a real host on real servers' tool
// definitions without installing those servers. It speaks the initialize
// handshake (2024-11-05 to 2025-11-25), answers tools/list with every tool
// on one page and ping; a tool call is refused (only the catalogue is
// replayed). With -modern it speaks 2026-07-28 instead (server/discover,
// no initialize) and its tools/list carries no ttlMs, as the Python SDK
// 2.x servers (mcp-server-time, mcp-server-fetch) do.
//
//	replayserver [-modern] [-copies N] [-max M] catalogue.json...
//
// -copies N offers each tool N times (copies after the first get the name
// suffix _cK), -max M keeps the first M tools: a catalogue of a given size
// made of real tools.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"slices"
)

type catalogue struct {
	ServerInfo json.RawMessage  `json:"serverInfo"`
	Tools      []map[string]any `json:"tools"`
}

var versions = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

const modernVersion = "2026-07-28"

func main() {
	copies := flag.Int("copies", 1, "offer each tool this many times")
	maxTools := flag.Int("max", 0, "offer at most this many tools (0: all)")
	modern := flag.Bool("modern", false, "speak 2026-07-28 (server/discover), tools/list without ttlMs")
	flag.Parse()
	if flag.NArg() == 0 || *copies < 1 {
		fmt.Fprintln(os.Stderr, "usage: replayserver [-copies N] [-max M] catalogue.json...")
		os.Exit(2)
	}
	var tools []map[string]any
	info := json.RawMessage(`{"name":"replay","version":"1"}`)
	for _, path := range flag.Args() {
		raw, err := os.ReadFile(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, "replayserver:", err)
			os.Exit(1)
		}
		var c catalogue
		if err := json.Unmarshal(raw, &c); err != nil {
			fmt.Fprintf(os.Stderr, "replayserver: %s: %v\n", path, err)
			os.Exit(1)
		}
		if flag.NArg() == 1 && len(c.ServerInfo) > 0 {
			info = c.ServerInfo
		}
		tools = append(tools, c.Tools...)
	}
	var offered []map[string]any
	for k := 0; k < *copies; k++ {
		for _, t := range tools {
			c := make(map[string]any, len(t))
			for key, v := range t {
				c[key] = v
			}
			if k > 0 {
				c["name"] = fmt.Sprintf("%v_c%d", t["name"], k)
			}
			offered = append(offered, c)
		}
	}
	if *maxTools > 0 && len(offered) > *maxTools {
		offered = offered[:*maxTools]
	}
	serve(info, offered, *modern)
}

type request struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		ProtocolVersion string `json:"protocolVersion"`
	} `json:"params"`
}

func serve(info json.RawMessage, tools []map[string]any, modern bool) {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 64<<20)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		var req request
		if json.Unmarshal(in.Bytes(), &req) != nil || len(req.ID) == 0 {
			continue // a notification, or not JSON
		}
		reply := map[string]any{"jsonrpc": "2.0", "id": req.ID}
		switch {
		case modern && req.Method == "server/discover":
			reply["result"] = map[string]any{"supportedVersions": []string{modernVersion}, "capabilities": map[string]any{"tools": map[string]any{}},
				"_meta": map[string]any{"io.modelcontextprotocol/serverInfo": info}}
		case modern && req.Method == "initialize":
			reply["error"] = map[string]any{"code": -32022, "message": "this server speaks only " + modernVersion,
				"data": map[string]any{"supported": []string{modernVersion}}}
		case req.Method == "initialize":
			v := req.Params.ProtocolVersion
			if !slices.Contains(versions, v) {
				v = versions[0]
			}
			reply["result"] = map[string]any{"protocolVersion": v, "capabilities": map[string]any{"tools": map[string]any{}}, "serverInfo": info}
		case req.Method == "tools/list":
			reply["result"] = map[string]any{"tools": tools}
		case req.Method == "ping":
			reply["result"] = map[string]any{}
		default:
			reply["error"] = map[string]any{"code": -32601, "message": "replayserver offers only tools/list: " + req.Method}
		}
		if err := out.Encode(reply); err != nil {
			os.Exit(1)
		}
	}
}
