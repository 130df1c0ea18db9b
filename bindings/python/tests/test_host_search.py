"""Tool search and deferred exposure through lemonmcp.Host, AsyncHost and
the command line (issue 22), against two fixture servers."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, Dict

import pytest

import lemonmcp
from lemonmcp.aio import AsyncHost

from cli_run import run_cli


def _config(fixture: str, **extra: Any) -> Dict[str, Any]:
    cfg: Dict[str, Any] = {
        "defaults": {"timeouts": {"ready_ms": 5000, "close_grace_ms": 300}},
        "mcpServers": {"alpha": {"command": fixture}, "beta": {"command": fixture, "tools": {"deny": ["pid"]}}},
    }
    cfg.update(extra)
    return cfg


def test_search_tools(fixture_path: str) -> None:
    with lemonmcp.Host(_config(fixture_path)) as host:
        results = host.search_tools("process id", limit=1)
        assert [(r.name, r.server) for r in results] == [("alpha__pid", "alpha")]
        assert isinstance(results[0], lemonmcp.ToolSearchResult)
        assert results[0].score > 0
        assert results[0].tool.original_name == "pid" and results[0].tool.server == "alpha"

        # Ties by name; the servers option; a result's name is callable.
        assert [r.name for r in host.search_tools("adds", limit=2)] == ["alpha__add", "beta__add"]
        only_beta = host.search_tools("adds", servers=["beta"])
        assert only_beta and {r.server for r in only_beta} == {"beta"}
        assert host.call_tool(only_beta[0].name, {"a": 2, "b": 3}).text == "5"
        assert host.search_tools("kubernetes deployment") == []
        assert host.search_tools("returns text") == host.search_tools("text returns")


@pytest.mark.parametrize(
    "query,kwargs,exc,words",
    [
        ("", {}, lemonmcp.InvalidArgument, "query is empty"),
        ("the of", {}, lemonmcp.InvalidArgument, "no word to search for"),
        ("add", {"limit": 0}, lemonmcp.InvalidArgument, "options.limit"),
        ("add", {"limit": 101}, lemonmcp.InvalidArgument, "from 1 to 100"),
        ("add", {"servers": ["gamma"]}, lemonmcp.NotFound, "gamma"),
    ],
)
def test_search_tools_refuses(fixture_path: str, query: str, kwargs: Dict[str, Any], exc: type, words: str) -> None:
    with lemonmcp.Host(_config(fixture_path)) as host:
        with pytest.raises(exc) as info:
            host.search_tools(query, **kwargs)
        assert words in str(info.value)


@pytest.mark.parametrize(
    "query,kwargs",
    [(b"add", {}), ("add", {"limit": "3"}), ("add", {"limit": True}), ("add", {"servers": "alpha"})],
)
def test_search_tools_type_errors(fixture_path: str, query: Any, kwargs: Dict[str, Any]) -> None:
    with lemonmcp.Host(_config(fixture_path)) as host:
        with pytest.raises(TypeError):
            host.search_tools(query, **kwargs)


def test_deferred_tools(fixture_path: str) -> None:
    cfg = _config(fixture_path, deferred_tools={"always_loaded": ["alpha__echo"], "max_results": 3})
    with lemonmcp.Host(cfg) as host:
        assert [t.name for t in host.list_tools()] == ["alpha__echo", "search_tools"]
        res = host.call_tool("search_tools", {"query": "process id", "limit": 1})
        assert not res.is_error
        found = res.structured_content["tools"]
        assert [t["name"] for t in found] == ["alpha__pid"]
        assert json.loads(res.text) == res.structured_content
        assert host.call_tool(found[0]["name"]).text.isdigit()
        bad = host.call_tool("search_tools", {})
        assert bad.is_error and "query" in bad.text
        # The search API sees the whole catalogue, deferred or not.
        assert "beta__add" in [r.name for r in host.search_tools("adds")]


def test_async_host_search_and_deferred(fixture_path: str) -> None:
    async def main() -> None:
        cfg = _config(fixture_path, deferred_tools={"always_loaded": []})
        async with AsyncHost(cfg) as host:
            assert [t.name for t in await host.list_tools()] == ["search_tools"]
            results = await host.search_tools("process id", limit=1)
            assert [r.name for r in results] == ["alpha__pid"]
            res = await host.call_tool("search_tools", {"query": "adds", "limit": 2})
            assert [t["name"] for t in res.structured_content["tools"]] == ["alpha__add", "beta__add"]

    asyncio.run(main())


def test_cli_search(fixture_path: str, tmp_path: Path) -> None:
    cfg = tmp_path / "mcp.json"
    cfg.write_text(json.dumps(_config(fixture_path)))
    r = run_cli(["--config", str(cfg), "search", "process id", "--limit", "1"])
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].split() == ["NAME", "SERVER", "SCORE", "DESCRIPTION"]
    assert lines[1].startswith("alpha__pid") and len(lines) == 2
    r = run_cli(["--config", str(cfg), "--json", "search", "adds", "--limit", "2"])
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert [x["name"] for x in doc["results"]] == ["alpha__add", "beta__add"]
    assert doc["results"][0]["tool"]["inputSchema"]["type"] == "object"
    r = run_cli(["--config", str(cfg), "search", "kubernetes"])
    assert r.returncode == 7 and r.stdout == "" and "no tool matches 'kubernetes'" in r.stderr
    r = run_cli(["--config", str(cfg), "--json", "search", "kubernetes"])
    assert r.returncode == 7 and json.loads(r.stdout) == {"results": []}, "a script can tell nothing matched"
    r = run_cli(["--config", str(cfg), "search", "the"])
    assert r.returncode == 2 and "no word to search for" in r.stderr
    r = run_cli(["--config", str(cfg), "search", "add", "--limit", "0"])
    assert r.returncode == 2 and "options.limit" in r.stderr
    r = run_cli(["--stdio", fixture_path, "search", "add"])
    assert r.returncode == 2 and "search needs --config" in r.stderr


def test_cli_deferred_tools(fixture_path: str, tmp_path: Path) -> None:
    cfg = tmp_path / "mcp.json"
    cfg.write_text(json.dumps(_config(fixture_path, deferred_tools={"always_loaded": ["beta__echo"]})))
    r = run_cli(["--config", str(cfg), "--json", "tools"])
    assert r.returncode == 0, r.stderr
    assert [t["name"] for t in json.loads(r.stdout)["tools"]] == ["beta__echo", "search_tools"]
    r = run_cli(["--config", str(cfg), "--json", "call", "search_tools", "query=process id", "limit=1"])
    assert r.returncode == 0, r.stderr
    assert [t["name"] for t in json.loads(r.stdout)["structuredContent"]["tools"]] == ["alpha__pid"]
