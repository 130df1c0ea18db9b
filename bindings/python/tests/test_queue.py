"""Completions through the library's completion queue (lemonmcp/_queue.py):
the blocking client's calls wait in poll() on their thread's
queue, the asyncio client's calls complete into its loop's queue. Here:
cancellation, timeouts, close racing queued calls, Ctrl-C during a plain
blocking call, calls from many threads, and no queue left behind."""

from __future__ import annotations

import asyncio
import gc
import signal
import subprocess
import sys
import threading
import time
from typing import Any, Awaitable, Callable, List, TypeVar

import pytest

import lemonmcp
from lemonmcp import AsyncClient, _queue

from conftest import CALL_S, PKG_ROOT, READY_S, env_for_child, wait_until

T = TypeVar("T")
SLOW = {"ms": 20000, "steps": 2}
MakeClient = Callable[..., lemonmcp.Client]


def run(coro_fn: Callable[[], Awaitable[T]], timeout: float = 60.0) -> T:
    async def bounded() -> T:
        return await asyncio.wait_for(coro_fn(), timeout)

    return asyncio.run(bounded())


def live_queues() -> int:
    return int(lemonmcp.diagnostics()["live_queues"])


def pending_calls() -> int:
    return int(lemonmcp.diagnostics()["pending_calls"])


# ------------------------------------------------------------ the raw queue


# These tests count the library's requests in flight (pending_calls). In
# the 2026-07-28 era a ready client keeps its own subscriptions/listen
# request open, and counted, so they speak the legacy era; the queue works
# the same in both.
LEGACY = {"mode": "legacy"}


@pytest.fixture
def client(make_client: MakeClient) -> lemonmcp.Client:
    return make_client(protocol=LEGACY)


def test_queue_pops_every_completion_with_its_tag(client: lemonmcp.Client) -> None:
    q = _queue.CompletionQueue()
    try:
        ids = {}
        for tag in range(100, 120):
            ids[tag] = client._session.start_queued("tools/call", {"name": "echo", "arguments": {"text": str(tag)}}, {}, q.handle, tag)
        got: List[_queue.Record] = []
        deadline = time.monotonic() + CALL_S
        while len(got) < 20 and time.monotonic() < deadline:
            got.extend(q.pop())
            time.sleep(0.005)
        assert sorted(r[0] for r in got) == list(range(100, 120))
        for tag, call_id, status, data in got:
            assert call_id == ids[tag] and status == 0
            assert f'"text":"{tag}"'.encode() in data
        assert q.pop() == []
    finally:
        q.free()


def test_a_freed_queue_drops_completions_and_leaks_nothing(client: lemonmcp.Client) -> None:
    base = live_queues()
    q = _queue.CompletionQueue()
    assert live_queues() == base + 1
    for tag in range(5):
        client._session.start_queued("tools/call", {"name": "slow", "arguments": {"ms": 200, "steps": 2}}, {}, q.handle, tag)
    q.free()
    assert live_queues() == base
    assert wait_until(lambda: pending_calls() == 0, CALL_S)
    assert client.call_tool("echo", {"text": "after"}).text == "after"
    with pytest.raises(lemonmcp.InvalidHandle, match="queue"):  # a freed queue: the call is refused
        client._session.start_queued("ping", None, {}, q.handle, 1)


# ------------------------------------------------------------ blocking client


def test_timeout_on_the_main_thread(client: lemonmcp.Client) -> None:
    assert threading.current_thread() is threading.main_thread()
    with pytest.raises(lemonmcp.TimeoutError):
        client.call_tool("slow", SLOW, timeout=0.2)
    assert client.call_tool("echo", {"text": "next"}).text == "next"
    assert wait_until(lambda: pending_calls() == 0, CALL_S)


def test_close_from_another_thread_ends_a_blocked_call(make_client: MakeClient) -> None:
    c = make_client(protocol=LEGACY)
    closer = threading.Timer(0.3, c.close)
    closer.start()
    # 10 minutes: only the close can end the call with ClosedError (or
    # Cancelled); the client's call_timeout would raise TimeoutError.
    with pytest.raises((lemonmcp.ClosedError, lemonmcp.Cancelled)):
        c.call_tool("slow", {"ms": 600000})
    closer.join()
    with pytest.raises(lemonmcp.ClosedError):
        c.call_tool("echo", {"text": "closed"})


def test_calls_with_progress_from_many_threads(client: lemonmcp.Client) -> None:
    """Blocking calls from worker threads: each thread its own queue, each
    call its own result and its own progress, all of it before the call
    returns; each thread's queue is freed with its thread."""
    errors: List[BaseException] = []
    base = live_queues()

    def worker(i: int) -> None:
        try:
            for j in range(5):
                mine: List[lemonmcp.Progress] = []
                r = client.call_tool("slow", {"ms": 20, "steps": 2}, progress=mine.append)
                assert r.text == "done", r.text
                assert [p.progress for p in mine] == [1, 2]
                assert client.call_tool("echo", {"text": f"{i}.{j}"}).text == f"{i}.{j}"
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors
    del threads
    gc.collect()
    # Each thread's queue went with its thread.
    assert wait_until(lambda: live_queues() <= base, 5), (live_queues(), base)


CHILD_PLAIN = r"""
import sys, threading, time
import lemonmcp

fixture, log = sys.argv[1], sys.argv[2]
c = lemonmcp.Client.stdio(fixture, ["-log-file", log], call_timeout=60, protocol={"mode": "legacy"})
c.open(timeout=15)

def announce():
    while lemonmcp.diagnostics()["pending_calls"] == 0:
        time.sleep(0.01)
    print("in flight", flush=True)

threading.Thread(target=announce, daemon=True).start()
try:
    c.call_tool("slow", {"ms": 600000, "steps": 6000})
    print("call finished?!", flush=True)
except KeyboardInterrupt:
    print("caught KeyboardInterrupt", flush=True)
print("echo:", c.call_tool("echo", {"text": "after"}).text, flush=True)
print("pending:", lemonmcp.diagnostics()["pending_calls"], flush=True)
c.close()
"""


def test_ctrl_c_during_a_plain_blocking_call(fixture_path: str, tmp_path: Any) -> None:
    """No progress handler: the main thread waits in poll() on its queue;
    SIGINT interrupts it, the call is cancelled, the stale completion is
    dropped and the next call gets its own result."""
    log = str(tmp_path / "stdin.log")
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD_PLAIN, fixture_path, log],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env_for_child(),
        cwd=PKG_ROOT,
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        assert "in flight" in first, (first, proc.stderr.read() if proc.stderr else "")
        proc.send_signal(signal.SIGINT)
        # The call takes 10 minutes and its timeout is one: only the SIGINT
        # ends it before this wait gives up.
        try:
            out, err = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            pytest.fail("the child did not finish after SIGINT: Ctrl-C did not interrupt the call")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    assert proc.returncode == 0, err
    assert "caught KeyboardInterrupt" in out
    assert "echo: after" in out
    assert "pending: 0" in out
    assert "call finished" not in out
    with open(log) as f:
        assert "notifications/cancelled" in f.read()


# ------------------------------------------------------------ asyncio


def test_async_cancel_cancels_the_call(fixture_path: str) -> None:
    async def main() -> None:
        async with AsyncClient.stdio(fixture_path, call_timeout=CALL_S, ready_timeout=READY_S, protocol=LEGACY) as c:
            task = asyncio.ensure_future(c.call_tool("slow", SLOW))
            await asyncio.sleep(0.2)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            deadline = time.monotonic() + CALL_S
            while pending_calls() and time.monotonic() < deadline:
                await asyncio.sleep(0.02)
            assert pending_calls() == 0
            lq = _queue.loop_queue(asyncio.get_running_loop())
            assert lq is not None and not lq.waiting
            assert (await c.call_tool("echo", {"text": "next"})).text == "next"

    run(main)


def test_async_timeout(fixture_path: str) -> None:
    async def main() -> None:
        async with AsyncClient.stdio(fixture_path, ready_timeout=READY_S, protocol=LEGACY) as c:
            with pytest.raises(lemonmcp.TimeoutError):
                await c.call_tool("slow", SLOW, timeout=0.2)
            results = await asyncio.gather(
                *(c.call_tool("slow", SLOW, timeout=0.2) for _ in range(5)), return_exceptions=True
            )
            assert all(isinstance(r, lemonmcp.TimeoutError) for r in results), results
            assert (await c.call_tool("echo", {"text": "next"})).text == "next"

    run(main)


def test_async_close_races_queued_calls(fixture_path: str) -> None:
    async def main() -> None:
        c = AsyncClient.stdio(fixture_path, call_timeout=CALL_S, ready_timeout=READY_S, protocol=LEGACY)
        await c.open()
        calls = [asyncio.ensure_future(c.call_tool("slow", SLOW)) for _ in range(8)]
        calls += [asyncio.ensure_future(c.call_tool("echo", {"text": str(i)})) for i in range(8)]
        await asyncio.sleep(0)
        closing = asyncio.ensure_future(c.close())
        more = [asyncio.ensure_future(c.call_tool("echo", {"text": "late"})) for _ in range(4)]
        results = await asyncio.gather(*calls, *more, return_exceptions=True)
        await closing
        for r in results:
            assert isinstance(r, (lemonmcp.CallToolResult, lemonmcp.ClosedError, lemonmcp.Cancelled)), r
        assert all(isinstance(r, (lemonmcp.ClosedError, lemonmcp.Cancelled)) for r in results[:8])
        lq = _queue.loop_queue(asyncio.get_running_loop())
        assert lq is not None and not lq.waiting

    run(main)


# Of the calls made by the tasks one drain resumed, the first goes at once
# and the others start as a burst once those tasks have all run, their
# requests held and sent together (_loop.LoopCaller._start_burst).


def test_async_bursts_start_calls_together(fixture_path: str) -> None:
    async def main() -> None:
        async with AsyncClient.stdio(fixture_path, call_timeout=CALL_S, ready_timeout=READY_S, protocol=LEGACY) as c:
            sess = c._session
            hold = sess.hold_sends
            holds: List[Any] = []

            def counted() -> Any:
                held = hold()
                holds.append(held)
                return held

            sess.hold_sends = counted  # type: ignore[method-assign]

            async def work(k: int) -> List[str]:
                return [(await c.call_tool("echo", {"text": f"{k}.{i}"})).text for i in range(5)]

            tasks = [asyncio.ensure_future(work(k)) for k in range(16)]
            await asyncio.sleep(0)  # each task has made its first call
            # The loop stays busy until all 16 completed into its queue: its
            # next drain resolves them together.
            assert wait_until(lambda: pending_calls() == 0, CALL_S)
            time.sleep(0.1)
            got = await asyncio.gather(*tasks)
            assert got == [[f"{k}.{i}" for i in range(5)] for k in range(16)]
            assert holds and all(h is not None for h in holds), holds
            lq = _queue.loop_queue(asyncio.get_running_loop())
            assert lq is not None and not lq.waiting and not c._caller._burst
            assert pending_calls() == 0

    run(main)


@pytest.mark.parametrize("how", ["cancelled before the burst starts", "refused by the library"])
def test_async_burst_call_that_does_not_start(fixture_path: str, how: str) -> None:
    """A call of a burst cancelled before the burst starts is never made;
    one the library refuses raises its error; the burst's others go on."""

    async def main() -> None:
        async with AsyncClient.stdio(fixture_path, call_timeout=CALL_S, ready_timeout=READY_S, protocol=LEGACY) as c:
            sess = c._session
            start = sess.start_encoded_queued
            started: List[bytes] = []

            def counted(mb: bytes, pjson: Any, *rest: Any) -> int:
                started.append(pjson)
                return start(mb, pjson, *rest)

            slow = asyncio.ensure_future(c.call_tool("slow", SLOW))
            await asyncio.sleep(0)  # slow is in flight
            sess.start_encoded_queued = counted  # type: ignore[method-assign]
            lq = _queue.loop_queue(asyncio.get_running_loop())
            assert lq is not None
            lq.bursting = True  # as a drain that resolved several calls sets it
            lead = asyncio.ensure_future(c.call_tool("echo", {"text": "lead"}))  # goes at once, opens the burst
            if how == "cancelled before the burst starts":
                odd = asyncio.ensure_future(c.call_tool("echo", {"text": "odd"}))
            else:  # the library checks this option, not the binding
                odd = asyncio.ensure_future(c.call_tool("echo", {"text": "odd"}, verify={"size": 1}))
            other = asyncio.ensure_future(c.call_tool("echo", {"text": "other"}))
            await asyncio.sleep(0)  # all three took their first step: two wait for the burst
            assert len(c._caller._burst) == 2 and len(started) == 1 and b"lead" in started[0], started
            lq.bursting = False
            if how == "cancelled before the burst starts":
                odd.cancel()
                with pytest.raises(asyncio.CancelledError):
                    await odd
                assert (await other).text == "other"
                assert len(started) == 2 and b"other" in started[1], started
            else:
                with pytest.raises(lemonmcp.InvalidArgument, match="verify"):
                    await odd
                assert (await other).text == "other"
                assert len(started) == 3, started
            assert (await lead).text == "lead"
            slow.cancel()
            with pytest.raises(asyncio.CancelledError):
                await slow
            deadline = time.monotonic() + CALL_S
            while pending_calls() and time.monotonic() < deadline:
                await asyncio.sleep(0.02)
            assert pending_calls() == 0
            assert not lq.waiting

    run(main)


def test_one_queue_per_loop_and_none_left_behind(fixture_path: str) -> None:
    base = live_queues()

    async def main() -> None:
        async with AsyncClient.stdio(fixture_path, ready_timeout=READY_S, protocol=LEGACY) as a, AsyncClient.stdio(
            fixture_path, ready_timeout=READY_S, protocol=LEGACY
        ) as b:
            ra, rb = await asyncio.gather(a.call_tool("echo", {"text": "a"}), b.call_tool("echo", {"text": "b"}))
            assert (ra.text, rb.text) == ("a", "b")
            assert a._caller._lq is b._caller._lq is _queue.loop_queue(asyncio.get_running_loop())

    for _ in range(3):
        run(main)
    gc.collect()
    assert wait_until(lambda: live_queues() <= base, 5), (live_queues(), base)
