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
        files: Dict[str, Any] = {"command": node, "args": [filesystem, "/"]}
        defaults: Dict[str, Any] = {"timeouts": {"ready_ms": 20000}}
        if mode == "sandbox":
            defaults["sandboxEnabled"] = True
            files["sandbox"] = {"filesystem": {"allowWrite": [work], "denyRead": [secret]}}
        cfg = {
            "defaults": defaults,
            "mcpServers": {"everything": {"command": node, "args": [everything, "stdio"]}, "files": files},
        }
        with lemonmcp.Host(cfg) as host:
            servers = host.servers()
            out["states"] = {name: servers[name]["state"] for name in ("everything", "files")}
            out["namespaces"] = {name: (servers[name].get("sandbox") or {}).get("namespaces") for name in servers}
            out["echo"] = host.call_tool("everything__echo", {"message": "hi"}).text
            out["write_inside"] = attempt(host, "files__write_file", {"path": os.path.join(work, "a.txt"), "content": "in"})
            out["write_outside"] = attempt(
                host, "files__write_file", {"path": os.path.join(outside, "b.txt"), "content": "escaped"}
            )
            out["read_secret"] = attempt(host, "files__read_text_file", {"path": os.path.join(secret, "key")})
        out["inside_written"] = os.path.exists(os.path.join(work, "a.txt"))
        out["outside_written"] = os.path.exists(os.path.join(outside, "b.txt"))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
