package streamablehttp

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/transport"
)

// modernRequest is a 2026-07-28 request with the headers the core computes.
func modernRequest(id int64, method string, extra ...transport.Header) transport.Outbound {
	m := request(id, method)
	m.Headers = append([]transport.Header{{Name: "MCP-Protocol-Version", Value: "2026-07-28"}, {Name: "Mcp-Method", Value: method}}, extra...)
	return m
}

// A modern request's headers go on its POST as given; without initialize
// there is no session, no GET stream and no DELETE.
func TestModernHeadersOnPOST(t *testing.T) {
	srv := newServer(t, mcp("", echo))
	tr, sink := open(t, srv.URL)
	cases := []struct {
		name string
		msg  transport.Outbound
		want map[string]string
	}{
		{"list", modernRequest(1, "tools/list"), map[string]string{"Mcp-Method": "tools/list"}},
		{"call", modernRequest(2, "tools/call", transport.Header{Name: "Mcp-Name", Value: "sql"}, transport.Header{Name: "Mcp-Param-Region", Value: "us-west1"}, transport.Header{Name: "Mcp-Param-Tag", Value: "=?base64?SGVsbG8sIOS4lueVjA==?="}),
			map[string]string{"Mcp-Method": "tools/call", "Mcp-Name": "sql", "Mcp-Param-Region": "us-west1", "Mcp-Param-Tag": "=?base64?SGVsbG8sIOS4lueVjA==?="}},
		{"read", modernRequest(3, "resources/read", transport.Header{Name: "Mcp-Name", Value: "=?base64?IGEg?="}), map[string]string{"Mcp-Name": "=?base64?IGEg?="}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			send(t, tr, tc.msg)
			sink.Next(t)
			r := srv.waitFor(t, isCall(tc.msg.Method))
			require.Equal(t, "2026-07-28", r.Header.Get("MCP-Protocol-Version"))
			for k, v := range tc.want {
				require.Equal(t, []string{v}, r.Header.Values(k), k)
			}
			require.Empty(t, r.Header.Get("Mcp-Session-Id"))
		})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	require.NoError(t, tr.Close(ctx))
	for _, r := range srv.requests() {
		require.Equal(t, http.MethodPost, r.Method, "POST only: no GET stream, no DELETE")
	}
}

// An HTTP error status whose body is a JSON-RPC error reaches the core as
// that error (RPCError), for modern requests only; other bodies stay plain
// status errors.
func TestModernErrorBodies(t *testing.T) {
	cases := []struct {
		name   string
		status int
		ctype  string
		body   string
		modern bool
		rpc    string // the RPCError expected, "" for none
		code   transport.Code
	}{
		{"unsupported version", 400, "application/json", `{"jsonrpc":"2.0","id":5,"error":{"code":-32022,"message":"no","data":{"supported":["2026-07-28"]}}}`, true, `{"code":-32022,"message":"no","data":{"supported":["2026-07-28"]}}`, transport.CodeTransport},
		{"method not found", 404, "application/json", `{"jsonrpc":"2.0","id":5,"error":{"code":-32601,"message":"nope"}}`, true, `{"code":-32601,"message":"nope"}`, transport.CodeTransport},
		{"plain text", 400, "text/plain", "Bad Request: missing session", true, "", transport.CodeTransport},
		{"not JSON-RPC", 400, "application/json", `{"error":"bad"}`, true, "", transport.CodeTransport},
		{"legacy request keeps the old mapping", 400, "application/json", `{"jsonrpc":"2.0","id":5,"error":{"code":-32022,"message":"no"}}`, false, "", transport.CodeTransport},
		{"authorization is not a body matter", 401, "application/json", `{"jsonrpc":"2.0","id":5,"error":{"code":-32022,"message":"no"}}`, true, "", transport.CodeAuthRequired},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := newServer(t, func(w http.ResponseWriter, _ *http.Request, _ msg) {
				w.Header().Set("Content-Type", tc.ctype)
				w.WriteHeader(tc.status)
				w.Write([]byte(tc.body))
			})
			tr, sink := open(t, srv.URL)
			m := request(5, "tools/call")
			if tc.modern {
				m = modernRequest(5, "tools/call")
			}
			send(t, tr, m)
			f := sink.Failure(t)
			require.Equal(t, int64(5), f.ID)
			require.Equal(t, tc.code, f.Err.Code)
			if tc.rpc == "" {
				require.Nil(t, f.Err.RPCError)
			} else {
				require.JSONEq(t, tc.rpc, string(f.Err.RPCError))
			}
		})
	}
}

// Abort closes a request's stream and reports nothing for it: the modern
// era's cancellation over HTTP.
func TestAbortClosesTheStream(t *testing.T) {
	gone := make(chan struct{})
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, _ msg) {
		startSSE(w)
		<-r.Context().Done()
		close(gone)
	})
	tr, sink := open(t, srv.URL)
	send(t, tr, modernRequest(9, "tools/call"))
	srv.waitFor(t, isCall("tools/call"))
	tr.Abort(9)
	select {
	case <-gone:
	case <-time.After(3 * time.Second):
		t.Fatal("the server's stream stayed open")
	}
	sink.NoFailure(t, 100*time.Millisecond)
	for _, r := range srv.requests() {
		require.NotEqual(t, "notifications/cancelled", r.Body.Method)
	}
}
