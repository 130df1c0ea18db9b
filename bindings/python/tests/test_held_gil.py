"""The library functions called with the GIL held (lemonmcp._ffi.HOLDS_GIL)
must never wait for a Python callback, which needs the GIL: _ffi.py gives
the argument. This test is what would catch it if the argument broke: calls
whose callbacks run Python (progress, completions, sampling, logs) race
queued calls and callback calls made from several threads at once.

A deadlock with the GIL held freezes the whole interpreter, the thread that
would time out included, so the load runs in a child process, and the
parent's timeout fails the test (and kills the child) instead of hanging."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from typing import Any

import lemonmcp

from conftest import PKG_ROOT, PROC_S, env_for_child

# The child: 8 threads, each starting calls through every HOLDS_GIL path
# while the library's threads run Python callbacks for the others:
#   - call_tool("slow", progress=...): lmcp_client_call with a done callback
#     and progress events (Python on the client's delivery thread);
#   - call_tool("echo"): lmcp_client_call_queued and lmcp_queue_pop;
#   - call_tool("sample"): a sampling request (Python on a library thread,
#     answered with lmcp_client_respond) inside a queued call;
#   - Host.call: lmcp_host_call_queued, with the host's event callback;
#   - one more thread runs an AsyncClient whose tasks' calls start in
#     bursts (lmcp_client_hold_sends, lmcp_client_call_queued,
#     lmcp_client_release_sends), sampling among them.
# Each callback also spins a little with the GIL, so that a library thread
# is often waiting for the GIL while a caller holds it inside the library.
CHILD = r"""
import asyncio, sys, threading, time
import lemonmcp

fixture = sys.argv[1]
ROUNDS = 40
THREADS = 8

def busy():
    n = 0
    for i in range(200):
        n += i
    return n

def on_progress(p):
    busy()

def on_log(r):
    busy()

def sampling(params):
    busy()
    text = params["messages"][0]["content"]["text"]
    return {"role": "assistant", "model": "m", "content": {"type": "text", "text": text}}

# The call timeout is far past the parent's: a call timing out must not end
# a deadlock before the parent sees it.
client = lemonmcp.Client.stdio(fixture, [], on_progress=on_progress, on_log=on_log, sampling=sampling,
                               call_timeout=600, ready_timeout=30)
client.open(timeout=30)
host = lemonmcp.Host({"mcpServers": {"f": {"command": fixture}}}, on_event=lambda k, p: busy())
host.connect()
host.wait_ready(timeout=30)
errors = []

def work(k):
    try:
        for i in range(ROUNDS):
            mine = []
            r = client.call_tool("slow", {"ms": 1, "steps": 2}, progress=lambda p: (mine.append(p), busy()))
            assert not r.is_error, r.text
            r = client.call_tool("echo", {"text": f"{k}-{i}"})
            assert r.text == f"{k}-{i}", r.text
            if i % 4 == 0:
                r = client.call_tool("sample", {"prompt": "p", "max_tokens": 1})
                assert not r.is_error, r.text
            r = host.call("f", "tools/call", {"name": "echo", "arguments": {"text": f"h{k}-{i}"}})
            assert r["content"][0]["text"] == f"h{k}-{i}", r
    except BaseException as exc:
        errors.append(f"thread {k}: {exc!r}")

def bursts():
    async def main():
        async with lemonmcp.AsyncClient.stdio(fixture, [], sampling=sampling, on_log=on_log,
                                              call_timeout=600, ready_timeout=30) as ac:
            async def task(k):
                for i in range(ROUNDS):
                    r = await ac.call_tool("echo", {"text": f"a{k}-{i}"})
                    assert r.text == f"a{k}-{i}", r.text
                    if i % 4 == 0:
                        r = await ac.call_tool("sample", {"prompt": "p", "max_tokens": 1})
                        assert not r.is_error, r.text
            await asyncio.gather(*(task(k) for k in range(THREADS)))
    try:
        asyncio.run(main())
    except BaseException as exc:
        errors.append(f"async: {exc!r}")

threads = [threading.Thread(target=work, args=(k,)) for k in range(THREADS)]
threads.append(threading.Thread(target=bursts))
for t in threads:
    t.start()
for t in threads:
    t.join()
host.close(timeout=10)
client.close(timeout=10)
if errors:
    print("\n".join(errors))
    sys.exit(1)
print("done", THREADS * ROUNDS)
"""


def test_held_gil_calls_never_wait_for_a_python_callback(fixture_path: str) -> None:
    # PROC_S is generous for a loaded machine: the load takes about 2 s
    # alone. A timeout here is the failure, never a reason to raise it.
    try:
        out = subprocess.run(
            [sys.executable, "-c", CHILD, fixture_path],
            capture_output=True,
            text=True,
            timeout=PROC_S,
            env=env_for_child(),
            cwd=PKG_ROOT,
        )
    except subprocess.TimeoutExpired as exc:
        raise AssertionError(
            f"the child did not finish in {PROC_S:.0f} s: a call made with the GIL held "
            f"waited for a Python callback (deadlock); its output: {exc.stdout!r} {exc.stderr!r}"
        ) from None
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.strip() == "done 320", out.stdout + out.stderr


def test_a_lazy_server_starts_without_the_gil(fixture_path: str, tmp_path: Any) -> None:
    # A lazy server's start runs inside the call that first needs it, and a
    # tool name without its server's prefix waits there for the handshake.
    # Here the server's handshake waits for a Python thread (it reads a FIFO
    # the thread writes and closes), so a call that held the GIL would
    # starve the thread until ready_ms gave the server up: the call would
    # then find no tool "echo".
    fifo = str(tmp_path / "go")
    os.mkfifo(fifo)
    script = 'cat "$0" >/dev/null && exec "$1"'
    cfg = {
        "mcpServers": {
            "slow": {"command": "/bin/sh", "args": ["-c", script, fifo, fixture_path], "timeouts": {"ready_ms": 5000}}
        }
    }

    def release() -> None:
        with open(fifo, "w"):
            pass

    helper = threading.Thread(target=release, daemon=True)
    helper.start()
    try:
        with lemonmcp.Host(cfg, "on_collision", start="lazy") as host:
            result = host.call_tool("echo", {"text": "woke"})
            assert result.structured_content == {"text": "woke"}
    finally:
        # Unblock the helper whatever happened (a reader opening the FIFO).
        fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
        helper.join(PROC_S)
        os.close(fd)
    assert not helper.is_alive()
