"""AsyncClient against the fixture server. Every test runs its own event
loop under asyncio.wait_for, so nothing can hang the suite."""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any, Awaitable, Callable, Dict, List, TypeVar

import pytest

import lemonmcp
from lemonmcp import AsyncClient

from conftest import CALL_S, READY_S, pid_alive, wait_until

T = TypeVar("T")


def run(coro_fn: Callable[[], Awaitable[T]], timeout: float = 60.0) -> T:
    async def bounded() -> T:
        return await asyncio.wait_for(coro_fn(), timeout)

    return asyncio.run(bounded())


def test_helpers(fixture_path: str) -> None:
    async def main() -> None:
        # every helper, ping and set_logging_level included: the legacy era
        # (the default, "auto", finds the dual-era fixture modern)
        async with AsyncClient.stdio(fixture_path, call_timeout=CALL_S, protocol_mode="legacy") as c:
            assert c.server_info.name == "lemon-fixture"
            assert "echo" in {t.name for t in await c.list_tools()}
            assert (await c.call_tool("add", {"a": 1, "b": 2})).structured_content == {"sum": 3}
            assert (await c.call_tool("fail", {"message": "no"})).is_error
            assert len(await c.list_resources()) == 26
            assert len(await c.list_resource_templates()) == 1
            assert (await c.read_resource("fixture://item/25")).text == "item 25"
            assert (await c.get_prompt("greet", {"name": "Bo"})).text == "Hello, Bo!"
            assert {p.name for p in await c.list_prompts()} >= {"greet", "plain"}
            await c.ping()
            await c.set_logging_level("warning")
            await c.subscribe("fixture://item/01")
            await c.unsubscribe("fixture://item/01")
            assert "tools" in await c.call("tools/list")
            with pytest.raises(lemonmcp.ProtocolError):
                await c.call_tool("no_such_tool")
            with pytest.raises(lemonmcp.UnsupportedError):
                await c.complete("greet", "name", "x")
        assert c.closed

    run(main)


def test_pagination(fixture_path: str) -> None:
    async def main() -> None:
        async with AsyncClient.stdio(fixture_path, ["-page-size", "5"]) as c:
            page = await c.list_resources(all_pages=False)
            assert len(page) == 5 and page.next_cursor
            rest = await c.list_resources(page.next_cursor)
            assert len(rest) == 5 and rest[0].uri != page[0].uri
            assert len(await c.list_resources()) == 26

    run(main)


def test_hundred_concurrent_calls(fixture_path: str) -> None:
    async def main() -> None:
        async with AsyncClient.stdio(fixture_path, call_timeout=CALL_S) as c:
            results = await asyncio.gather(*(c.call_tool("echo", {"text": f"m{i}"}) for i in range(100)))
            assert [r.text for r in results] == [f"m{i}" for i in range(100)]
            slow = await asyncio.gather(*(c.call_tool("slow", {"ms": 200}) for _ in range(20)))
            assert all(not r.is_error for r in slow)

    run(main)


def test_progress_and_callbacks_run_on_the_loop(fixture_path: str) -> None:
    async def main() -> None:
        loop_thread = threading.current_thread()
        seen: List[Any] = []

        def progress(p: lemonmcp.Progress) -> None:
            seen.append((p.progress, threading.current_thread()))

        logs: List[threading.Thread] = []

        async def on_log(r: lemonmcp.LogRecord) -> None:  # a coroutine callback
            logs.append(threading.current_thread())

        async with AsyncClient.stdio(fixture_path, on_log=on_log) as c:
            await c.call_tool("slow", {"ms": 200, "steps": 4}, progress=progress)
            await c.call_tool("stderr", {"bytes": 100})
            for _ in range(100):
                if logs:
                    break
                await asyncio.sleep(0.02)
        assert [s[0] for s in seen] == [1, 2, 3, 4]
        assert all(s[1] is loop_thread for s in seen)
        assert logs and all(t is loop_thread for t in logs)

    run(main)


def test_task_cancellation_cancels_the_call(fixture_path: str) -> None:
    async def main() -> None:
        async with AsyncClient.stdio(fixture_path, call_timeout=CALL_S) as c:
            task = asyncio.ensure_future(c.call_tool("slow", {"ms": 20000, "steps": 200}))
            await asyncio.sleep(0.3)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            assert (await c.call_tool("echo", {"text": "after"})).text == "after"
            with pytest.raises(lemonmcp.TimeoutError):
                await c.call_tool("slow", {"ms": 5000}, timeout=0.2)

    run(main)


def test_async_host_handlers(fixture_path: str) -> None:
    async def main() -> None:
        async def sampling(params: Dict[str, Any]) -> Dict[str, Any]:
            await asyncio.sleep(0.05)  # answered later, from the loop
            return {"role": "assistant", "model": "m", "content": {"type": "text", "text": "async"}}

        async def roots(params: Dict[str, Any]) -> List[str]:
            return ["file:///async-root"]

        async with AsyncClient.stdio(fixture_path, sampling=sampling, roots=roots) as c:
            r = await c.call_tool("sample", {"prompt": "p", "max_tokens": 2})
            assert not r.is_error and json.loads(r.text)["content"]["text"] == "async"
            r = await c.call_tool("roots")
            assert json.loads(r.text)["roots"] == [{"uri": "file:///async-root"}]

    run(main)


def test_async_host_handler_error(fixture_path: str) -> None:
    async def main() -> None:
        async def sampling(params: Dict[str, Any]) -> Dict[str, Any]:
            raise lemonmcp.PolicyDenied("denied by test")

        # the refusal reaches the server as the answer to its request over a
        # session: the legacy era
        async with AsyncClient.stdio(fixture_path, sampling=sampling, protocol_mode="legacy") as c:
            r = await c.call_tool("sample", {"prompt": "p", "max_tokens": 2})
            assert r.is_error and "denied by test" in r.text

    run(main)


def test_close_with_calls_in_flight(fixture_path: str) -> None:
    async def main() -> None:
        c = AsyncClient.stdio(fixture_path)
        await c.open(timeout=READY_S)
        calls = [asyncio.ensure_future(c.call_tool("slow", {"ms": 20000})) for _ in range(10)]
        await asyncio.sleep(0.3)
        await c.close(timeout=10)
        outcomes = await asyncio.gather(*calls, return_exceptions=True)
        assert all(isinstance(o, lemonmcp.ClosedError) for o in outcomes), outcomes
        await c.close()  # idempotent
        with pytest.raises(lemonmcp.ClosedError):
            await c.ping()

    run(main)


@pytest.mark.parametrize(
    "flags,options,exc",
    [
        (["-init-error"], {}, lemonmcp.ProtocolError),
        (["-no-init"], {"ready_timeout": 0.5}, lemonmcp.TimeoutError),
    ],
)
def test_handshake_failures(fixture_path: str, flags: List[str], options: Dict[str, Any], exc: Any) -> None:
    async def main() -> None:
        c = AsyncClient.stdio(fixture_path, flags, **options)
        with pytest.raises(exc):
            await c.open()
        assert c.closed

    run(main)


def test_wait_ready_timeout_leaves_the_handshake_going(fixture_path: str) -> None:
    async def main() -> None:
        c = AsyncClient.stdio(fixture_path, ["-no-init"], ready_timeout=30)
        await c.connect()
        with pytest.raises(lemonmcp.TimeoutError):
            await c.wait_ready(timeout=0.3)
        assert c.state == "connecting"
        await c.close(timeout=5)

    run(main)


def test_unclosed_async_client_is_collected(fixture_path: str) -> None:
    import gc

    async def main() -> int:
        c = AsyncClient.stdio(fixture_path)
        await c.open(timeout=READY_S)
        return int((await c.call_tool("pid")).text)

    pid = run(main)
    gc.collect()
    assert wait_until(lambda: not pid_alive(pid), 15)
