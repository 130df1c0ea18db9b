"""`lemonmcp complete`, `--log-level` and `servers`, against the fixture
server and the small Python servers in tests/cli_servers."""

from __future__ import annotations

import json
import pathlib
import shlex
import sys
from typing import Any, List

import pytest

from cli_run import run_cli
from conftest import FIXTURE

SERVERS = pathlib.Path(__file__).parent / "cli_servers"
TINY = shlex.join([sys.executable, str(SERVERS / "tiny_server.py")])


def fx() -> List[str]:
    return ["--stdio", shlex.join([FIXTURE])]


@pytest.mark.parametrize(
    "args,values",
    [
        (["prompt", "paint", "color=b"], ["blue", "black", "brown"]),
        (["prompt", "paint", "color="], ["red", "green", "blue", "black", "brown"]),
        (["prompt", "paint", "color=bl", "--context", "shade=dark"], ["dark blue", "dark black"]),
        (["resource", "tiny://files/{path}", "path=notes"], ["notes/c.md"]),
        (["prompt", "paint", "color=zz"], []),
    ],
)
def test_complete(args: List[str], values: List[str]) -> None:
    r = run_cli(["--stdio", TINY, "complete", *args])
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == values
    r = run_cli(["--stdio", TINY, "--json", "complete", *args])
    assert json.loads(r.stdout)["completion"]["values"] == values


def test_complete_says_when_there_are_more() -> None:
    r = run_cli(["--stdio", TINY, "complete", "resource", "tiny://files/{path}", "path="])
    assert r.returncode == 0 and r.stdout.splitlines() == ["a.txt", "b.txt", "notes/c.md"]
    assert "the server has 7 more values" in r.stderr


@pytest.mark.parametrize(
    "argv,status,message",
    [
        (["complete", "prompt", "paint", "color"], 2, "expected ARG=PARTIAL"),
        (["complete", "tool", "paint", "color=x"], 2, "invalid choice"),
    ],
)
def test_complete_usage(argv: List[str], status: int, message: str) -> None:
    r = run_cli(["--stdio", TINY] + argv)
    assert r.returncode == status and message in r.stderr, r.stderr


def test_complete_unsupported_by_the_server(fixture_path: str) -> None:
    # The fixture declares no completions capability.
    r = run_cli(fx() + ["complete", "prompt", "greet", "name=Z"])
    assert r.returncode == 5, (r.stdout, r.stderr)
    assert r.stderr.startswith("lemonmcp: ") and "Traceback" not in r.stderr


def test_log_level_shows_the_servers_log_messages(fixture_path: str) -> None:
    # logging/setLevel is of the legacy era; a 2026-07-28 server gets none
    # (the warning below).
    r = run_cli(fx() + ["--protocol", "legacy", "--log-level", "info", "call", "notify"])
    assert r.returncode == 0, r.stderr
    assert "[server info lemon-fixture] notify called" in r.stderr
    # Without it the server is not asked, and sends nothing.
    r = run_cli(fx() + ["call", "notify"])
    assert r.returncode == 0 and "notify called" not in r.stderr
    # Above the message's level: filtered by the server.
    r = run_cli(fx() + ["--log-level", "error", "call", "notify"])
    assert r.returncode == 0 and "notify called" not in r.stderr


def test_log_level_is_sent_and_checked() -> None:
    r = run_cli(["--stdio", TINY, "--log-level", "debug", "ping"])
    assert r.returncode == 0 and "[server warning tiny] level set to debug" in r.stderr, r.stderr
    r = run_cli(["--stdio", TINY, "--log-level", "loud", "ping"])
    assert r.returncode == 2 and "invalid choice: 'loud'" in r.stderr


def test_log_level_without_server_logging_is_a_warning(tmp_path: Any) -> None:
    script = tmp_path / "nolog.py"
    script.write_text((SERVERS / "tiny_server.py").read_text().replace(', "logging": {}', ""))
    r = run_cli(["--stdio", shlex.join([sys.executable, str(script)]), "--log-level", "info", "ping"])
    assert r.returncode == 0, r.stderr
    assert "warning: the server does not declare logging" in r.stderr


def test_log_level_with_a_modern_server_warns_and_runs(fixture_path: str) -> None:
    r = run_cli(fx() + ["--log-level", "info", "call", "notify"])
    assert r.returncode == 0, r.stderr
    assert "has no logging/setLevel" in r.stderr and "Traceback" not in r.stderr


def test_call_reads_the_route_of_a_sanitised_name(tmp_path: pathlib.Path) -> None:
    """A tool whose name the host sanitises ("my tool" is listed as
    r__my_tool) is called by the name `tools` shows: the command line reads
    the route the library gives (lmcp_host_tool_route, server and
    original_name), never splits the name on "__" and rebuilds it."""
    rugpull = str(pathlib.Path(FIXTURE).parent / "rugpull")
    defs = tmp_path / "defs.json"
    schema = {"type": "object", "properties": {"text": {"type": "string"}}}
    defs.write_text(json.dumps({"tools": [{"name": "my tool", "inputSchema": schema},
                                          {"name": "other", "inputSchema": schema}]}))
    cfg = tmp_path / "mcp.json"
    cfg.write_text(json.dumps({"mcpServers": {"r": {"command": rugpull, "args": ["-defs", str(defs)]}}}))
    r = run_cli(["--config", str(cfg), "tools"])
    assert r.returncode == 0, r.stderr
    assert "r__my_tool" in r.stdout and "r__my tool" not in r.stdout
    r = run_cli(["--config", str(cfg), "call", "r__my_tool", "text=hi"])
    assert r.returncode == 0, r.stderr
    assert "called my tool" in r.stdout
    r = run_cli(["--config", str(cfg), "call", "r__nosuch"])
    assert r.returncode != 0
    assert "no tool named 'r__nosuch'" in r.stderr, r.stderr


def test_host_tool_route_is_the_librarys(tmp_path: pathlib.Path) -> None:
    """Host.tool_route: the server prefix before a list, the catalogue's
    route (the server's own name of a sanitised one) after it, None for a
    name only the lists would tell; it starts nothing."""
    import lemonmcp

    rugpull = str(pathlib.Path(FIXTURE).parent / "rugpull")
    defs = tmp_path / "defs.json"
    defs.write_text(json.dumps({"tools": [{"name": "my tool", "inputSchema": {"type": "object"}}]}))
    cfg = {"mcpServers": {"r": {"command": rugpull, "args": ["-defs", str(defs)]}}}
    with lemonmcp.Host(cfg, start="lazy") as host:
        assert host.tool_route("r__x") == ("r", "x")
        assert host.tool_route("q__x") is None and host.tool_route("x") is None
        assert host.servers()["r"]["state"] == "new", "a route starts nothing"
        assert [t.name for t in host.list_tools()] == ["r__my_tool"]
        assert host.tool_route("r__my_tool") == ("r", "my tool")
        assert host.call_tool("r__my_tool", {}).text == "called my tool"
