"""`python -m lemonmcp` against the fixture server: output and exit codes."""

from __future__ import annotations

import json
import pathlib
import shlex
from typing import Any, List, Optional

import pytest

import lemonmcp

from conftest import FIXTURE, PKG_ROOT, run_cli


def srv(*flags: str) -> List[str]:
    return ["--stdio", shlex.join([FIXTURE, *flags])]


OK, TOOL_ERROR, USAGE, CONNECT, PROTOCOL, UNSUPPORTED = 0, 1, 2, 3, 4, 5

CASES = [
    # (id, argv, exit status, text in stdout, text in stderr)
    ("info", srv() + ["info"], OK, "lemon-fixture", None),
    ("tools", srv() + ["tools"], OK, "echo", None),
    ("call", srv() + ["call", "echo", "text=hello from lemonmcp"], OK, "hello from lemonmcp", None),
    ("call-json-values", srv() + ["call", "add", "a=2", "b=3.5"], OK, "5.5", None),
    ("call-json-args", srv() + ["call", "echo", "--json", '{"text": "as json"}'], OK, "as json", None),
    ("call-args-option", srv() + ["call", "echo", "--args", '{"text": "via args"}'], OK, "via args", None),
    ("options-after-command", ["call", "echo", "text=late"] + srv(), OK, "late", None),
    ("tool-error", srv() + ["call", "fail", "message=it broke"], TOOL_ERROR, "it broke", "reported an error: it broke"),
    ("unknown-tool", srv() + ["call", "no_such_tool"], PROTOCOL, None, "no_such_tool"),
    ("unknown-prompt", srv() + ["prompt", "no_such_prompt"], PROTOCOL, None, "lemonmcp:"),
    ("resources", srv() + ["resources"], OK, "fixture://item/25", None),
    ("templates", srv() + ["templates"], OK, "fixture://items/{id}", None),
    ("read-text", srv() + ["read", "fixture://item/02"], OK, "item 02", None),
    ("read-blob", srv() + ["read", "fixture://blob"], OK, "[blob application/octet-stream, 16 bytes]", None),
    ("prompts", srv() + ["prompts"], OK, "greet", None),
    ("prompt", srv() + ["prompt", "greet", "name=Zed"], OK, "Hello, Zed!", None),
    ("ping", srv() + ["ping"], OK, "pong from lemon-fixture", None),  # a modern server: server/discover
    ("ping-legacy", srv("-protocol", "2025-11-25") + ["ping"], OK, "pong from lemon-fixture", None),
    ("progress", srv() + ["call", "slow", "ms=300", "steps=3"], OK, "done", "progress 3/3"),
    ("quiet", srv() + ["-q", "call", "slow", "ms=100", "steps=2"], OK, "done", None),
    ("verbose", srv() + ["-v", "call", "stderr", "bytes=100"], OK, "ok", "[server] fixture stderr line"),
    ("paged", srv("-page-size", "5") + ["resources"], OK, "fixture://item/25", None),
    ("bad-kv", srv() + ["call", "echo", "novalue"], USAGE, None, "KEY=VALUE"),
    ("bad-json", srv() + ["call", "echo", "--json", "{bad"], USAGE, None, "not valid JSON"),
    ("bad-command", srv() + ["frobnicate"], USAGE, None, "invalid choice"),
    ("no-server", ["tools"], USAGE, None, "give a server"),
    ("two-servers", srv() + ["--sse", "http://127.0.0.1:9/", "tools"], USAGE, None, "give one server"),
    ("unreachable", ["--stdio", "/nonexistent/mcp-server --flag", "tools"], CONNECT, None, "cannot connect"),
    ("not-on-path", ["--stdio", "no-such-mcp-server-xyz", "info"], CONNECT, None, "not found"),
    ("server-exits", srv("-exit-after-ms", "1", "-no-init") + ["info"], CONNECT, None, "lemonmcp:"),
    ("no-answer", srv("-no-init") + ["--timeout", "0.5", "info"], CONNECT, None, "lemonmcp:"),
    ("crash", srv() + ["call", "crash"], CONNECT, None, "exited"),
    ("init-error", srv("-init-error") + ["info"], PROTOCOL, None, "handshake"),
]

# Port 9 on the loopback refuses connections: a connection failure once the
# HTTP transports are built in, "unsupported" before that.
for _kind, _flag in (("http", "--url"), ("sse", "--sse")):
    if _kind in lemonmcp.features()["transports"]:
        CASES.append((f"{_kind}-refused", [_flag, "http://127.0.0.1:9/mcp", "info"], CONNECT, None, "cannot connect"))
    else:
        CASES.append((f"{_kind}-unsupported", [_flag, "http://127.0.0.1:9/mcp", "info"], UNSUPPORTED, None, "not supported"))


@pytest.mark.parametrize("argv,status,out,err", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_cli(fixture_path: str, argv: List[str], status: int, out: Optional[str], err: Optional[str]) -> None:
    r = run_cli(argv)
    assert r.returncode == status, (r.stdout, r.stderr)
    if out is not None:
        assert out in r.stdout, r.stdout
    if err is not None:
        assert err in r.stderr, r.stderr
    assert "Traceback" not in r.stderr
    if status not in (OK, USAGE):
        # one human line on stderr
        lines = [ln for ln in r.stderr.splitlines() if ln.startswith("lemonmcp:")]
        assert len(lines) == 1, r.stderr


@pytest.mark.parametrize(
    "argv,key",
    [
        (["info"], "serverInfo"),
        (["tools"], "tools"),
        (["resources"], "resources"),
        (["templates"], "resourceTemplates"),
        (["prompts"], "prompts"),
        (["read", "fixture://item/01"], "contents"),
        (["prompt", "greet", "name=J"], "messages"),
        (["call", "echo", "text=j"], "structuredContent"),
        (["ping"], "ok"),
    ],
)
def test_cli_json_output(fixture_path: str, argv: List[str], key: str) -> None:
    r = run_cli(srv() + ["--json"] + argv)
    assert r.returncode == 0, r.stderr
    assert key in json.loads(r.stdout)
    # --json after the command works too
    r2 = run_cli(srv() + argv + ["--json"])
    assert r2.returncode == 0 and key in json.loads(r2.stdout)


def test_cli_tool_error_json_keeps_exit_status(fixture_path: str) -> None:
    r = run_cli(srv() + ["--json", "call", "fail", "message=x"])
    assert r.returncode == 1 and json.loads(r.stdout)["isError"] is True


def test_cli_tools_table_is_aligned(fixture_path: str) -> None:
    r = run_cli(srv() + ["tools"])
    lines = r.stdout.splitlines()
    assert lines[0].split() == ["NAME", "ARGUMENTS", "DESCRIPTION"]
    col = lines[0].index("ARGUMENTS")
    echo = next(ln for ln in lines if ln.startswith("echo "))
    assert echo[col:].startswith("text*")


def test_cli_config_file(fixture_path: str, tmp_path: Any) -> None:
    cfg = tmp_path / "mcp.json"
    cfg.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "fx": {"command": FIXTURE, "args": ["-page-size", "5"]},
                    "other": {"url": "http://127.0.0.1:9/mcp"},
                }
            }
        )
    )
    r = run_cli(["--config", str(cfg), "--server", "fx", "call", "echo", "text=from config"])
    assert r.returncode == 0 and "from config" in r.stdout, r.stderr
    r = run_cli(["--config", str(cfg), "info"])
    assert r.returncode == 2 and "several servers" in r.stderr
    r = run_cli(["--config", str(cfg), "--server", "nope", "tools"])
    assert r.returncode == 2 and "no server 'nope'" in r.stderr
    r = run_cli(["--config", str(tmp_path / "missing.json"), "tools"])
    assert r.returncode == 2 and "cannot read" in r.stderr


def test_cli_roots_are_the_working_directory(fixture_path: str) -> None:
    r = run_cli(srv() + ["call", "roots"])
    assert r.returncode == 0
    roots = json.loads(r.stdout)["roots"]
    assert roots == [{"uri": pathlib.Path(PKG_ROOT).resolve().as_uri()}]


def test_cli_json_args_from_stdin(fixture_path: str) -> None:
    r = run_cli(srv() + ["call", "echo", "--json", "-"], stdin='{"text": "piped"}')
    assert r.returncode == 0 and "piped" in r.stdout


def test_cli_version_and_help() -> None:
    r = run_cli(["--version"])
    assert r.returncode == 0 and "lemonmcp 0.1.0" in r.stdout
    r = run_cli(["--help"])
    assert r.returncode == 0 and "call" in r.stdout and "exit status" in r.stdout


def test_cli_config_runs_every_server_as_a_host(fixture_path: str, tmp_path: Any) -> None:
    cfg = tmp_path / "mcp.json"
    cfg.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "fx": {"command": FIXTURE},
                    "fy": {"command": FIXTURE, "protocol": {"mode": "modern"}},
                    "dead": {"command": "/nonexistent/lmcp-cli-server", "restart": False},
                }
            }
        )
    )
    r = run_cli(["--config", str(cfg), "tools"])
    assert r.returncode == 0, r.stderr
    assert "fx__echo" in r.stdout and "fy__echo" in r.stdout
    assert "server dead is failed" in r.stderr
    r = run_cli(["--config", str(cfg), "call", "fy__echo", "text=routed"])
    assert r.returncode == 0 and "routed" in r.stdout, r.stderr
    r = run_cli(["--config", str(cfg), "--json", "servers"])
    assert r.returncode == 0, r.stderr
    states = {name: s["state"] for name, s in json.loads(r.stdout).items()}
    assert states == {"fx": "ready", "fy": "ready", "dead": "failed"}
    r = run_cli(["--config", str(cfg), "call", "nope__echo"])
    assert r.returncode != 0 and "nope__echo" in r.stderr
    r = run_cli(srv() + ["servers"])
    assert r.returncode == 2 and "servers needs --config" in r.stderr
