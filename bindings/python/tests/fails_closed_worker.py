"""Run by test_sandbox.py::test_fails_closed_without_a_layer under
tests/fixtures/withoutlayers (no Landlock, or no user namespaces), as root
or as nobody: a host with a server whose sandbox is required (the
default), one with "required": false and a plain one, through the Host or
through the command line. Prints one JSON line of what happened.

    fails_closed_worker.py host|cli FIXTURE
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time

import lemonmcp


def outer_uid() -> int:
    """Our uid outside any user namespace withoutlayers made (its root is
    the caller's uid)."""
    uid = os.getuid()
    with open("/proc/self/uid_map") as f:
        for line in f:
            inside, outside, count = (int(x) for x in line.split())
            if inside <= uid < inside + count:
                return outside + uid - inside
    return uid


def main() -> None:
    how, fixture = sys.argv[1], sys.argv[2]
    work = tempfile.mkdtemp(prefix="fails-closed-")
    outside = os.path.join(work, "outside")
    os.mkdir(outside)

    def server(**extra: object) -> dict:
        # Tries a write outside allowWrite, then becomes the fixture.
        script = f"echo x > {outside}/{extra.pop('mark')} 2>/dev/null; exec {fixture}"
        return dict({"command": "/bin/sh", "args": ["-c", script], "restart": False}, **extra)

    cfg = {"mcpServers": {
        "boxed": server(mark="boxed", sandboxEnabled=True, sandbox={"filesystem": {"allowWrite": [work + "/in"]}}),
        "loose": server(mark="loose", sandboxEnabled=True, sandbox={"required": False}),
        "plain": server(mark="plain"),
    }}
    out: dict = {"uid": outer_uid()}
    if how == "host":
        with lemonmcp.Host(cfg) as host:
            deadline = time.monotonic() + 60
            servers = host.servers()
            while time.monotonic() < deadline:
                servers = host.servers()
                if servers["boxed"]["state"] == "failed" and servers["loose"]["state"] == "ready":
                    break
                time.sleep(0.05)
            out["servers"] = servers
            out["echo"] = host.call_tool("loose__echo", {"text": "loose"}).text
    else:
        path = os.path.join(work, "mcp.json")
        with open(path, "w") as f:
            json.dump(cfg, f)
        r = subprocess.run([sys.executable, "-m", "lemonmcp", "--config", path, "servers"],
                           capture_output=True, text=True, timeout=120)
        out["cli"] = {"returncode": r.returncode, "stdout": r.stdout, "stderr": r.stderr}
    out["written"] = sorted(os.listdir(outside))
    print(json.dumps(out))


if __name__ == "__main__":
    main()
