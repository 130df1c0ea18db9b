"""The session under concurrency: close and free racing calls from other
threads and tasks, completions from library threads, and what importing the
package does without a library."""

from __future__ import annotations

import asyncio
import gc
import os
import subprocess
import sys
import threading
import time
from typing import Any, List

import pytest

import lemonmcp
from lemonmcp import AsyncClient, Client

from conftest import CALL_S, READY_S, env_for_child, wait_until

# What a call that loses the race with close/free may raise: the client is
# closed, whichever side of lmcp_client_close or lmcp_client_free it landed on.
CLOSED = (lemonmcp.ClosedError, lemonmcp.Cancelled)


def _hammer(c: Client, stop: threading.Event, outcomes: List[Any]) -> None:
    """Call until the client is closed; record how each thread ended."""
    calls = 0
    try:
        while not stop.is_set():
            assert c.call_tool("echo", {"text": "x"}).text == "x"
            calls += 1
        outcomes.append(("stopped", calls))
    except BaseException as exc:
        outcomes.append((exc, calls))


def test_close_racing_calls_from_threads(fixture_path: str) -> None:
    """close() while six threads call in a loop: each thread's last call
    lands before lmcp_client_close, between it and lmcp_client_free, or
    after the free, and every one of them ends as a closed client."""
    for r in range(12):
        c = Client.stdio(fixture_path, call_timeout=CALL_S)
        c.open(timeout=READY_S)
        stop = threading.Event()
        outcomes: List[Any] = []
        threads = [threading.Thread(target=_hammer, args=(c, stop, outcomes)) for _ in range(6)]
        for t in threads:
            t.start()
        assert wait_until(lambda: c.call_tool("echo", {"text": "y"}).text == "y", 5)
        time.sleep(0.004 * (r % 4))
        c.close(timeout=10)
        for t in threads:
            t.join(CALL_S)
        stop.set()
        assert not any(t.is_alive() for t in threads)
        assert len(outcomes) == 6
        for exc, _ in outcomes:
            assert isinstance(exc, CLOSED), f"a racing call ended with {exc!r}"
        assert c.closed and c.state == "closed"
        with pytest.raises(lemonmcp.ClosedError):
            c.call_tool("echo", {"text": "late"})


def test_free_by_garbage_collection_racing_nothing_leaks(fixture_path: str) -> None:
    base = lemonmcp.diagnostics()["live_clients"]
    for _ in range(5):
        c = Client.stdio(fixture_path, call_timeout=CALL_S)
        c.open(timeout=READY_S)
        c.call_tool("echo", {"text": "x"})
        del c
        gc.collect()
    assert wait_until(lambda: lemonmcp.diagnostics()["live_clients"] <= base, 10)


def test_close_racing_async_calls_in_flight(fixture_path: str) -> None:
    async def run() -> List[BaseException]:
        ac = AsyncClient.stdio(fixture_path, call_timeout=CALL_S)
        await ac.open(timeout=READY_S)
        errors: List[BaseException] = []

        async def worker() -> None:
            try:
                while True:
                    r = await ac.call_tool("echo", {"text": "a"})
                    assert r.text == "a"
            except BaseException as exc:
                errors.append(exc)

        tasks = [asyncio.ensure_future(worker()) for _ in range(16)]
        await asyncio.sleep(0.2)
        await ac.close(timeout=10)
        await asyncio.wait_for(asyncio.gather(*tasks), CALL_S)
        return errors

    errors = asyncio.run(run())
    assert len(errors) == 16
    for exc in errors:
        assert isinstance(exc, CLOSED), f"a racing call ended with {exc!r}"


def test_one_async_client_awaited_from_two_loops_at_once(fixture_path: str) -> None:
    """Completions are queued per event loop: each call's future is resolved
    on the loop that awaits it, while both loops have calls in flight."""
    ac = AsyncClient.stdio(fixture_path, call_timeout=CALL_S)
    asyncio.run(ac.open(timeout=READY_S))
    texts: List[List[str]] = [[], []]

    async def calls(k: int) -> None:
        async def one(i: int) -> None:
            texts[k].append((await ac.call_tool("echo", {"text": f"{k}.{i}"})).text)

        await asyncio.gather(*(one(i) for i in range(40)))

    threads = [threading.Thread(target=asyncio.run, args=(calls(k),), daemon=True) for k in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(CALL_S)
    asyncio.run(ac.close())
    for k in (0, 1):
        assert sorted(texts[k]) == sorted(f"{k}.{i}" for i in range(40))


def test_many_completions_from_library_threads_reach_their_callers(fixture_path: str) -> None:
    """Library threads keep their Python thread state between callbacks;
    thousands of completions and progress events across threads all land."""
    seen: List[int] = []
    lock = threading.Lock()

    def on_progress(p: lemonmcp.Progress) -> None:
        with lock:
            seen.append(p.call_id)

    with Client.stdio(fixture_path, call_timeout=CALL_S) as c:
        results: List[str] = []

        def worker(k: int) -> None:
            for i in range(300):
                results.append(c.call_tool("echo", {"text": f"{k}.{i}"}).text)

        threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for i in range(300):  # the main thread's path: completions from library threads
            assert c.call_tool("echo", {"text": str(i)}).text == str(i)
        for t in threads:
            t.join(CALL_S)
        assert len(results) == 1200
        c.call_tool("slow", {"ms": 200, "steps": 4}, progress=on_progress)
        assert wait_until(lambda: len(seen) >= 4, 5)


def _child(args: List[str], cwd: str, **env: str) -> "subprocess.CompletedProcess[str]":
    e = env_for_child()
    e.update(env)
    e["PYTHONPATH"] = cwd + os.pathsep + e["PYTHONPATH"]
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=60, env=e, cwd=cwd)


def test_importing_without_the_library_never_exits(tmp_path: Any) -> None:
    """A program run with -m whose package imports lemonmcp gets an
    ImportError it can catch, never an exit from inside the import."""
    pkg = tmp_path / "hostapp"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(
        "try:\n    import lemonmcp\nexcept ImportError as e:\n    print('caught:', type(e).__name__)\n"
    )
    (pkg / "tool.py").write_text("print('tool ran')\n")
    r = _child(["-m", "hostapp.tool"], str(tmp_path), LEMONMCP_LIBRARY="/nonexistent/liblemonmcp.so")
    assert r.returncode == 0, r.stderr
    assert "caught: ImportError" in r.stdout and "tool ran" in r.stdout


def test_command_line_without_the_library_reports_in_one_line(tmp_path: Any) -> None:
    r = _child(["-m", "lemonmcp", "info"], str(tmp_path), LEMONMCP_LIBRARY="/nonexistent/liblemonmcp.so")
    assert r.returncode == 3
    assert r.stderr.startswith("lemonmcp: ") and r.stderr.count("\n") == 1, r.stderr
    assert "LEMONMCP_LIBRARY" in r.stderr


