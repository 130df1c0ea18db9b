"""The command line's one contract (issue: the host as users meet it): the
corpus of other applications' config files loads with its warnings, the
exit codes are the same with --stdio and --config, errors are one line,
arguments are checked against the tool's schema before anything is sent,
a --config call starts only the server it needs, and a failed server says
why, at once."""

from __future__ import annotations

import io
import json
import os
import shlex
from typing import Any, Dict, List

import pytest

import lemonmcp
from lemonmcp import cli

from cli_run import run_cli
from conftest import FIXTURE, REPO

CONFIGS = os.path.join(REPO, "tests", "configs")
USAGE, CONNECT, NOT_FOUND = cli.EXIT["usage"], cli.EXIT["connect"], cli.EXIT["not_found"]


def _corpus() -> List[Dict[str, Any]]:
    with open(os.path.join(CONFIGS, "expected.json"), encoding="utf-8") as f:
        files: List[Dict[str, Any]] = json.load(f)["files"]
    return files


@pytest.mark.parametrize("entry", _corpus(), ids=lambda e: str(e["path"]))
def test_cli_check_loads_the_corpus(entry: Dict[str, Any]) -> None:
    path = os.path.join(CONFIGS, entry["path"])
    inputs = [f"--input={k}={v}" for k, v in (entry.get("inputs") or {}).items()]
    r = run_cli(["--config", path, *inputs, "--json", "check"])
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    want = [f"{path}: {w}" for w in entry["warnings"]]
    assert doc["warnings"] == want
    assert {n: s["enabled"] for n, s in doc["servers"].items()} == entry["servers"]
    assert r.stderr.splitlines() == [f"lemonmcp: warning: {w}" for w in want], "each warning once, on stderr"
    if want:
        r = run_cli(["--config", path, *inputs, "--strict", "check"])
        assert r.returncode == USAGE
        assert len(r.stderr.splitlines()) == 1 and 'refused under "strict"' in r.stderr


def _two_servers(tmp_path: Any, **extra: Any) -> str:
    marker = tmp_path / "other-started"
    cfg = tmp_path / "mcp.json"
    servers: Dict[str, Any] = {
        "fx": {"command": FIXTURE},
        "other": {"command": "/bin/sh", "args": ["-c", f"touch {shlex.quote(str(marker))}; exec {shlex.quote(FIXTURE)}"]},
    }
    servers.update(extra)
    cfg.write_text(json.dumps({"mcpServers": servers}))
    return str(cfg)


def test_host_call_suggests_the_prefixed_name(tmp_path: Any) -> None:
    """`call echo` on a host whose tools are server__tool names suggests
    the host's name of the server's echo (its original_name)."""
    cfg = tmp_path / "mcp.json"
    cfg.write_text(json.dumps({"mcpServers": {"everything": {"command": FIXTURE}}}))
    r = run_cli(["--config", str(cfg), "call", "echo", "text=hi"])
    assert r.returncode == NOT_FOUND and 'did you mean "everything__echo"' in r.stderr, r.stderr


def test_config_call_starts_only_the_server_it_needs(tmp_path: Any) -> None:
    cfg = _two_servers(tmp_path)
    r = run_cli(["--config", cfg, "call", "fx__echo", "text=only me"])
    assert r.returncode == 0 and "only me" in r.stdout, r.stderr
    assert not (tmp_path / "other-started").exists(), "the other server was never started"
    r = run_cli(["--config", cfg, "tools"])
    assert r.returncode == 0 and (tmp_path / "other-started").exists(), "tools starts every server"


@pytest.mark.parametrize(
    "words,needle",
    [
        ([], "missing required argument: text (text to return) (give text=...)"),
        (["txt=hi"], 'argument txt: the tool takes no such argument (did you mean "text"?)'),
    ],
    ids=["required", "typo"],
)
def test_arguments_are_checked_before_sending(tmp_path: Any, words: List[str], needle: str) -> None:
    for target in (["--stdio", FIXTURE, "call", "echo"], ["--config", _two_servers(tmp_path), "call", "fx__echo"]):
        r = run_cli(target + words)
        assert r.returncode == USAGE, (r.stdout, r.stderr)
        assert r.stderr.count("\n") == 1 and needle in r.stderr, r.stderr
        assert "usage:" not in r.stderr


def test_unknown_tool_is_not_found_in_both_modes(tmp_path: Any) -> None:
    r = run_cli(["--stdio", FIXTURE, "call", "ecoh"])
    assert r.returncode == NOT_FOUND and "did you mean \"echo\"" in r.stderr, r.stderr
    cfg = _two_servers(tmp_path)
    r = run_cli(["--config", cfg, "call", "fx__ecoh"])
    assert r.returncode == NOT_FOUND and "did you mean \"fx__echo\"" in r.stderr, r.stderr
    r = run_cli(["--config", cfg, "call", "nobody__echo"])
    assert r.returncode == NOT_FOUND, r.stderr


def test_tool_error_is_printed_once_in_both_modes(tmp_path: Any) -> None:
    for argv in (["--stdio", FIXTURE, "call", "fail"], ["--config", _two_servers(tmp_path), "call", "fx__fail"]):
        r = run_cli([*argv, "message=it broke"])
        assert r.returncode == cli.EXIT["tool_error"], r.stderr
        assert (r.stdout + r.stderr).count("it broke") == 1, (r.stdout, r.stderr)
        assert r.stderr.count("\n") == 1 and "reported an error" in r.stderr, r.stderr


def test_failed_server_says_why(tmp_path: Any) -> None:
    dying = {"command": "/bin/sh", "args": ["-c", "echo 'Error: GITHUB_TOKEN is not set' >&2; exit 1"], "restart": False}
    cfg = _two_servers(tmp_path, dying=dying, missing={"command": "/nonexistent/lmcp-cli-server"})
    r = run_cli(["--config", cfg, "call", "missing__echo", "text=x"])
    assert r.returncode == CONNECT
    assert r.stderr == 'lemonmcp: server "missing" failed to start: executable not found: /nonexistent/lmcp-cli-server (not retried: starting it again cannot succeed)\n'
    r = run_cli(["--config", cfg, "call", "dying__echo", "text=x"])
    assert r.returncode == CONNECT, r.stderr
    assert 'server "dying" failed to start' in r.stderr and "exit status 1" in r.stderr
    assert "stderr: Error: GITHUB_TOKEN is not set" in r.stderr
    r = run_cli(["--config", cfg, "servers"])
    assert r.returncode == CONNECT, "servers exits non-zero when a server failed"
    assert "Error: GITHUB_TOKEN is not set" in r.stderr


def test_verbose_shows_each_servers_log_lines(tmp_path: Any) -> None:
    r = run_cli(["-v", "--config", _two_servers(tmp_path), "call", "fx__stderr", "bytes=40"])
    assert r.returncode == 0, r.stderr
    assert "[fx] fixture stderr line" in r.stderr


def test_a_failed_start_reports_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    waited: List[float] = []
    monkeypatch.setattr(cli._ClosedWatch, "wait", lambda self, timeout=cli.CLOSED_WAIT_S: waited.append(timeout))
    out, err = io.StringIO(), io.StringIO()
    status = cli.main(["--stdio", "/nonexistent/lmcp-cli-server", "info"], stdout=out, stderr=err)
    assert status == CONNECT
    assert "executable not found" in err.getvalue()
    assert waited == [], "no wait for a closed event that cannot come"


def test_auth_required_names_the_flags() -> None:
    exc = lemonmcp.AuthRequired("the server answered 401")
    text = cli._auth_required_text(exc)
    for flag in ("--client-id", "--client-secret-env", "--authorize", "--redirect-uri", "--header"):
        assert flag in text


def test_exit_table_is_the_readme_table() -> None:
    from lemonmcp._cli_exit import exit_table_markdown

    with open(os.path.join(REPO, "bindings", "python", "README.md"), encoding="utf-8") as f:
        assert exit_table_markdown() in f.read()


def test_usage_errors_are_one_line(tmp_path: Any) -> None:
    for argv in (["--config", str(tmp_path / "missing.json"), "tools"], ["--stdio", FIXTURE, "--timeout", "x", "info"], ["--stdio", FIXTURE]):
        r = run_cli(argv)
        assert r.returncode == USAGE
        assert r.stderr.count("\n") == 1 and "usage:" not in r.stderr, r.stderr


def test_host_commands_apply_env_cwd_inherit(tmp_path: Any) -> None:
    """--env, --cwd and --inherit-env reach the servers a host command
    starts (they were silently ignored); a server reached by URL refuses
    them, by name."""
    marker = tmp_path / "seen"
    script = f'echo "$LEMON_W4_SET|$(pwd)|$LEMON_W4_PARENT" > {shlex.quote(str(marker))}; exec {shlex.quote(FIXTURE)}'
    cfg = tmp_path / "mcp.json"
    cfg.write_text(json.dumps({"mcpServers": {"fx": {"command": "/bin/sh", "args": ["-c", script]}}}))
    work = tmp_path / "work"
    work.mkdir()
    for command in (["tools"], ["servers"], ["search", "echo"], ["call", "fx__echo", "text=hi"]):
        marker.unlink(missing_ok=True)
        r = run_cli(["--config", str(cfg), "--env", "LEMON_W4_SET=yes", "--cwd", str(work), "--inherit-env", *command],
                    env={"LEMON_W4_PARENT": "inherited"})
        assert r.returncode == 0, (command, r.stderr)
        assert marker.read_text().strip() == f"yes|{work}|inherited", command
    url = tmp_path / "url.json"
    url.write_text(json.dumps({"mcpServers": {"web": {"url": "http://127.0.0.1:9/mcp"}}}))
    r = run_cli(["--config", str(url), "--env", "A=1", "tools"])
    assert r.returncode == 2 and "web" in r.stderr and "reached by URL" in r.stderr, r.stderr
