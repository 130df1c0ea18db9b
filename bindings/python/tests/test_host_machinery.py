"""lemonmcp.Host and AsyncHost on the client's machinery: a handler's
exception is logged, AsyncHost runs nothing on executor threads and never
blocks its loop (a slow list included), and a host that is never closed is
collected and its library handle freed. (Ctrl-C during a blocking host call
or list: test_interrupt.py.)"""

from __future__ import annotations

import asyncio
import gc
import logging
import threading
import weakref
from typing import Any, Callable, Dict, List

import pytest

import lemonmcp
from lemonmcp.aio import AsyncHost

from conftest import wait_until


def _config(fixture: str, *names: str) -> Dict[str, Any]:
    return {
        "defaults": {"timeouts": {"ready_ms": 15000, "close_grace_ms": 300}},
        "mcpServers": {n: {"command": fixture} for n in names or ("a",)},
    }


def _live_hosts() -> int:
    return int(lemonmcp.diagnostics()["live_hosts"])


def test_a_request_handlers_exception_is_logged(fixture_path: str, caplog: pytest.LogCaptureFixture) -> None:
    def elicitation(params: Any) -> Dict[str, Any]:
        raise RuntimeError("the elicitation handler broke")

    caplog.set_level(logging.ERROR, logger="lemonmcp")
    with lemonmcp.Host(_config(fixture_path), elicitation=elicitation) as host:
        try:
            result = host.call_tool("a__elicit", {"message": "who?"})
            assert result.is_error, result
        except lemonmcp.LemonMCPError:
            pass  # the server may answer the refusal with an error instead
    records = [r for r in caplog.records if "the elicitation handler raised" in r.getMessage()]
    assert records, [r.getMessage() for r in caplog.records]
    assert records[0].exc_info is not None and "the elicitation handler broke" in str(records[0].exc_info[1])


def test_an_event_callbacks_exception_is_logged(fixture_path: str, caplog: pytest.LogCaptureFixture) -> None:
    def on_event(kind: str, payload: Dict[str, Any]) -> None:
        raise ValueError(f"on_event broke at {kind} of {payload.get('server')}")

    caplog.set_level(logging.ERROR, logger="lemonmcp")
    with lemonmcp.Host(_config(fixture_path), on_event=on_event) as host:
        assert host.servers()["a"]["state"] == "ready"
        assert wait_until(lambda: any("on_event broke at ready of a" in str(r.exc_info[1]) for r in caplog.records if r.exc_info))
    assert any("a callback raised" in r.getMessage() for r in caplog.records)


def test_async_host_uses_an_executor_thread_only_to_close(fixture_path: str) -> None:
    """Calls, lists, handlers and waits run on the loop; only the close runs
    in an executor thread (as AsyncClient's), because the library's close
    has no form that completes later and a 0 ms close kills the servers."""
    seen: List[str] = []
    executor_uses: List[str] = []

    async def main() -> None:
        loop = asyncio.get_running_loop()
        run_in_executor = loop.run_in_executor

        def close_only(executor: Any, fn: Any, *args: Any) -> Any:
            executor_uses.append(getattr(fn, "__name__", repr(fn)))
            if executor_uses[-1] != "close_started":
                raise AssertionError(f"AsyncHost used run_in_executor for {executor_uses[-1]}")
            return run_in_executor(executor, fn, *args)

        loop.run_in_executor = close_only  # type: ignore[method-assign]
        on_loop = threading.get_ident()

        async def elicitation(params: Any) -> Dict[str, Any]:
            assert threading.get_ident() == on_loop  # handlers run on the loop
            seen.append(params.server)
            return {"action": "accept", "content": {"name": params.server}}

        async with AsyncHost(_config(fixture_path, "a", "b"), elicitation=elicitation) as host:
            assert (await host.servers())["b"]["state"] == "ready"
            assert any(t.name == "a__echo" for t in await host.list_tools())
            results = await asyncio.gather(*(host.call_tool("b__echo", {"text": str(i)}) for i in range(8)))
            assert [r.text for r in results] == [str(i) for i in range(8)]
            assert "b" in (await host.call_tool("b__elicit", {"message": "who?"})).text
            assert "5" in str(await host.call("a", "tools/call", {"name": "add", "arguments": {"a": 2, "b": 3}}))
            # Cancelling the awaiting task cancels the call.
            slow = asyncio.ensure_future(host.call_tool("a__slow", {"ms": 30000, "steps": 300}))
            await asyncio.sleep(0.05)
            slow.cancel()
            with pytest.raises(asyncio.CancelledError):
                await slow
        assert host.closed

    asyncio.run(main())
    assert seen == ["b"]
    assert executor_uses == ["close_started"]


def test_async_host_lists_while_the_loop_runs(fixture_path: str) -> None:
    """A slow list (the server answers lists after half a minute) is
    awaited on the loop: a ticking task keeps running and another call
    completes while the list and the search are pending; cancelling their
    tasks ends the waits."""
    cfg = _config(fixture_path)
    cfg["mcpServers"]["slow"] = {"command": fixture_path, "args": ["-list-delay-ms", "30000"]}

    async def main() -> None:
        ticks = 0

        async def tick() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0.01)
                ticks += 1

        async with AsyncHost(cfg) as host:
            ticker = asyncio.ensure_future(tick())
            pending = [
                asyncio.ensure_future(host.list_tools()),
                asyncio.ensure_future(host.list_prompts()),
                asyncio.ensure_future(host.search_tools("adds two numbers")),
            ]
            start = ticks
            await asyncio.wait_for(_until(lambda: ticks >= start + 5), 20)
            assert (await host.call_tool("a__echo", {"text": "meanwhile"})).text == "meanwhile"
            assert not any(t.done() for t in pending), "the lists answered before the slow server did"
            for t in pending:
                t.cancel()
            for t in pending:
                with pytest.raises(asyncio.CancelledError):
                    await t
            ticker.cancel()

    asyncio.run(main())


async def _until(cond: Callable[[], bool]) -> None:
    while not cond():
        await asyncio.sleep(0.01)


def test_host_lists_and_search_agree_sync_and_async(fixture_path: str) -> None:
    """Host and AsyncHost give the same lists and search results (both
    through lmcp_host_query), and a bad search is refused by name."""
    with lemonmcp.Host(_config(fixture_path, "a", "b")) as host:
        tools = host.list_tools()
        prompts = host.list_prompts()
        resources = host.list_resources()
        found = host.search_tools("adds two numbers", limit=2)
        with pytest.raises(lemonmcp.NotFound, match="zz"):
            host.search_tools("add", servers=["zz"])
        with pytest.raises(lemonmcp.InvalidArgument, match="no word"):
            host.search_tools("the")
    assert {t.name for t in tools} >= {"a__echo", "b__echo"}
    assert [r.name for r in found] == ["a__add", "b__add"]

    async def main() -> None:
        async with AsyncHost(_config(fixture_path, "a", "b")) as ahost:
            assert await ahost.list_tools() == tools
            assert await ahost.list_prompts() == prompts
            assert await ahost.list_resources() == resources
            assert await ahost.search_tools("adds two numbers", limit=2) == found
            with pytest.raises(lemonmcp.InvalidArgument, match="limit"):
                await ahost.search_tools("add", limit=0)

    asyncio.run(main())


def _holder_cycle(host_cfg: Dict[str, Any]) -> lemonmcp.Host:
    # The callback refers to the host: a reference cycle through the session.
    holder: Dict[str, Any] = {}
    host = lemonmcp.Host(host_cfg, on_event=lambda kind, payload: holder.get("host"))
    holder["host"] = host
    return host


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda cfg: lemonmcp.Host(cfg), id="plain"),
        pytest.param(lambda cfg: lemonmcp.Host(cfg, on_event=lambda k, p: None, roots=["/tmp"]), id="with callbacks"),
        pytest.param(_holder_cycle, id="in a reference cycle"),
    ],
)
def test_an_unclosed_host_is_collected_and_freed(fixture_path: str, make: Callable[[Dict[str, Any]], lemonmcp.Host]) -> None:
    base = _live_hosts()
    host = make(_config(fixture_path))
    host.connect()
    host.wait_ready(15)
    assert host.servers()["a"]["state"] == "ready"
    assert _live_hosts() == base + 1
    ref = weakref.ref(host)
    del host
    gc.collect()
    assert ref() is None, gc.get_referrers(ref())
    assert wait_until(lambda: _live_hosts() == base), (_live_hosts(), base)


def _never_ready_config(fixture: str) -> Dict[str, Any]:
    return {
        "defaults": {"timeouts": {"ready_ms": 60000, "close_grace_ms": 300}},
        "mcpServers": {"mute": {"command": fixture, "args": ["-no-init"]}, "ok": {"command": fixture}},
    }


def test_wait_ready_names_the_servers_still_connecting(fixture_path: str) -> None:
    host = lemonmcp.Host(_never_ready_config(fixture_path))
    try:
        host.connect()
        with pytest.raises(lemonmcp.TimeoutError, match=r"after 0.3 s, still connecting: mute$"):
            host.wait_ready(0.3)
        assert wait_until(lambda: host.servers()["ok"]["state"] == "ready")
    finally:
        host.close(timeout=5)

    async def bounded() -> None:
        ahost = AsyncHost(_never_ready_config(fixture_path))
        await ahost.connect()
        try:
            with pytest.raises(lemonmcp.TimeoutError, match=r"after 0.3 s, still connecting: mute$"):
                await ahost.wait_ready(0.3)
        finally:
            await ahost.close(timeout=5)
        assert ahost.closed

    asyncio.run(bounded())


@pytest.mark.parametrize(
    "kwargs, error, words",
    [
        pytest.param({"on_request": lambda kind, payload: {}}, TypeError, "on_request: a Host takes", id="on_request"),
        pytest.param({"sampling": "not callable"}, lemonmcp.InvalidArgument, "sampling: expected a callable", id="sampling"),
        pytest.param({"roots": 42}, lemonmcp.InvalidArgument, "roots: expected a list of roots", id="roots"),
        pytest.param({"on_evnt": print}, lemonmcp.InvalidArgument, "on_evnt: not JSON-serializable", id="misspelt"),
        # An unknown member is a warning (host.warnings), refused under strict.
        pytest.param({"mcpServer": {}, "strict": True}, lemonmcp.InvalidArgument, "mcpServer", id="unknown field"),
    ],
)
def test_bad_keywords_are_refused_by_name(kwargs: Dict[str, Any], error: type, words: str) -> None:
    with pytest.raises(error, match=words):
        lemonmcp.Host({"mcpServers": {}}, **kwargs)


def test_the_clients_handler_keywords_answer_every_server(fixture_path: str) -> None:
    asked: List[str] = []

    def sampling(params: Any) -> Dict[str, Any]:
        asked.append(f"sampling {params.server}")
        return {"role": "assistant", "content": {"type": "text", "text": f"from {params.server}"}, "model": "m"}

    def roots(params: Any) -> List[str]:
        asked.append(f"roots {params.server}")
        return [f"file:///srv/{params.server}"]

    with lemonmcp.Host(_config(fixture_path, "a", "b"), sampling=sampling, roots=roots) as host:
        assert "file:///srv/b" in host.call_tool("b__roots").text
        assert "from a" in host.call_tool("a__sample", {"prompt": "hi", "max_tokens": 5}).text
    assert asked == ["roots b", "sampling a"]
