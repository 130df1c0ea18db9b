package httptests

import (
	"context"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func streamableHandler(s *mcp.Server, jsonResponse bool) http.Handler {
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
		&mcp.StreamableHTTPOptions{JSONResponse: jsonResponse})
}

func newTool(name string) *mcp.Tool {
	return &mcp.Tool{Name: name, InputSchema: map[string]any{"type": "object"}}
}

func lateTool(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return text("late"), nil
}
