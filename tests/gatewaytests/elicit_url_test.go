package gatewaytests

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// TestURLElicitation: a URL-mode elicitation reaches a front that
// declared URL mode, in each era pair; a front that declared only forms
// is never asked, and the server gets a refusal naming the capability.
func TestURLElicitation(t *testing.T) {
	for _, fe := range []era{legacy, modern} {
		for _, se := range []era{legacy, modern} {
			t.Run("front-"+string(fe)+"/server-"+string(se), func(t *testing.T) {
				h := newHost(t, se)
				g := newGateway(t, h, "")
				url := httpFront(t, g)
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				asked := make(chan string, 4)
				withURL := mcp.NewClient(&mcp.Implementation{Name: "url", Version: "1"}, &mcp.ClientOptions{
					Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}}},
					ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
						asked <- req.Params.Mode + " " + req.Params.URL
						return &mcp.ElicitResult{Action: "accept"}, nil
					},
				})
				cs, err := withURL.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: fe.frontVersion()})
				require.NoError(t, err)
				defer cs.Close()
				require.Contains(t, callText(t, cs, "elicit", map[string]any{"message": "sign in", "url": "https://example.test/auth"}), "accept")
				require.Equal(t, "url https://example.test/auth", <-asked)

				formOnly := mcp.NewClient(&mcp.Implementation{Name: "form", Version: "1"}, &mcp.ClientOptions{
					ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
						asked <- "form-only front asked: " + req.Params.Mode
						return &mcp.ElicitResult{Action: "accept"}, nil
					},
				})
				cs2, err := formOnly.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: fe.frontVersion()})
				require.NoError(t, err)
				defer cs2.Close()
				res, err := cs2.CallTool(ctx, &mcp.CallToolParams{Name: "elicit", Arguments: map[string]any{"message": "sign in", "url": "https://example.test/auth"}})
				refused := err != nil || res.IsError
				require.True(t, refused, "a front without URL mode cannot answer it")
				text := ""
				if err != nil {
					text = err.Error()
				} else if len(res.Content) > 0 {
					text = res.Content[0].(*mcp.TextContent).Text
				}
				require.Contains(t, text, "url mode", "the refusal names the missing capability")
				select {
				case got := <-asked:
					t.Fatalf("the form-only front was asked: %s", got)
				default:
				}
			})
		}
	}
}
