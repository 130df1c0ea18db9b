"""lemonmcp.Host and the config files other applications write
(tests/configs: Claude Desktop, Claude Code, Cursor, VS Code, Cline, Roo
Code, Windsurf): each loads with its warnings logged, strict refuses them,
a malformed file or an input without a value is an error naming it, and a
server that failed to start is logged with why."""

from __future__ import annotations

import asyncio
import json
import logging
import os
from typing import Any, Dict, List

import pytest

import lemonmcp
from lemonmcp.aio import AsyncHost

from conftest import REPO

CONFIGS = os.path.join(REPO, "tests", "configs")


def _corpus() -> List[Dict[str, Any]]:
    with open(os.path.join(CONFIGS, "expected.json"), encoding="utf-8") as f:
        files: List[Dict[str, Any]] = json.load(f)["files"]
    return files


@pytest.mark.parametrize("entry", _corpus(), ids=lambda e: str(e["path"]))
def test_config_corpus(entry: Dict[str, Any], caplog: pytest.LogCaptureFixture) -> None:
    path = os.path.join(CONFIGS, entry["path"])
    caplog.set_level(logging.WARNING, logger="lemonmcp")
    host = lemonmcp.Host(path, inputs=entry.get("inputs"))
    try:
        want = [f"{path}: {w}" for w in entry["warnings"]]
        assert host.warnings == want
        assert [r.getMessage() for r in caplog.records if r.name == "lemonmcp"] == want, "each warning logged once"
        servers = host.servers()
        assert {name: s["enabled"] for name, s in servers.items()} == entry["servers"]
    finally:
        host.close()
    if entry["warnings"]:
        with pytest.raises(lemonmcp.InvalidArgument, match='refused under "strict"'):
            lemonmcp.Host(path, inputs=entry.get("inputs"), strict=True)


def test_config_file_errors_name_the_file(tmp_path: Any) -> None:
    bad = tmp_path / "claude_desktop_config.json"
    bad.write_text('{"mcpServers": {\n  "a": {"command" "x"}\n}}')
    with pytest.raises(lemonmcp.InvalidArgument) as exc:
        lemonmcp.Host(str(bad))
    assert str(bad) in str(exc.value)
    assert "not valid JSON at line 2" in str(exc.value)

    vscode = os.path.join(CONFIGS, "vscode", ".vscode", "mcp.json")
    with pytest.raises(lemonmcp.InvalidArgument, match=r"uses \$\{input:github-token\}, which has no value") as exc:
        lemonmcp.Host(vscode)
    assert vscode in str(exc.value)

    with pytest.raises(lemonmcp.InvalidArgument, match="no such config file"):
        lemonmcp.Host(str(tmp_path / "missing.json"))


def test_a_path_is_a_path_whatever_its_name(tmp_path: Any) -> None:
    """A str or os.PathLike is a file's path, a mapping the configuration:
    the argument's type says which, never its first character (a file
    named "{project}.json" was taken for a JSON text)."""
    braced = tmp_path / "{project}.json"
    braced.write_text(json.dumps({"mcpServers": {"a": {"command": "x"}}}))
    for given in (str(braced), braced):
        host = lemonmcp.Host(given, start="lazy")
        try:
            assert list(host.servers()) == ["a"]
        finally:
            host.close()
    # A JSON text is the caller's to parse: given as a str it names a file.
    text = '{"mcpServers": {"a": {"command": "x"}}}'
    with pytest.raises(lemonmcp.InvalidArgument, match="no such config file") as exc:
        lemonmcp.Host(text)
    assert text in str(exc.value)
    with pytest.raises(TypeError, match="only= and stdio=: take a config file given by its path"):
        lemonmcp.Host(json.loads(text), only=["a"])


def test_unknown_members_of_a_mapping_are_warnings(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="lemonmcp")
    cfg = {"globalShortcut": "x", "mcpServers": {"a": {"command": "x", "comand": "y"}}}
    host = lemonmcp.Host(cfg)
    try:
        assert host.warnings == [
            "config.globalShortcut: ignored: Claude Desktop's keyboard shortcut",
            'config.mcpServers.a.comand: is not a member LemonMCP knows; ignored (did you mean "command"?)',
        ]
    finally:
        host.close()
    with pytest.raises(lemonmcp.InvalidArgument, match="config.globalShortcut: refused under"):
        lemonmcp.Host(cfg, strict=True)


def test_an_invalid_server_names_its_typos(tmp_path: Any) -> None:
    # A refused config returns no warnings: the "did you mean" of the member
    # that made the server invalid is in the error, file or mapping.
    cfg = {"mcpServers": {"x": {"comand": "python3"}}}
    typo = 'config.mcpServers.x.comand: is not a member LemonMCP knows (did you mean "command"?)'
    with pytest.raises(lemonmcp.InvalidArgument) as exc:
        lemonmcp.Host(cfg)
    assert typo in str(exc.value)
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps(cfg))
    with pytest.raises(lemonmcp.InvalidArgument) as exc:
        lemonmcp.Host(str(path))
    assert str(exc.value).startswith(f"{path}: config.mcpServers.x: needs") and typo in str(exc.value)


@pytest.mark.parametrize("front", ["Host", "AsyncHost"])
def test_wait_ready_raises_when_every_server_failed(caplog: pytest.LogCaptureFixture, front: str) -> None:
    # Nothing to serve: the first server's failure is raised, each one
    # logged with why before it.
    caplog.set_level(logging.WARNING, logger="lemonmcp")
    cfg = {"mcpServers": {"missing": {"command": "/nonexistent/lmcp-py-server"}, "off": {"command": "x", "enabled": False}}}
    if front == "Host":
        with pytest.raises(lemonmcp.TransportError, match="every enabled server failed: missing: executable not found"):
            with lemonmcp.Host(cfg, ready_timeout=15):
                pass
    else:

        async def main() -> None:
            async with AsyncHost(cfg, ready_timeout=15):
                pass

        with pytest.raises(lemonmcp.TransportError, match="every enabled server failed: missing: executable not found"):
            asyncio.run(main())
    logged = [r.getMessage() for r in caplog.records if r.name == "lemonmcp"]
    assert len([m for m in logged if 'server "missing" failed to start' in m]) == 1, logged


@pytest.mark.parametrize("front", ["Host", "AsyncHost"])
def test_failed_server_is_logged_with_why(fixture_path: str, caplog: pytest.LogCaptureFixture, front: str) -> None:
    caplog.set_level(logging.WARNING, logger="lemonmcp")
    cfg = {
        "mcpServers": {
            "good": {"command": fixture_path},
            "dying": {
                "command": "/bin/sh",
                "args": ["-c", 'echo "Error: GITHUB_TOKEN is not set ($SECRET)" >&2; exit 1'],
                "env": {"SECRET": "sekrit-value-9"},
                "restart": {"max_restarts": 0},
            },
            "missing": {"command": "/nonexistent/lmcp-py-server"},
        }
    }
    if front == "Host":
        with lemonmcp.Host(cfg, ready_timeout=15) as host:
            servers = host.servers()
            assert servers["good"]["state"] == "ready"
            assert servers["missing"]["state"] == "failed" and servers["missing"]["final"] is True
            with pytest.raises(lemonmcp.InvalidState, match="executable not found") as exc:
                host.call_tool("missing__echo", {})
            assert exc.value.cause == "executable_not_found"
    else:

        async def main() -> None:
            async with AsyncHost(cfg, ready_timeout=15) as host:
                servers = await host.servers()
                assert servers["good"]["state"] == "ready"
                assert servers["missing"]["state"] == "failed"
                with pytest.raises(lemonmcp.InvalidState, match="executable not found"):
                    await host.call_tool("missing__echo", {})

        asyncio.run(main())
    logged = [r.getMessage() for r in caplog.records if r.name == "lemonmcp"]
    missing = [m for m in logged if '"missing"' in m]
    assert len(missing) == 1 and "executable not found: /nonexistent/lmcp-py-server" in missing[0]
    dying = [m for m in logged if '"dying"' in m]
    assert len(dying) == 1, logged
    assert "exit status 1" in dying[0]
    assert "Error: GITHUB_TOKEN is not set ([redacted])" in dying[0]
    assert not any("sekrit-value-9" in m for m in logged)
    assert not any('"good"' in m for m in logged)


def test_lazy_host_starts_a_server_on_its_first_call(fixture_path: str) -> None:
    cfg = {"mcpServers": {"a": {"command": fixture_path}, "b": {"command": fixture_path}}}
    with lemonmcp.Host(cfg, start="lazy") as host:
        assert {s["state"] for s in host.servers().values()} == {"new"}
        assert host.call_tool("a__echo", {"text": "hi"}).text == "hi"
        servers = host.servers()
        assert servers["a"]["state"] == "ready"
        assert servers["b"]["state"] == "new"
