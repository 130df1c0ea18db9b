"""Helpers of the gateway tests (test_serve.py, test_gateway_fronts.py): a
config file of fixture servers, `lemonmcp serve` as a child process, and
the official SDKs' front clients (tests/gateway/pyfront.py, tsfront.mjs)
with the interpreters make installs for them (mk/gateway.mk)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from typing import Any, Dict, List, Optional, Sequence

import pytest

from conftest import FIXTURE, PKG_ROOT, PROC_S, REPO, env_for_child, pid_alive

FRONTS_DIR = os.path.join(REPO, "tests", "gateway")
CACHE = os.path.join(REPO, ".cache")

#: The front clients: name -> (argv prefix, environment variable that
#: overrides where its runtime is). Each runs the same scenarios.
PY1 = os.environ.get("LEMONMCP_FRONT_PY1") or os.path.join(CACHE, "pysdk-1.30.0", "bin", "python")
PY2 = os.environ.get("LEMONMCP_FRONT_PY2") or os.path.join(CACHE, "modern-py", "bin", "python")
TSV1 = os.environ.get("LEMONMCP_FRONT_TSV1") or os.path.join(CACHE, "tasks-ts", "node_modules")
TSV2 = os.environ.get("LEMONMCP_FRONT_TSV2") or os.path.join(CACHE, "front-ts", "node_modules")

FRONTS: Dict[str, List[str]] = {
    "py-sdk-1": [PY1, os.path.join(FRONTS_DIR, "pyfront.py")],
    "py-sdk-2": [PY2, os.path.join(FRONTS_DIR, "pyfront.py")],
    "py-sdk-2-modern": [PY2, os.path.join(FRONTS_DIR, "pyfront.py"), "--era", "modern"],
    "ts-sdk-1": ["node", os.path.join(FRONTS_DIR, "tsfront.mjs"), "--sdk", "v1", "--modules", TSV1],
    "ts-sdk-2": ["node", os.path.join(FRONTS_DIR, "tsfront.mjs"), "--sdk", "v2", "--modules", TSV2],
    "ts-sdk-2-modern": ["node", os.path.join(FRONTS_DIR, "tsfront.mjs"), "--sdk", "v2", "--era", "modern", "--modules", TSV2],
}


def need_front(name: str) -> List[str]:
    """The front's argv, or a skip (a failure under make test, which
    installs every front: LEMONMCP_REQUIRE_PEERS)."""
    argv = FRONTS[name]
    runtime = argv[0] if argv[0] != "node" else argv[argv.index("--modules") + 1]
    if not os.path.exists(runtime):
        message = f"{name}: {runtime} is missing (make gateway-fronts-setup)"
        if os.environ.get("LEMONMCP_REQUIRE_PEERS"):
            pytest.fail(message)
        pytest.skip(message)
    return list(argv)


def write_config(tmp: str, servers: Sequence[str] = ("fx", "fy"), log: Optional[str] = None, **extra: Any) -> str:
    """A config file of fixture servers named ``servers``; the first one
    appends every line it reads to ``log`` when given."""
    entries: Dict[str, Any] = {}
    for i, name in enumerate(servers):
        args = ["-log-file", log] if log and i == 0 else []
        entries[name] = {"command": FIXTURE, "args": args}
    path = os.path.join(tmp, "mcp.json")
    with open(path, "w") as f:
        json.dump({"mcpServers": entries, **extra}, f)
    return path


def serve_argv(config: str, *extra: str) -> List[str]:
    return [sys.executable, "-m", "lemonmcp", "--config", config, "serve", *extra]


def serve_command(config: str) -> str:
    """`lemonmcp serve` as one command line a stdio front client starts
    (the clients split it on spaces: no path here has one). The SDKs give a
    server they start a minimal environment: the package's path goes in
    through env(1)."""
    return " ".join(["env", f"PYTHONPATH={PKG_ROOT}", *serve_argv(config)])


def front_env() -> Dict[str, str]:
    env = env_for_child()
    env["PYTHONPATH"] = PKG_ROOT  # the front's own venv must not see this suite's packages
    return env


def run_front(name: str, target: Sequence[str], scenarios: Sequence[str], timeout: float = 180.0) -> Dict[str, Any]:
    """Run one front client against ``target`` (["--stdio", CMD] or
    ["--url", URL]) and return its report."""
    argv = need_front(name) + list(target) + ["--scenarios", ",".join(scenarios)]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=front_env(), cwd=PKG_ROOT)
    assert proc.returncode == 0, f"{name} failed ({proc.returncode}):\n{proc.stderr[-4000:]}"
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    assert lines, f"{name} printed no report:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
    report: Dict[str, Any] = json.loads(lines[-1])
    return report


class HTTPGateway:
    """`lemonmcp --config F serve --http 127.0.0.1:0` as a child process."""

    def __init__(self, config: str, *extra: str, env: Optional[Dict[str, str]] = None) -> None:
        self.proc = subprocess.Popen(
            serve_argv(config, "--http", "127.0.0.1:0", *extra), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, env={**env_for_child(), **(env or {})}, cwd=PKG_ROOT, start_new_session=True)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().strip()  # bounded: the child exits on any failure
        if not line.startswith("http://"):
            self.proc.kill()
            _, err = self.proc.communicate(timeout=PROC_S)
            raise AssertionError(f"no URL from lemonmcp serve: {line!r}\n{err[-3000:]}")
        self.url = line

    def stop(self, sig: int = signal.SIGTERM) -> "subprocess.CompletedProcess[str]":
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            out, err = self.proc.communicate(timeout=PROC_S)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            out, err = self.proc.communicate(timeout=PROC_S)
            raise AssertionError(f"lemonmcp serve did not end on signal {sig}:\n{err[-3000:]}") from None
        return subprocess.CompletedProcess(self.proc.args, self.proc.returncode, out, err)


def children_of(pid: int) -> List[int]:
    """Every live descendant of pid (from /proc)."""
    parents: Dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    parents[int(entry)] = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                pass
    found, frontier = [], [pid]
    while frontier:
        p = frontier.pop()
        kids = [c for c, pp in parents.items() if pp == p]
        found += kids
        frontier += kids
    return [c for c in found if pid_alive(c)]


def gone(pids: Sequence[int], timeout: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not any(pid_alive(p) for p in pids):
            return True
        time.sleep(0.05)
    return not any(pid_alive(p) for p in pids)
