"""`python -m lemonmcp` against the fixture server: output and exit codes."""

from __future__ import annotations

import json
import pathlib
import shlex
import sys
from typing import Any, List, Optional

import pytest

import lemonmcp

from cli_run import run_cli
from conftest import FIXTURE


def srv(*flags: str) -> List[str]:
    return ["--stdio", shlex.join([FIXTURE, *flags])]


OK, TOOL_ERROR, USAGE, CONNECT, PROTOCOL, UNSUPPORTED, NOT_FOUND, TIMEOUT = 0, 1, 2, 3, 4, 5, 7, 124

CASES = [
    # (id, argv, exit status, text in stdout, text in stderr)
    ("info", srv() + ["info"], OK, "lemon-fixture", None),
    ("tools", srv() + ["tools"], OK, "echo", None),
    ("call", srv() + ["call", "echo", "text=hello from lemonmcp"], OK, "hello from lemonmcp", None),
    ("call-json-values", srv() + ["call", "add", "a=2", "b=3.5"], OK, "5.5", None),
    ("call-json-args", srv() + ["call", "echo", "--json", '{"text": "as json"}'], OK, "as json", None),
    ("call-args-option", srv() + ["call", "echo", "--args", '{"text": "via args"}'], OK, "via args", None),
    ("options-after-command", ["call", "echo", "text=late"] + srv(), OK, "late", None),
    ("tool-error", srv() + ["call", "fail", "message=it broke"], TOOL_ERROR, "it broke", "tool fail reported an error (exit status 1)"),
    ("unknown-tool", srv() + ["call", "no_such_tool"], NOT_FOUND, None, "the server has no tool named 'no_such_tool'"),
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
    ("no-answer", srv("-no-init") + ["--timeout", "0.5", "info"], TIMEOUT, None, "did not answer initialize"),
    ("call-timeout", srv() + ["--timeout", "0.3", "call", "slow", "ms=5000"], TIMEOUT, None, "within 300 ms"),
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
    assert r.returncode == 2 and 'no server "nope"' in r.stderr
    r = run_cli(["--config", str(tmp_path / "missing.json"), "tools"])
    assert r.returncode == 2 and "missing.json: no such config file" in r.stderr
    # A VS Code file (comments, "servers", ${input:id}) means the same with
    # --server as without: the host's reader reads it both ways.
    vscode = tmp_path / ".vscode"
    vscode.mkdir()
    (vscode / "mcp.json").write_text(
        "{\n  // VS Code\n  \"servers\": {\"fx\": {\"type\": \"stdio\", \"command\": " + json.dumps(FIXTURE)
        + ", \"args\": [\"-page-size\", \"${input:size}\"], \"colour\": \"blue\"},},\n}\n"
    )
    vs = ["--config", str(vscode / "mcp.json"), "--input", "size=5"]
    r = run_cli(vs + ["--server", "fx", "call", "echo", "text=from vs code"])
    assert r.returncode == 0 and "from vs code" in r.stdout, r.stderr
    assert "lemonmcp: warning: " in r.stderr and "colour" in r.stderr, r.stderr
    r = run_cli(vs + ["-q", "--server", "fx", "call", "echo", "text=quiet"])
    assert r.returncode == 0 and "colour" not in r.stderr, r.stderr
    r = run_cli(vs + ["call", "fx__echo", "text=from vs code"])
    assert r.returncode == 0 and "from vs code" in r.stdout, r.stderr


@pytest.mark.parametrize("command", [["info"], ["--server", "x", "info"], ["tools"], ["check"]])
def test_cli_config_error_names_a_typo(tmp_path: Any, command: List[str]) -> None:
    # The host and the single-server commands both say what the warning
    # would have: the misspelt member that made the entry invalid.
    cfg = tmp_path / "mcp.json"
    cfg.write_text(json.dumps({"mcpServers": {"x": {"comand": "python3"}}}))
    r = run_cli(["--config", str(cfg), *command])
    assert r.returncode == 2, r.stderr
    assert 'config.mcpServers.x.comand: is not a member LemonMCP knows (did you mean "command"?)' in r.stderr, r.stderr
    assert r.stderr.count("\n") == 1, "one line"


def test_cli_offers_no_root_unasked(fixture_path: str) -> None:
    # Without --root the client declares no roots capability. In the legacy
    # era the server's roots/list is refused, and the fixture reports that
    # as a tool error.
    r = run_cli(srv() + ["--protocol", "legacy", "call", "roots"])
    assert r.returncode == TOOL_ERROR, (r.stdout, r.stderr)
    assert "roots/list" in r.stdout and "method not found" in r.stdout
    # In the 2026-07-28 era the request for roots comes back inside the
    # result (input_required), and the client ends the call itself.
    r = run_cli(srv() + ["call", "roots"])
    assert r.returncode == 4, (r.stdout, r.stderr)
    assert "roots/list" in r.stderr and "did not declare" in r.stderr


def test_cli_roots_are_the_ones_given(fixture_path: str, tmp_path: Any) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    r = run_cli(srv() + ["--root", str(a), "call", "roots", "--root", str(b)])
    assert r.returncode == 0, r.stderr
    roots = json.loads(r.stdout)["roots"]
    assert roots == [{"uri": a.resolve().as_uri()}, {"uri": b.resolve().as_uri()}]


def test_cli_text_is_written_verbatim_to_a_pipe(fixture_path: str) -> None:
    # A 250-character line stays one line: nothing is re-wrapped.
    r = run_cli(srv() + ["call", "large", "bytes=250"])
    assert r.returncode == 0, r.stderr
    assert r.stdout == "x" * 250 + "\n"
    # JSON text from a tool still parses when saved.
    text = json.dumps({"k": "v " * 200, "n": [1, 2, 3]})
    r = run_cli(srv() + ["call", "echo", "--args", json.dumps({"text": text})])
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == json.loads(text)
    # Tables are not cut to a width either.
    r = run_cli(srv() + ["templates"], env={"COLUMNS": "40"})
    assert r.returncode == 0
    assert "…" not in r.stdout


def test_cli_read_output_file_has_the_exact_bytes(fixture_path: str, tmp_path: Any) -> None:
    blob = tmp_path / "blob.bin"
    r = run_cli(srv() + ["read", "fixture://blob", "-o", str(blob)])
    assert r.returncode == 0, r.stderr
    assert blob.read_bytes() == bytes(range(16))
    assert r.stdout == "" and "wrote 16 bytes" in r.stderr
    text = tmp_path / "item.txt"
    r = run_cli(srv() + ["read", "fixture://item/02", "--output", str(text)])
    assert r.returncode == 0, r.stderr
    rj = run_cli(srv() + ["--json", "read", "fixture://item/02"])
    assert text.read_bytes() == json.loads(rj.stdout)["contents"][0]["text"].encode("utf-8")
    # "-" writes the bytes to stdout
    r = run_cli(srv() + ["read", "fixture://blob", "-o", "-"], text=False)
    assert r.returncode == 0 and r.stdout == bytes(range(16))
    r = run_cli(srv() + ["read", "fixture://blob", "-o", str(tmp_path / "no" / "dir" / "f")])
    assert r.returncode == USAGE and "cannot write" in r.stderr


def test_cli_json_args_from_stdin(fixture_path: str) -> None:
    r = run_cli(srv() + ["call", "echo", "--json", "-"], stdin='{"text": "piped"}')
    assert r.returncode == 0 and "piped" in r.stdout


def test_cli_version_and_help() -> None:
    r = run_cli(["--version"])
    assert r.returncode == 0 and f"lemonmcp {lemonmcp.library_version()}" in r.stdout
    r = run_cli(["--help"])
    assert r.returncode == 0 and "call" in r.stdout and "exit status" in r.stdout


SERVERS = pathlib.Path(__file__).parent / "cli_servers"


@pytest.mark.parametrize("verbose", [False, True])
def test_cli_server_dying_at_startup_says_why(verbose: bool) -> None:
    script = SERVERS / "dies_at_startup.py"
    r = run_cli(["--stdio", shlex.join([sys.executable, str(script)])] + (["-v"] if verbose else []) + ["tools"])
    assert r.returncode == CONNECT, r.stderr
    assert "Traceback" not in r.stderr
    lines = r.stderr.splitlines()
    ours = [ln for ln in lines if ln.startswith("lemonmcp:")]
    assert len(ours) == 1 and "exited with status 1" in ours[0], r.stderr
    assert "missing API key" not in ours[0]  # the library's message holds no raw output
    if verbose:  # shown as they came, not again
        assert "[server] error: missing API key (set EXAMPLE_API_KEY)" in r.stderr
        assert "the server's stderr" not in r.stderr
    else:  # one line of ours, then the server's own words, labelled as such
        assert lines == [ours[0],
            "the server's stderr (last 2 lines):",
            "  | starting example server v1",
            "  | error: missing API key (set EXAMPLE_API_KEY)",
        ], r.stderr


def test_cli_server_stderr_tail_is_bounded_and_escaped(tmp_path: Any) -> None:
    script = tmp_path / "noisy.py"
    script.write_text(
        "import sys\n"
        "for i in range(100):\n"
        "    sys.stderr.write(f'line {i:03d} ' + 'y' * 300 + '\\n')\n"
        "sys.stderr.write('evil \\x1b[2J escape\\n')\n"
        "sys.exit(2)\n"
    )
    r = run_cli(["--stdio", shlex.join([sys.executable, str(script)]), "info"])
    assert r.returncode == CONNECT
    head, _, tail = r.stderr.partition("the server's stderr")
    assert "\x1b" not in r.stderr and "evil \\x1b[2J escape" in tail
    shown = [ln for ln in tail.splitlines() if ln.startswith("  | ")]
    assert 1 < len(shown) <= 20
    assert sum(len(ln) for ln in shown) <= 4096 + 20 * 4
    assert "line 099" in tail and "line 000" not in tail


def test_cli_timeout_exit_code_is_documented() -> None:
    r = run_cli(["--help"])
    from lemonmcp._cli_exit import EXIT_CODES
    from lemonmcp.cli import EXIT

    help_text = " ".join(r.stdout.split())
    for code, name, meaning in EXIT_CODES:
        assert f"{code} {' '.join(meaning.split())}" in help_text, (code, r.stdout)
        assert EXIT[name] == code
    assert EXIT["timeout"] == TIMEOUT


def test_missing_executable_is_a_connection_error() -> None:
    # The library reports it as a transport failure (LMCP_E_TRANSPORT): in
    # Python a TransportError, which is a builtin ConnectionError, never an
    # InvalidArgument; on the command line exit 3.
    c = lemonmcp.Client.stdio("no-such-mcp-server-xyz", ["--flag"])
    with pytest.raises(lemonmcp.TransportError) as info:
        c.open(timeout=10)
    assert isinstance(info.value, ConnectionError)
    assert not isinstance(info.value, lemonmcp.InvalidArgument)
    assert str(info.value) == "executable not found: no-such-mcp-server-xyz"
    r = run_cli(["--stdio", "no-such-mcp-server-xyz --flag", "info"])
    assert r.returncode == CONNECT
    assert r.stderr == "lemonmcp: cannot connect to no-such-mcp-server-xyz: executable not found: no-such-mcp-server-xyz\n"


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
    assert 'server "dead" failed to start: executable not found: /nonexistent/lmcp-cli-server' in r.stderr
    r = run_cli(["--config", str(cfg), "call", "fy__echo", "text=routed"])
    assert r.returncode == 0 and "routed" in r.stdout, r.stderr
    r = run_cli(["--config", str(cfg), "--json", "servers"])
    assert r.returncode == CONNECT, "servers exits non-zero when a server failed"
    states = {name: s["state"] for name, s in json.loads(r.stdout).items()}
    assert states == {"fx": "ready", "fy": "ready", "dead": "failed"}
    r = run_cli(["--config", str(cfg), "--json", "call", "fx__echo", "text=42"])
    assert r.returncode == 0 and json.loads(r.stdout)["structuredContent"] == {"text": "42"}, r.stderr
    r = run_cli(["--config", str(cfg), "call", "fx__add", "a=1", "b=two"])
    assert r.returncode == 2 and "argument b: expected a number" in r.stderr, r.stderr
    r = run_cli(["--config", str(cfg), "call", "nope__echo"])
    assert r.returncode == NOT_FOUND and "nope__echo" in r.stderr, "the same code as --stdio's unknown tool"
    r = run_cli(srv() + ["servers"])
    assert r.returncode == 2 and "servers needs --config" in r.stderr


@pytest.mark.parametrize(
    "argv",
    [["--stdio", FIXTURE, "call", "echo", "text=hi"], ["--stdio", FIXTURE, "tools"], ["--help"]],
    ids=["call", "tools", "help"],
)
def test_cli_does_not_load_asyncio(argv: List[str]) -> None:
    """A command-line run (and a program that makes only blocking calls)
    never imports asyncio: at about 20 ms of CPU it was the largest part of
    every run's start-up. PYTHONPROFILEIMPORTTIME lists every module
    imported, on stderr."""
    r = run_cli(argv, env={"PYTHONPROFILEIMPORTTIME": "1"})
    assert r.returncode == 0, r.stderr[-2000:]
    imported = {line.rsplit("|", 1)[-1].strip() for line in r.stderr.splitlines() if line.startswith("import time:")}
    assert "lemonmcp.cli" in imported or argv == ["--help"], sorted(imported)
    assert not {m for m in imported if m == "asyncio" or m.startswith("asyncio.")}, "asyncio was imported"


def test_async_names_load_on_first_use() -> None:
    """lemonmcp.AsyncClient, Server and RELAYED_HANDLERS are imported on
    first use (they load asyncio), and are the modules' own objects."""
    import lemonmcp._serve
    import lemonmcp.aio

    assert lemonmcp.AsyncClient is lemonmcp.aio.AsyncClient
    assert lemonmcp.Server is lemonmcp._serve.Server
    assert lemonmcp.RELAYED_HANDLERS is lemonmcp._serve.RELAYED_HANDLERS
    # The submodules, as attributes of a package imported alone (README:
    # lemonmcp.aio.AsyncHost), in a process that has not imported them.
    from conftest import run_python

    r = run_python(["-c", "import lemonmcp; print(lemonmcp.aio.AsyncHost is lemonmcp.aio_host.AsyncHost)"])
    assert r.returncode == 0 and r.stdout.strip() == "True", r.stderr
    with pytest.raises(AttributeError, match="no attribute 'NoSuchName'"):
        lemonmcp.NoSuchName
