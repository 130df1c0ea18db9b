"""lemonmcp.Host with the reference server `@modelcontextprotocol/server-everything`
(over stdio and Streamable HTTP) next to the fixture server: three real
servers in one host, two of which offer an `echo` tool. Runs wherever
test_everything.py runs (LEMONMCP_SKIP_EVERYTHING=1 opts out, with the reason
printed)."""

from __future__ import annotations

import os
import sys
from typing import Any, Dict, Iterator

import pytest

import lemonmcp

from conftest import REPO

sys.path.insert(0, os.path.join(REPO, "tests", "everything"))
import everything  # noqa: E402

OPTED_OUT = os.environ.get("LEMONMCP_SKIP_EVERYTHING", "") not in ("", "0")


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    if OPTED_OUT:
        pytest.skip("server-everything tests opted out (LEMONMCP_SKIP_EVERYTHING is set)")
    everything.install()  # an install failure is an error, never a skip
    server = everything.HttpServer("streamableHttp")
    try:
        yield server.url
    finally:
        server.close()


def _config(fixture: str, url: str) -> Dict[str, Any]:
    node, args = everything.stdio_command()
    return {
        "defaults": {"timeouts": {"ready_ms": 20000, "call_ms": 20000}},
        "mcpServers": {
            "ev": {"command": node, "args": args},
            "evhttp": {"url": url, "type": "streamable-http"},
            "fx": {"command": fixture},
        },
    }


def test_host_with_server_everything(fixture_path: str, http_url: str) -> None:
    with lemonmcp.Host(_config(fixture_path, http_url), tool_prefix="on_collision", ready_timeout=30.0) as host:
        servers = host.servers()
        assert {name: s["state"] for name, s in servers.items()} == {"ev": "ready", "evhttp": "ready", "fx": "ready"}
        assert servers["evhttp"]["transport"] == "streamable_http"
        tools = {t.name: t for t in host.list_tools()}
        # echo is offered by all three: prefixed; a name only one server has is not.
        assert {"ev__echo", "evhttp__echo", "fx__echo"} <= set(tools)
        assert "echo" not in tools
        assert tools["ev__echo"].original_name == "echo"
        assert "slow" in tools and tools["slow"].server == "fx"
        assert "Echo: from ev" in host.call_tool("ev__echo", {"message": "from ev"}).text
        assert "Echo: over http" in host.call_tool("evhttp__echo", {"message": "over http"}).text
        assert host.call_tool("fx__echo", {"text": "fixture"}).text == "fixture"
        assert any(p.server == "ev" for p in host.list_prompts())
        assert any(r.server == "evhttp" for r in host.list_resources())
