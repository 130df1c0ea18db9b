"""lemonmcp.Host and lemonmcp.aio.AsyncHost against fixture servers: both
protocol eras, a server that never starts, prefixed tool names, a crash and
its restart, server requests answered with the server's name."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any, Dict, List, Tuple

import pytest

import lemonmcp
from lemonmcp.aio import AsyncHost


def _config(fixture: str) -> Dict[str, Any]:
    return {
        "defaults": {"timeouts": {"ready_ms": 5000, "close_grace_ms": 300}},
        "mcpServers": {
            # alpha pins the legacy era: both eras in one host
            "alpha": {"command": fixture, "protocol": {"mode": "legacy"}, "restart": {"backoff_ms": 20, "max_restarts": 3}},
            "beta": {"command": fixture, "protocol": {"mode": "modern"}},
            "broken": {"command": "/nonexistent/lmcp-py-server", "restart": {"backoff_ms": 5000}},
        },
    }


def _wait(pred: Any, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(0.02)
    return False


def test_host_lifecycle(fixture_path: str) -> None:
    events: List[Tuple[str, Dict[str, Any]]] = []
    with lemonmcp.Host(_config(fixture_path), on_event=lambda k, p: events.append((k, p))) as host:
        servers = host.servers()
        assert servers["alpha"]["state"] == "ready"
        assert servers["alpha"]["era"] == "legacy"
        assert servers["beta"]["era"] == "modern"
        assert servers["broken"]["state"] == "failed"
        assert "lmcp-py-server" in servers["broken"]["last_error"]
        assert servers["alpha"]["restarts"] == 0

        tools = {t.name: t for t in host.list_tools()}
        assert {"alpha__echo", "beta__echo"} <= set(tools)
        assert tools["beta__echo"].server == "beta"
        assert tools["beta__echo"].original_name == "echo"
        assert isinstance(tools["beta__echo"], lemonmcp.Tool)

        assert host.call_tool("beta__echo", {"text": "hi"}).text == "hi"
        assert "5" in json.dumps(host.call("alpha", "tools/call", {"name": "add", "arguments": {"a": 2, "b": 3}}))
        assert {p.server for p in host.list_prompts()} == {"alpha", "beta"}
        assert {r.server for r in host.list_resources()} == {"alpha", "beta"}

        with pytest.raises(lemonmcp.NotFound):
            host.call_tool("gamma__echo", {})

        # A crash: the call fails once, the server comes back.
        with pytest.raises(lemonmcp.ClosedError):
            host.call_tool("alpha__crash")
        assert _wait(lambda: host.servers()["alpha"]["state"] == "ready" and host.servers()["alpha"]["restarts"] == 1)
        assert host.call_tool("alpha__echo", {"text": "back"}).text == "back"
        assert _wait(lambda: any(k == "restarting" and p.get("server") == "alpha" for k, p in events))
    with pytest.raises(lemonmcp.ClosedError, match="the host is closed"):
        host.list_tools()
    host.close()  # idempotent


def test_host_tool_prefix_and_path(fixture_path: str, tmp_path: Any) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"a": {"command": fixture_path}, "b": {"command": fixture_path, "tools": {"allow": ["echo"]}}}}))
    with lemonmcp.Host(str(path), tool_prefix="on_collision") as host:
        names = {t.name for t in host.list_tools()}
        assert {"a__echo", "b__echo", "add"} <= names
        assert host.call_tool("add", {"a": 1, "b": 2}).text == "3"
        with pytest.raises(lemonmcp.PolicyDenied):
            host.call_tool("b__add", {"a": 1, "b": 2})


def test_host_config_errors() -> None:
    with pytest.raises(lemonmcp.InvalidArgument, match="config.mcpServers.a.env.K"):
        lemonmcp.Host({"mcpServers": {"a": {"command": "x", "env": {"K": "${LMCP_SURELY_UNSET_VAR}"}}}})
    with pytest.raises(lemonmcp.InvalidArgument, match="tool_prefix"):
        lemonmcp.Host({"mcpServers": {}}, tool_prefix="sometimes")


def test_app_requests_carry_the_server(fixture_path: str) -> None:
    # The Client's handler keywords; the handler is declared to every
    # server (defaults.handlers) and its params name the server that asked.
    seen: List[str] = []

    def elicitation(params: Any) -> Dict[str, Any]:
        seen.append(f"{params['message']} {params.server}")
        return {"action": "accept", "content": {"name": params.server}}

    cfg = {"mcpServers": {"a": {"command": fixture_path}, "b": {"command": fixture_path}}}
    with lemonmcp.Host(cfg, elicitation=elicitation) as host:
        assert "b" in host.call_tool("b__elicit", {"message": "who?"}).text
    assert seen == ["who? b"]


@pytest.mark.parametrize("host_kind", ["sync", "async"])
def test_close_keeps_each_servers_grace(fixture_path: str, host_kind: str, tmp_path: Any) -> None:
    """A close lets each server exit on its own when its stdin closes (the
    close grace) instead of killing it: AsyncHost.close once passed a 0 ms
    timeout, which cuts the grace short and SIGKILLs the process group. The
    shell around the server writes the server's exit status only if it is
    not killed with it."""
    status = tmp_path / "status"
    script = f'"{fixture_path}"; echo $? > "{status}"'
    cfg = {"mcpServers": {"a": {"command": "/bin/sh", "args": ["-c", script]}}}
    if host_kind == "sync":
        with lemonmcp.Host(cfg) as host:
            host.wait_ready(10)
    else:

        async def main() -> None:
            async with AsyncHost(cfg) as host:
                await host.wait_ready(10)

        asyncio.run(main())
    assert status.exists(), "the server was killed instead of closed"
    assert status.read_text().strip() == "0"

def test_async_host(fixture_path: str) -> None:
    async def main() -> None:
        async with AsyncHost(_config(fixture_path)) as host:
            servers = await host.servers()
            assert servers["beta"]["state"] == "ready"
            tools = await host.list_tools()
            assert any(t.name == "alpha__echo" and t.server == "alpha" for t in tools)
            results = await asyncio.gather(*(host.call_tool("alpha__echo", {"text": str(i)}) for i in range(8)))
            assert [r.text for r in results] == [str(i) for i in range(8)]
            assert len(await host.list_prompts()) > 0

    asyncio.run(main())


def test_a_host_call_takes_every_call_option_a_client_call_takes(fixture_path: str) -> None:
    """Host.call_tool and Host.call take the client's call options, all of
    them (one list, lemonmcp._base._CALL_OPTION_KEYS), with the same
    meaning: here each is given at once; the call's own progress callable
    and verify show theirs."""
    from lemonmcp._base import _CALL_OPTION_KEYS

    cfg = {"mcpServers": {"fx": {"command": fixture_path}}}
    progress: List[Any] = []
    every = {
        "timeout": 30,
        "reset_timeout_on_progress": True,
        "max_total": 60,
        "all_pages": False,
        "progress": progress.append,
        "wait_ready": True,
        "meta": {"example.com/k": "v"},
        "no_cache": True,
        "task": False,
        "trace": {"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"},
        "fail_if_restarting": True,
    }
    # the ms spellings exclude their seconds twins; verify is resources/read's
    others = {"timeout_ms", "max_total_ms", "verify"}
    assert set(every) | others == set(_CALL_OPTION_KEYS)
    with lemonmcp.Host(cfg) as host:
        r = host.call_tool("fx__slow", {"ms": 60, "steps": 3}, **every)
        assert not r.is_error
        assert len(progress) == 3, "the call's own progress callable"
        r = host.call_tool("fx__echo", {"text": "x"}, timeout_ms=30000, max_total_ms=60000)
        assert r.text == "x"
        read = host.call("fx", "resources/read", {"uri": "fixture://item/01"}, verify={"size": 7})
        assert read["contents"][0]["text"] == "item 01"
        with pytest.raises(lemonmcp.ProtocolError):
            host.call("fx", "resources/read", {"uri": "fixture://item/01"}, verify={"size": 8})
        with pytest.raises(TypeError, match="colour"):
            host.call_tool("fx__echo", {"text": "x"}, colour="blue")
