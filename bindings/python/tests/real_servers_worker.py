"""Runs server-everything and server-filesystem (Node, from npm) in a
lemonmcp.Host, confined or not, as whichever user runs this worker, and
prints what happened as one JSON object. test_sandbox.py runs it as root
and, under setpriv, as nobody: the application that starts the servers is
then itself unprivileged.

    real_servers_worker.py NODE EVERYTHING_JS FILESYSTEM_JS sandbox|control

server-filesystem is told it may use /: only the sandbox (allowWrite,
denyRead) keeps it from writing outside its work directory and from
reading the secret. "control" runs both servers unconfined, where the
same two attempts succeed, which proves each can fail."""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from typing import Any, Dict

import lemonmcp


def attempt(host: Any, tool: str, args: Dict[str, Any]) -> str:
    try:
        return "denied" if host.call_tool(tool, args).is_error else "ok"
    except lemonmcp.LemonMCPError:
        return "denied"


def main() -> None:
    node, everything, filesystem, mode = sys.argv[1:5]
    root = tempfile.mkdtemp(prefix="real-servers-")
    out: Dict[str, Any] = {"uid": os.getuid()}
    try:
        work, secret, outside = (os.path.join(root, d) for d in ("work", "secret", "outside"))
        for d in (work, secret, outside):
            os.mkdir(d)
        with open(os.path.join(secret, "key"), "w") as f:
            f.write("k")
        # The library's own secrets, which no policy lists: the pin file
        # the host writes once the servers are first seen, and a token
        # store file a (disabled) HTTP server of the same host names. Both
        # 0600 and the worker's own, as a new user's would be.
        lib = os.path.join(root, "lib")
        os.mkdir(lib)
        pins, tokens = os.path.join(lib, "pins.json"), os.path.join(lib, "tokens.json")
        fd = os.open(tokens, os.O_WRONLY | os.O_CREAT, 0o600)
        os.write(fd, b'{"refresh_token": "secret"}')
        os.close(fd)
        files: Dict[str, Any] = {"command": node, "args": [filesystem, "/"]}
        defaults: Dict[str, Any] = {"timeouts": {"ready_ms": 20000}}
        if mode == "sandbox":
            defaults["sandboxEnabled"] = True
            files["sandbox"] = {"filesystem": {"allowWrite": [work], "denyRead": [secret]}}
        remote = {"url": "http://127.0.0.1:9/mcp", "enabled": False, "sandboxEnabled": False,
                  "auth": {"token_store": {"type": "file", "path": tokens}}}
        cfg = {
            "defaults": defaults,
            "pins": {"store": {"type": "file", "path": pins}},
            "mcpServers": {"everything": {"command": node, "args": [everything, "stdio"]}, "files": files, "remote": remote},
        }
        with lemonmcp.Host(cfg) as host:
            servers = host.servers()
            out["states"] = {name: servers[name]["state"] for name in ("everything", "files")}
            out["namespaces"] = {name: (servers[name].get("sandbox") or {}).get("namespaces") for name in ("everything", "files")}
            out["echo"] = host.call_tool("everything__echo", {"message": "hi"}).text
            out["write_inside"] = attempt(host, "files__write_file", {"path": os.path.join(work, "a.txt"), "content": "in"})
            out["write_outside"] = attempt(
                host, "files__write_file", {"path": os.path.join(outside, "b.txt"), "content": "escaped"}
            )
            out["read_secret"] = attempt(host, "files__read_text_file", {"path": os.path.join(secret, "key")})
            out["pins_written"] = os.path.exists(pins)
            out["read_pins"] = attempt(host, "files__read_text_file", {"path": pins})
            out["read_tokens"] = attempt(host, "files__read_text_file", {"path": tokens})
        out["inside_written"] = os.path.exists(os.path.join(work, "a.txt"))
        out["outside_written"] = os.path.exists(os.path.join(outside, "b.txt"))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
