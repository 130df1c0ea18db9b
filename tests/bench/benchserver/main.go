// Command benchserver is the server side of `make bench`: the same two
// tools (echo and large) behind the official go-sdk server and behind a
// minimal hand-written one, over stdio or Streamable HTTP.
//
//	benchserver -server sdk|raw                      serves stdio
//	benchserver -server sdk|raw -http 127.0.0.1:0    serves HTTP; prints its URL
//
// Over HTTP the go-sdk server also serves the legacy HTTP+SSE transport
// (2024-11-05) under /sse beside Streamable HTTP's /mcp.
//
// The minimal server answers with fixed bytes and parses only the id, the
// method and the tool's name, so that a round trip measures the client. It
// is not a conformant server (tests use mcpfixture).
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	kind := flag.String("server", "raw", "sdk (the go-sdk server) or raw (minimal)")
	addr := flag.String("http", "", "serve Streamable HTTP on this address instead of stdio")
	flag.Parse()
	if *kind != "sdk" && *kind != "raw" {
		fmt.Fprintf(os.Stderr, "benchserver: -server must be sdk or raw, not %q\n", *kind)
		os.Exit(2)
	}
	if *addr == "" {
		if *kind == "sdk" {
			if err := sdkServer().Run(context.Background(), &mcp.StdioTransport{}); err != nil && err != io.EOF {
				os.Exit(1)
			}
			return
		}
		rawStdio()
		return
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchserver:", err)
		os.Exit(1)
	}
	var h http.Handler = http.HandlerFunc(rawHTTP)
	if *kind == "sdk" {
		s := sdkServer()
		mux := http.NewServeMux()
		mux.Handle("/mcp", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
		mux.Handle("/sse", mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return s }, nil))
		h = mux
	}
	fmt.Printf("http://%s/mcp\n", ln.Addr())
	os.Stdout.Sync()
	// The server lives until its parent closes stdin.
	go func() { io.Copy(io.Discard, os.Stdin); os.Exit(0) }()
	if err := http.Serve(ln, h); err != nil {
		os.Exit(1)
	}
}

type echoIn struct {
	Text string `json:"text"`
}

type largeIn struct {
	Bytes int `json:"bytes"`
}

func sdkServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "bench-sdk", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "large"}, func(_ context.Context, _ *mcp.CallToolRequest, in largeIn) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("x", in.Bytes)}}}, nil, nil
	})
	return s
}

// The minimal server's fixed answers.
const (
	initResult  = `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"bench-raw","version":"1"}}`
	listResult  = `{"tools":[{"name":"echo","inputSchema":{"type":"object"}},{"name":"large","inputSchema":{"type":"object"}}]}`
	echoResult  = `{"content":[{"type":"text","text":"hello"}]}`
	largeBytes  = 10 << 20
	notFoundErr = `{"code":-32601,"message":"method not found"}`
)

var largeResult = `{"content":[{"type":"text","text":"` + strings.Repeat("x", largeBytes) + `"}]}`

// answer returns the reply line to one message, or nil for a notification.
func answer(line []byte) []byte {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	if json.Unmarshal(line, &m) != nil || m.Method == "" || m.ID == nil {
		return nil
	}
	var result, failure string
	switch m.Method {
	case "initialize":
		result = initResult
	case "tools/list":
		result = listResult
	case "ping":
		result = `{}`
	case "tools/call":
		result = echoResult
		if m.Params.Name == "large" {
			result = largeResult
		}
	default:
		failure = notFoundErr
	}
	out := make([]byte, 0, len(result)+64)
	out = append(out, `{"jsonrpc":"2.0","id":`...)
	out = append(out, m.ID...)
	if failure != "" {
		out = append(out, `,"error":`...)
		out = append(out, failure...)
	} else {
		out = append(out, `,"result":`...)
		out = append(out, result...)
	}
	return append(out, '}')
}

func rawStdio() {
	in := bufio.NewReaderSize(os.Stdin, 1<<16)
	out := bufio.NewWriterSize(os.Stdout, 1<<16)
	for {
		line, err := in.ReadBytes('\n')
		if err != nil {
			return
		}
		if reply := answer(line); reply != nil {
			out.Write(reply)
			out.WriteByte('\n')
			out.Flush()
		}
	}
}

// rawHTTP answers every POST with a JSON body (202 for a notification); no
// session, no GET stream (405, which the specification allows).
func rawHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	reply := answer(body)
	if reply == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(reply)))
	w.Write(reply)
}
