"""Ctrl-C during a blocking call: a child Python process runs a slow call,
the test sends it SIGINT, the call is cancelled (the server is told), the
child sees KeyboardInterrupt, and its next call works."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from typing import Any, List

import pytest

from conftest import PKG_ROOT, env_for_child

CHILD = r"""
import os, sys
import lemonmcp

fixture, log = sys.argv[1], sys.argv[2]
c = lemonmcp.Client.stdio(fixture, ["-log-file", log], call_timeout=60)
c.open(timeout=15)
announced = []

def progress(p):
    if not announced:
        announced.append(p)
        print("in flight", flush=True)

try:
    c.call_tool("slow", {"ms": 600000, "steps": 6000}, progress=progress)
    print("call finished?!", flush=True)
except KeyboardInterrupt:
    print("caught KeyboardInterrupt", flush=True)
r = c.call_tool("echo", {"text": "after the interrupt"})
print("echo:", r.text, flush=True)
c.close()
"""

CHILD_CONNECT = r"""
import sys
import lemonmcp

c = lemonmcp.Client.stdio(sys.argv[1], ["-no-init"], ready_timeout=60)
c.connect()
try:
    # The marker is printed inside the try, so a SIGINT that arrives right
    # after it is still caught here.
    print("connecting", flush=True)
    c.wait_ready()
except KeyboardInterrupt:
    print("caught KeyboardInterrupt", state := c.state, flush=True)
c.close(timeout=5)
print("closed", c.state, flush=True)
"""


def _interrupt(code: str, args: List[str], marker: str) -> "tuple[str, str, int]":
    """Runs code in a child, sends it SIGINT once it prints marker, and
    returns its output and exit status. What the child blocks in lasts at
    least a minute (a 10-minute call, a 60 s timeout), longer than this
    waits: a SIGINT that does not interrupt it fails here."""
    proc = subprocess.Popen(
        [sys.executable, "-c", code, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env_for_child(),
        cwd=PKG_ROOT,
    )
    try:
        assert proc.stdout is not None
        deadline = time.monotonic() + 30
        first = ""
        while time.monotonic() < deadline:
            first = proc.stdout.readline()
            if marker in first or not first:
                break
        assert marker in first, (first, proc.stderr.read() if proc.stderr else "")
        proc.send_signal(signal.SIGINT)
        try:
            out, err = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            pytest.fail(f"the child did not finish after SIGINT ({marker!r}): Ctrl-C did not interrupt it")
        return out, err, proc.returncode
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)


def test_ctrl_c_cancels_the_call_and_the_client_stays_usable(fixture_path: str, tmp_path: Any) -> None:
    log = str(tmp_path / "stdin.log")
    out, err, rc = _interrupt(CHILD, [fixture_path, log], "in flight")
    assert rc == 0, err
    assert "caught KeyboardInterrupt" in out
    assert "echo: after the interrupt" in out
    assert "call finished" not in out
    with open(log) as f:
        assert "notifications/cancelled" in f.read()


def test_ctrl_c_during_wait_ready(fixture_path: str) -> None:
    out, err, rc = _interrupt(CHILD_CONNECT, [fixture_path], "connecting")
    assert rc == 0, err
    assert "caught KeyboardInterrupt connecting" in out
    assert "closed closed" in out


CHILD_HOST = r"""
import sys
import lemonmcp

fixture, log = sys.argv[1], sys.argv[2]
announced = []

def progress(p):
    if not announced:
        announced.append(p)
        print("in flight", flush=True)

cfg = {"mcpServers": {"a": {"command": fixture, "args": ["-log-file", log], "timeouts": {"call_ms": 60000}}}}
with lemonmcp.Host(cfg, on_progress=progress, ready_timeout=15) as host:
    try:
        host.call_tool("a__slow", {"ms": 600000, "steps": 6000})
        print("call finished?!", flush=True)
    except KeyboardInterrupt:
        print("caught KeyboardInterrupt", flush=True)
    print("echo:", host.call_tool("a__echo", {"text": "after the interrupt"}).text, flush=True)
"""

CHILD_HOST_CONNECT = r"""
import sys
import lemonmcp

host = lemonmcp.Host({"mcpServers": {"a": {"command": sys.argv[1], "args": ["-no-init"], "timeouts": {"ready_ms": 60000}}}})
host.connect()
try:
    print("connecting", flush=True)
    host.wait_ready()
except KeyboardInterrupt:
    print("caught KeyboardInterrupt", host.servers()["a"]["state"], flush=True)
host.close(timeout=5)
print("closed", host.closed, flush=True)
"""


def test_ctrl_c_cancels_a_host_call_and_the_host_stays_usable(fixture_path: str, tmp_path: Any) -> None:
    log = str(tmp_path / "stdin.log")
    out, err, rc = _interrupt(CHILD_HOST, [fixture_path, log], "in flight")
    assert rc == 0, err
    assert "caught KeyboardInterrupt" in out
    assert "echo: after the interrupt" in out
    assert "call finished" not in out
    with open(log) as f:
        assert "notifications/cancelled" in f.read()


CHILD_HOST_LIST = r"""
import sys
import lemonmcp

cfg = {"mcpServers": {"a": {"command": sys.argv[1], "args": ["-list-delay-ms", "60000"]}}}
with lemonmcp.Host(cfg, ready_timeout=15) as host:
    try:
        print("listing", flush=True)
        host.list_tools()
        print("list finished?!", flush=True)
    except KeyboardInterrupt:
        print("caught KeyboardInterrupt", host.servers()["a"]["state"], flush=True)
    print("echo:", host.call_tool("a__echo", {"text": "after the interrupt"}).text, flush=True)
print("closed", host.closed, flush=True)
"""


def test_ctrl_c_interrupts_a_host_list_and_the_host_stays_usable(fixture_path: str) -> None:
    out, err, rc = _interrupt(CHILD_HOST_LIST, [fixture_path], "listing")
    assert rc == 0, err
    assert "caught KeyboardInterrupt ready" in out
    assert "list finished" not in out
    assert "echo: after the interrupt" in out
    assert "closed True" in out


def test_ctrl_c_during_a_host_wait_ready(fixture_path: str) -> None:
    out, err, rc = _interrupt(CHILD_HOST_CONNECT, [fixture_path], "connecting")
    assert rc == 0, err
    assert "caught KeyboardInterrupt connecting" in out
    assert "closed True" in out
