"""A small MCP server over stdio (newline-delimited JSON-RPC) for the
command line's tests: prompts with completion, resource templates with
completion, logging. Standard library only."""

import json
import sys

COLORS = ["red", "green", "blue", "black", "brown"]
PROMPTS = [{"name": "paint", "description": "Paint something", "arguments": [
    {"name": "color", "required": True}, {"name": "shade"}]}]
TEMPLATES = [{"uriTemplate": "tiny://files/{path}", "name": "files"}]


def send(msg):
    sys.stdout.write(json.dumps(msg, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def complete(params):
    ref = params.get("ref", {})
    arg = params.get("argument", {})
    value = arg.get("value", "")
    if ref.get("type") == "ref/prompt" and ref.get("name") == "paint" and arg.get("name") == "color":
        values = [c for c in COLORS if c.startswith(value)]
        ctx = (params.get("context") or {}).get("arguments") or {}
        if ctx.get("shade") == "dark":
            values = ["dark " + v for v in values]
        return {"completion": {"values": values, "total": len(values), "hasMore": False}}
    if ref.get("type") == "ref/resource" and ref.get("uri") == TEMPLATES[0]["uriTemplate"]:
        values = [p for p in ("a.txt", "b.txt", "notes/c.md") if p.startswith(value)]
        return {"completion": {"values": values, "total": 10, "hasMore": True}}
    return {"completion": {"values": []}}


for line in sys.stdin:
    try:
        msg = json.loads(line)
    except ValueError:
        continue
    method, mid, params = msg.get("method"), msg.get("id"), msg.get("params") or {}
    if mid is None:
        continue  # notifications
    if method == "initialize":
        result = {"protocolVersion": params.get("protocolVersion", "2025-06-18"),
                  "capabilities": {"prompts": {}, "resources": {}, "completions": {}, "logging": {}},
                  "serverInfo": {"name": "tiny", "version": "0.1"}}
    elif method == "prompts/list":
        result = {"prompts": PROMPTS}
    elif method == "resources/templates/list":
        result = {"resourceTemplates": TEMPLATES}
    elif method == "completion/complete":
        result = complete(params)
    elif method == "logging/setLevel":
        send({"jsonrpc": "2.0", "method": "notifications/message",
              "params": {"level": "warning", "logger": "tiny", "data": "level set to " + params.get("level", "?")}})
        result = {}
    elif method == "ping":
        result = {}
    else:
        send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": "method not found: " + str(method)}})
        continue
    send({"jsonrpc": "2.0", "id": mid, "result": result})
