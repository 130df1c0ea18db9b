package httptests

import (
	"encoding/json"
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// taskHTTPServer is a minimal 2026-07-28 server over plain JSON responses
// whose tools/call becomes a task (no SDK implements the tasks extension
// yet). It records each tasks/* request's Mcp-Name header.
type taskHTTPServer struct {
	mu    sync.Mutex
	names map[string][]string // method -> Mcp-Name values
	polls int
}

func (s *taskHTTPServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			TaskID string `json:"taskId"`
		} `json:"params"`
	}
	if r.Method != http.MethodPost || json.NewDecoder(r.Body).Decode(&req) != nil {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	if len(req.ID) == 0 {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	var result any
	s.mu.Lock()
	if s.names == nil {
		s.names = map[string][]string{}
	}
	s.names[req.Method] = append(s.names[req.Method], r.Header.Get("Mcp-Name"))
	switch req.Method {
	case "server/discover":
		result = map[string]any{"supportedVersions": []string{"2026-07-28"}, "capabilities": map[string]any{"tools": map[string]any{},
			"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}}, "_meta": map[string]any{"io.modelcontextprotocol/serverInfo": map[string]any{"name": "tasks", "version": "1"}}}
	case "tools/call":
		result = map[string]any{"resultType": "task", "taskId": "job/7 é", "status": "working", "ttlMs": 60000, "pollIntervalMs": 10}
	case "tasks/get":
		s.polls++
		if s.polls < 3 {
			result = map[string]any{"taskId": req.Params.TaskID, "status": "working", "ttlMs": 60000, "pollIntervalMs": 10}
		} else {
			result = map[string]any{"taskId": req.Params.TaskID, "status": "completed", "ttlMs": 60000, "result": map[string]any{"content": []any{map[string]any{"type": "text", "text": "built"}}}}
		}
	default:
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "error": map[string]any{"code": -32601, "message": "method not found"}})
		return
	}
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result})
}

// Over HTTP a task-augmented call completes once with the task's result,
// and every tasks/* request carries Mcp-Name: <taskId> (base64-encoded
// when the id is not plain ASCII).
func TestTaskOverHTTP(t *testing.T) {
	s := &taskHTTPServer{}
	srv := serve(t, s)
	c := connect(t, "streamable_http", srv.URL+"/mcp", `,"protocol":{"mode":"modern","tasks":true}`)
	require.Equal(t, "built", c.toolText(t, "build", map[string]any{}))
	s.mu.Lock()
	defer s.mu.Unlock()
	require.NotEmpty(t, s.names["tasks/get"])
	for _, name := range s.names["tasks/get"] {
		require.Equal(t, "=?base64?am9iLzcgw6k=?=", name)
	}
	require.Equal(t, []string{"build"}, s.names["tools/call"])
}
