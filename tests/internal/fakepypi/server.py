"""A tiny stdio MCP server, the whole of the wheel fakepypi serves: it
answers initialize, ping, tools/list and tools/call for one tool, echo.
Standard library only."""

import json
import sys


def main() -> None:
    for line in sys.stdin:
        try:
            m = json.loads(line)
        except ValueError:
            continue
        if m.get("id") is None:
            continue
        params = m.get("params") or {}
        method = m.get("method")
        if method == "initialize":
            result = {
                "protocolVersion": params.get("protocolVersion"),
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "lemonmcp-fake-pypi-server", "version": "1.0.0"},
            }
        elif method == "ping":
            result = {}
        elif method == "tools/list":
            schema = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
            result = {"tools": [{"name": "echo", "description": "Echoes text", "inputSchema": schema}]}
        elif method == "tools/call":
            result = {"content": [{"type": "text", "text": str((params.get("arguments") or {}).get("text"))}]}
        else:
            reply = {"jsonrpc": "2.0", "id": m["id"], "error": {"code": -32601, "message": "method not found"}}
            print(json.dumps(reply), flush=True)
            continue
        print(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": result}), flush=True)
