package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strconv"
	"sync"
)

// The floor client: the least code that speaks the protocol. Over stdio,
// hand-written JSON lines and one reader goroutine that hands each reply to
// its caller; over HTTP, one POST per call. It checks only that a reply
// carries a result.

const (
	floorInit = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"` + pinnedVersion +
		`","capabilities":{},"clientInfo":{"name":"floor","version":"1"}}}`
	floorInitialized = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	echoParams       = `{"name":"echo","arguments":{"text":"hello"}}`
)

var largeParams = `{"name":"large","arguments":{"bytes":` + strconv.Itoa(largeBytes) + `}}`

func callLine(id uint64, params string) []byte {
	b := make([]byte, 0, 96+len(params))
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = strconv.AppendUint(b, id, 10)
	b = append(b, `,"method":"tools/call","params":`...)
	b = append(b, params...)
	return append(b, "}\n"...)
}

func checkReply(reply []byte) error {
	if !bytes.Contains(reply, []byte(`"result"`)) {
		return fmt.Errorf("%w: %.200s", errNoResult, reply)
	}
	return nil
}

func connectFloor(tg target) (caller, error) {
	if tg.stdio {
		return connectFloorStdio(tg.cmd)
	}
	if tg.sse() {
		return nil, errors.New("the floor speaks Streamable HTTP only, not the legacy HTTP+SSE transport")
	}
	return connectFloorHTTP(tg.url)
}

// floorStdio reads replies on the calling goroutine while calls are
// sequential (nothing less is possible) and through one dispatching reader
// goroutine once parallel is called.
type floorStdio struct {
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Reader
	wmu  sync.Mutex
	mu   sync.Mutex
	next uint64
	wait map[uint64]chan []byte
	dead chan struct{} // closed when the dispatching reader ends
	par  bool
}

func connectFloorStdio(argv []string) (*floorStdio, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	f := &floorStdio{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 64<<10), wait: map[uint64]chan []byte{}, next: 1}
	if _, err := io.WriteString(in, floorInit+"\n"); err != nil {
		return nil, err
	}
	if _, err := f.out.ReadBytes('\n'); err != nil {
		return nil, fmt.Errorf("the server exited during initialize")
	}
	if _, err := io.WriteString(in, floorInitialized+"\n"); err != nil {
		return nil, err
	}
	return f, nil
}

// parallel starts the dispatching reader: calls may overlap from now on.
func (f *floorStdio) parallel() {
	f.par = true
	f.dead = make(chan struct{})
	go f.read()
}

// read hands each reply line to the caller waiting for its id.
func (f *floorStdio) read() {
	defer close(f.dead)
	for {
		line, err := f.out.ReadBytes('\n')
		if err != nil {
			return
		}
		i := bytes.Index(line, []byte(`"id":`))
		if i < 0 {
			continue
		}
		rest := line[i+5:]
		j := bytes.IndexAny(rest, ",}")
		if j < 0 {
			continue
		}
		id, err := strconv.ParseUint(string(bytes.TrimSpace(rest[:j])), 10, 64)
		if err != nil {
			continue
		}
		f.mu.Lock()
		ch := f.wait[id]
		delete(f.wait, id)
		f.mu.Unlock()
		if ch != nil {
			ch <- line
		}
	}
}

func (f *floorStdio) call(params string) error {
	if !f.par {
		line := callLine(f.next, params)
		f.next++
		if _, err := f.in.Write(line); err != nil {
			return err
		}
		reply, err := f.out.ReadBytes('\n')
		if err != nil {
			return fmt.Errorf("the server exited")
		}
		return checkReply(reply)
	}
	ch := make(chan []byte, 1)
	f.mu.Lock()
	id := f.next
	f.next++
	f.wait[id] = ch
	f.mu.Unlock()
	line := callLine(id, params)
	f.wmu.Lock()
	_, err := f.in.Write(line)
	f.wmu.Unlock()
	if err != nil {
		return err
	}
	select {
	case reply := <-ch:
		return checkReply(reply)
	case <-f.dead:
		return fmt.Errorf("the server exited")
	}
}

func (f *floorStdio) echo() error  { return f.call(echoParams) }
func (f *floorStdio) large() error { return f.call(largeParams) }
func (f *floorStdio) close() {
	f.in.Close()
	if f.par {
		<-f.dead
	}
	f.cmd.Wait()
}

type floorHTTP struct {
	url     string
	client  *http.Client
	session string
	mu      sync.Mutex
	next    uint64
}

func connectFloorHTTP(url string) (*floorHTTP, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 64
	f := &floorHTTP{url: url, client: &http.Client{Transport: tr}, next: 1}
	resp, err := f.post([]byte(floorInit))
	if err != nil {
		return nil, err
	}
	f.session = resp.Header.Get("Mcp-Session-Id")
	if _, err := f.reply(resp); err != nil {
		return nil, err
	}
	resp, err = f.post([]byte(floorInitialized))
	if err != nil {
		return nil, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return f, nil
}

func (f *floorHTTP) post(body []byte) (*http.Response, error) {
	req, err := http.NewRequest(http.MethodPost, f.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if f.session != "" {
		req.Header.Set("Mcp-Session-Id", f.session)
		req.Header.Set("MCP-Protocol-Version", pinnedVersion)
	}
	resp, err := f.client.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		resp.Body.Close()
		return nil, fmt.Errorf("HTTP status %d", resp.StatusCode)
	}
	return resp, nil
}

// reply reads a JSON body or the data of an SSE stream's events.
func (f *floorHTTP) reply(resp *http.Response) ([]byte, error) {
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if bytes.HasPrefix([]byte(resp.Header.Get("Content-Type")), []byte("text/event-stream")) {
		var data []byte
		for _, line := range bytes.Split(body, []byte("\n")) {
			if d, ok := bytes.CutPrefix(line, []byte("data:")); ok {
				data = append(data, bytes.TrimSpace(d)...)
			}
		}
		body = data
	}
	return body, checkReply(body)
}

func (f *floorHTTP) call(params string) error {
	f.mu.Lock()
	id := f.next
	f.next++
	f.mu.Unlock()
	resp, err := f.post(callLine(id, params))
	if err != nil {
		return err
	}
	_, err = f.reply(resp)
	return err
}

func (f *floorHTTP) echo() error  { return f.call(echoParams) }
func (f *floorHTTP) large() error { return f.call(largeParams) }
func (f *floorHTTP) close() {
	if f.session != "" {
		req, _ := http.NewRequest(http.MethodDelete, f.url, nil)
		req.Header.Set("Mcp-Session-Id", f.session)
		if resp, err := f.client.Do(req); err == nil {
			resp.Body.Close()
		}
	}
	f.client.CloseIdleConnections()
}
