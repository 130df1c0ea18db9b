"""Shared fixtures: the fixture MCP server, clients on it, and helpers that
bound every wait (pytest-timeout is not installed here)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
PKG_ROOT = os.path.dirname(HERE)  # bindings/python
REPO = os.path.dirname(os.path.dirname(PKG_ROOT))

if PKG_ROOT not in sys.path:
    sys.path.insert(0, PKG_ROOT)

import lemonmcp  # noqa: E402

# The Ctrl-C tests send SIGINT to child processes. A suite started from a
# shell's background job (`make test &`, nohup, some CI runners) inherits
# SIGINT ignored; an ignored signal stays ignored across exec, and a Python
# started that way never raises KeyboardInterrupt, so those tests failed
# every time. A handled signal is reset to the default by exec, so handling
# it here gives every child the disposition a terminal would.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

FIXTURE = os.environ.get("LEMONMCP_FIXTURE") or os.path.join(REPO, "build", "fixtures", "mcpfixture")

# Bounds used across the suite (seconds).
READY_S = 15.0
CALL_S = 15.0
PROC_S = 60.0


def _need_fixture() -> str:
    if not os.access(FIXTURE, os.X_OK):
        pytest.skip(f"fixture server not built: {FIXTURE} (make fixtures)")
    return FIXTURE


@pytest.fixture(scope="session")
def fixture_path() -> str:
    return _need_fixture()


@pytest.fixture
def make_client(fixture_path: str) -> Iterator[Callable[..., lemonmcp.Client]]:
    """make_client(*fixture_flags, **client_options) -> an open Client, closed
    at teardown."""
    made: List[lemonmcp.Client] = []

    def make(*flags: str, open: bool = True, **options: Any) -> lemonmcp.Client:
        options.setdefault("call_timeout", CALL_S)
        options.setdefault("ready_timeout", READY_S)
        c = lemonmcp.Client.stdio(fixture_path, list(flags), **options)
        made.append(c)
        if open:
            c.open(timeout=READY_S)
        return c

    yield make
    for c in made:
        c.close(timeout=10)


@pytest.fixture
def client(make_client: Callable[..., lemonmcp.Client]) -> lemonmcp.Client:
    return make_client()


def env_for_child() -> Dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = PKG_ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["LEMONMCP_FIXTURE"] = FIXTURE
    env.setdefault("COLUMNS", "120")
    return env


def run_python(args: Sequence[str], timeout: float = PROC_S, stdin: Optional[str] = None) -> "subprocess.CompletedProcess[str]":
    """Run `python ARGS` in a child process that imports this lemonmcp,
    bounded in time (subprocess.TimeoutExpired past it)."""
    return subprocess.run(
        [sys.executable, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env_for_child(),
        input=stdin,
        cwd=PKG_ROOT,
    )


def run_cli(args: Sequence[str], timeout: float = PROC_S, stdin: Optional[str] = None) -> "subprocess.CompletedProcess[str]":
    """Run `python -m lemonmcp ARGS` in a child process, bounded in time."""
    return run_python(["-m", "lemonmcp", *args], timeout, stdin)


def wait_until(pred: Callable[[], bool], timeout: float = 10.0, interval: float = 0.02) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(interval)
    return pred()


def pid_alive(pid: int) -> bool:
    """True while /proc/PID exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state != "Z"


# make test runs this suite as two processes side by side (its tests mostly
# wait on servers and subprocesses): LEMONMCP_PYTEST_SHARD="I/N" keeps every
# N-th test from the I-th (1-based), so each test runs in exactly one shard.
# Dealt one by one rather than by file, the slow files are shared out too.
def pytest_collection_modifyitems(config: pytest.Config, items: List[pytest.Item]) -> None:
    shard = os.environ.get("LEMONMCP_PYTEST_SHARD")
    if not shard:
        return
    try:
        index, count = (int(x) for x in shard.split("/"))
    except ValueError:
        raise pytest.UsageError(f"LEMONMCP_PYTEST_SHARD must be I/N (as 1/2), not {shard!r}") from None
    if not 1 <= index <= count:
        raise pytest.UsageError(f"LEMONMCP_PYTEST_SHARD {shard!r}: I must be 1 to N")
    keep = [item for i, item in enumerate(items) if i % count == index - 1]
    dropped = [item for i, item in enumerate(items) if i % count != index - 1]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
    items[:] = keep
