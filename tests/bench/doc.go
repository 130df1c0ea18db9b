// Package bench measures LemonMCP against its peers, side by side, on the
// same fixture server: one tools/call round trip over stdio through our core
// (the per-call path of every binding), through the official go-sdk client,
// and through mark3labs/mcp-go. Figures are for comparing ratios on one
// machine in one run, never absolute limits: the machines are shared.
package bench
