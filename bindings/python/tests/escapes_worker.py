"""Runs the shared escape script (tests/fixtures/escapes/escapes.sh) as a
stdio server, through the library's Host or through the command line, as
whichever user runs this worker, and prints what happened as one JSON
object. test_sandbox.py runs it as root and, under setpriv, as nobody: the
application that starts the server is then itself unprivileged.

    escapes_worker.py host|cli FIXTURE SCRIPT sandbox|control

"control" runs the server with no sandbox (and, when the environment
names no helper, no reaper either): every escape must then succeed, which
proves each case can fail."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from typing import Any, Callable, Dict, List

import lemonmcp

WAIT_S = 60.0


def wait_until(cond: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.01)
    return cond()


def find(cmdline: str) -> int:
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/cmdline", "rb") as f:
                    if f.read() == cmdline.encode():
                        return int(name)
            except OSError:
                pass
    return 0


def main() -> None:
    how, fixture, script, mode = sys.argv[1:5]
    root = tempfile.mkdtemp(prefix="escapes-")
    out: Dict[str, Any] = {"uid": os.getuid()}
    daemon = ""
    try:
        setup = subprocess.run(["/bin/sh", script, "setup", root], check=True, capture_output=True, text=True)
        tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        tcp.bind(("127.0.0.1", 0))
        tcp.listen(8)
        udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        udp.bind(("127.0.0.1", 0))
        token = "300.%09d" % (time.monotonic_ns() % 10**9)
        daemon = "sleep\0" + token + "\0"
        server: Dict[str, Any] = {
            "command": "/bin/sh",
            "args": [script, "try", root, fixture],
            "env": {
                "ESCAPES_TCP_PORT": str(tcp.getsockname()[1]),
                "ESCAPES_UDP_PORT": str(udp.getsockname()[1]),
                "ESCAPES_TOKEN": token,
            },
            "timeouts": {"close_grace_ms": 300, "ready_ms": 30000},
        }
        if mode == "sandbox":
            server["sandboxEnabled"] = True
            server["sandbox"] = json.loads(setup.stdout)
        cfg = {"mcpServers": {"escapes": server}}
        if how == "host":
            with lemonmcp.Host(cfg) as host:
                out["state"] = host.servers()["escapes"]["state"]
                out["sandbox"] = host.servers()["escapes"].get("sandbox")
                out["echo"] = host.call_tool("escapes__echo", {"text": "served"}).text
                out["daemon_started"] = wait_until(lambda: find(daemon) != 0, WAIT_S)
        else:
            path = os.path.join(root, "mcp.json")
            with open(path, "w") as f:
                json.dump(cfg, f)
            r = subprocess.run(
                [os.environ.get("ESCAPES_PYTHON", sys.executable), "-m", "lemonmcp", "--config", path, "call", "escapes__echo", "text=served"],
                capture_output=True,
                text=True,
                timeout=WAIT_S * 2,
            )
            out["echo"] = r.stdout.strip() if r.returncode == 0 else "exit %d: %s" % (r.returncode, r.stderr[-400:])
        with open(os.path.join(root, "allowed", "report")) as f:
            report: List[str] = f.read().splitlines()
        out["report"] = report
        udp.setblocking(False)
        try:
            udp.recv(64)
            out["udp_received"] = True
        except BlockingIOError:
            out["udp_received"] = False
        if mode == "control":
            # The daemon may still be on its way to exec'ing sleep.
            out["daemon_gone"] = not wait_until(lambda: find(daemon) != 0, WAIT_S)
        else:
            out["daemon_gone"] = wait_until(lambda: find(daemon) == 0, WAIT_S)
    finally:
        pid = find(daemon) if daemon else 0
        if pid:  # the control's daemon, or one a failed run left: stopped here
            os.kill(pid, 9)
        shutil.rmtree(root, ignore_errors=True)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
