"""Host.serve and AsyncHost.serve (lemonmcp._serve), and the command line's
`serve` (lemonmcp._cli_serve): serving starts, is reached by LemonMCP's own
client, ends as asked, and leaves no process; bad options are usage errors
(docs/gateway.md). The official SDKs' clients are test_gateway_fronts.py's."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from typing import Any, Dict, List

import pytest
from gateway_run import HTTPGateway, children_of, gone, serve_argv, write_config

import lemonmcp
from lemonmcp._serve import RELAYED_HANDLERS

from conftest import HERE, PKG_ROOT, PROC_S, env_for_child, pid_alive, run_cli, wait_until

TOKEN = "s3cret-token-of-some-length"


def _sampling(params: Dict[str, Any]) -> Dict[str, Any]:
    text = params["messages"][0]["content"]["text"]
    return {"role": "assistant", "model": "front-model", "content": {"type": "text", "text": text.upper()}}


def _roundtrip(client: lemonmcp.Client) -> None:
    """What a front client of the gateway sees: every server's tools under
    the host's names, a call routed, and a server's sampling request
    answered by this client (relayed by the gateway)."""
    names = {t.name for t in client.list_tools()}
    assert {"fx__echo", "fy__echo", "fx__sample"} <= names, names
    assert client.call_tool("fy__echo", {"text": "through"}).text == "through"
    r = client.call_tool("fx__sample", {"prompt": "say it", "max_tokens": 3})
    assert not r.is_error, r.text
    assert json.loads(r.text)["content"]["text"] == "SAY IT"


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_program_serves_its_host_on_stdio(mode: str, tmp_path: Any) -> None:
    config = write_config(str(tmp_path))
    client = lemonmcp.Client.stdio(sys.executable, [os.path.join(HERE, "serve_worker.py"), config, mode],
                                   env={"PYTHONPATH": PKG_ROOT}, sampling=_sampling, call_timeout=30, ready_timeout=60)
    try:
        client.open(timeout=60)
        _roundtrip(client)
    finally:
        client.close(timeout=30)


def test_host_serve_http_then_stop(tmp_path: Any) -> None:
    with lemonmcp.Host(write_config(str(tmp_path)), ready_timeout=30, defaults={"handlers": RELAYED_HANDLERS}) as host:
        with host.serve(http="127.0.0.1:0") as server:
            assert server.url and server.url.startswith("http://127.0.0.1:") and server.url.endswith("/mcp")
            assert not server.wait(0.05)  # still serving
            with lemonmcp.Client.http(server.url, sampling=_sampling, call_timeout=30) as client:
                _roundtrip(client)
            server.stop(5)
            assert server.wait(5)
        assert server.closed
        # The host is the application's again once its server is gone: its
        # calls, and the events its session gets (a call's progress).
        assert host.call_tool("fx__echo", {"text": "mine"}).text == "mine"
        seen: List[Any] = []
        assert host.call_tool("fx__slow", {"ms": 60, "steps": 3}, progress=lambda *a: seen.append(a)).text == "done"
        assert seen


def test_host_close_stops_what_it_serves(tmp_path: Any) -> None:
    host = lemonmcp.Host(write_config(str(tmp_path), servers=("fx",)), ready_timeout=30)
    with host:
        server = host.serve(http="127.0.0.1:0")
    assert server.closed and host.closed


@pytest.mark.parametrize(
    "kwargs,needle",
    [
        ({"fds": (0,)}, "fds"),
        ({"fds": (0, 1), "http": "127.0.0.1:0"}, "not both"),
        ({"http": ""}, "http"),
        ({"http": "127.0.0.1:0", "no_such_option": 1}, "no_such_option"),
        ({"http": "127.0.0.1:0", "auth": {"bearer_env": "LEMONMCP_TEST_UNSET_VAR"}}, "LEMONMCP_TEST_UNSET_VAR"),
    ],
)
def test_bad_serve_arguments_name_the_problem(kwargs: Dict[str, Any], needle: str, tmp_path: Any) -> None:
    with lemonmcp.Host(write_config(str(tmp_path), servers=("fx",)), ready_timeout=30) as host:
        with pytest.raises(lemonmcp.InvalidArgument) as info:
            host.serve(**kwargs)
        assert needle in str(info.value)


def test_a_non_loopback_front_without_authentication_is_refused(tmp_path: Any) -> None:
    with lemonmcp.Host(write_config(str(tmp_path), servers=("fx",)), ready_timeout=30) as host:
        with pytest.raises(lemonmcp.PolicyDenied) as info:
            host.serve(http="0.0.0.0:0")
        assert "0.0.0.0" in str(info.value)
        with pytest.raises(lemonmcp.PolicyDenied):
            host.serve(http="0.0.0.0:0", allow_non_loopback=True)


def test_a_closed_host_is_not_served(tmp_path: Any) -> None:
    host = lemonmcp.Host(write_config(str(tmp_path), servers=("fx",)), ready_timeout=30)
    host.close()
    with pytest.raises(lemonmcp.ClosedError):
        host.serve(http="127.0.0.1:0")


# ------------------------------------------------------------ command line


@pytest.mark.parametrize("end,status", [("stdin", 0), ("sigterm", 0), ("sigint", 130)])
def test_cli_stdio_gateway_ends_and_leaves_no_process(end: str, status: int, tmp_path: Any) -> None:
    proc = subprocess.Popen(serve_argv(write_config(str(tmp_path))), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env_for_child(), cwd=PKG_ROOT)
    try:
        assert wait_until(lambda: len(children_of(proc.pid)) >= 2, timeout=PROC_S), "the servers never started"
        kids = children_of(proc.pid)
        assert proc.stdin is not None
        if end == "stdin":
            proc.stdin.close()  # the front client went away
        else:
            proc.send_signal(signal.SIGTERM if end == "sigterm" else signal.SIGINT)
        assert proc.wait(timeout=PROC_S) == status, proc.stderr.read() if proc.stderr else ""
        assert gone(kids), [k for k in kids if pid_alive(k)]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=PROC_S)


def test_cli_http_gateway_ends_on_sigterm_after_its_calls(tmp_path: Any) -> None:
    gw = HTTPGateway(write_config(str(tmp_path)))
    kids = children_of(gw.proc.pid)
    results: List[Any] = []
    with lemonmcp.Client.http(gw.url, call_timeout=20) as client:
        progressed = threading.Event()

        def long_call() -> None:
            try:
                results.append(client.call_tool("fx__slow", {"ms": 1500, "steps": 5},
                                                progress=lambda *a: progressed.set()).text)
            except lemonmcp.LemonMCPError as exc:  # reported below
                results.append(exc)

        t = threading.Thread(target=long_call)
        t.start()
        assert progressed.wait(PROC_S), "the call never started"
        done = gw.stop(signal.SIGTERM)
        t.join(PROC_S)
    assert results == ["done"], results  # the call in flight finished
    assert done.returncode == 0, done.stderr[-3000:]
    assert gone(kids)


def test_cli_http_token_from_the_environment(tmp_path: Any) -> None:
    gw = HTTPGateway(write_config(str(tmp_path), servers=("fx",)), "--token-env", "GW_TOKEN", env={"GW_TOKEN": TOKEN})
    try:
        with pytest.raises(lemonmcp.LemonMCPError):
            with lemonmcp.Client.http(gw.url, ready_timeout=30) as client:
                client.list_tools()
        with pytest.raises(lemonmcp.LemonMCPError):
            with lemonmcp.Client.http(gw.url, {"Authorization": "Bearer " + TOKEN[:-1] + "x"}, ready_timeout=30) as client:
                client.list_tools()
        with lemonmcp.Client.http(gw.url, {"Authorization": "Bearer " + TOKEN}, ready_timeout=30) as client:
            assert "fx__echo" in {t.name for t in client.list_tools()}
    finally:
        done = gw.stop()
    assert done.returncode == 0 and TOKEN not in done.stderr and TOKEN not in done.stdout


@pytest.mark.parametrize(
    "args,needle",
    [
        (["serve"], "--config"),
        (["--stdio", "x", "serve"], "--config"),
        (["--config", "{config}", "serve", "--token-env", "T"], "--http"),
        (["--config", "{config}", "serve", "--allow-remote"], "--http"),
        (["--config", "{config}", "serve", "--http", "127.0.0.1:0", "--jwks-url", "https://as.example/jwks"], "--issuer"),
        (["--config", "{config}", "serve", "--http", "127.0.0.1:0", "--token-env", "T", "--issuer", "x"], "not both"),
        (["--config", "{config}", "serve", "--grace", "-1"], "--grace"),
        (["--config", "{config}", "serve", "--http", "127.0.0.1:0", "--token-env", "LEMONMCP_TEST_UNSET_VAR"], "LEMONMCP_TEST_UNSET_VAR"),
        (["--config", "{config}", "serve", "--http", "0.0.0.0:0"], "0.0.0.0"),
        (["--config", "{config}", "serve", "--http", "0.0.0.0:0", "--allow-remote"], "auth"),
    ],
)
def test_cli_serve_usage_errors(args: List[str], needle: str, tmp_path: Any) -> None:
    config = write_config(str(tmp_path), servers=("fx",))
    proc = run_cli([a.replace("{config}", config) for a in args])
    assert proc.returncode == 2, proc.stderr
    assert needle in proc.stderr and proc.stderr.count("\n") == 1 and not proc.stdout, proc.stderr


@pytest.mark.parametrize(
    "flags,options",
    [
        ([], {}),
        (["--http", "127.0.0.1:0"], {"stop_timeout_ms": 10000}),
        (["--http", "127.0.0.1:0", "--token-env", "GW", "--grace", "2.5"], {"stop_timeout_ms": 2500, "auth": {"bearer_env": "GW"}}),
        (
            ["--http", "0.0.0.0:8808", "--allow-remote", "--jwks-url", "https://as.example/jwks", "--issuer", "https://as.example",
             "--audience", "https://gw.example/mcp", "--origin", "https://app.example", "--max-sessions", "8", "--session-idle", "60"],
            {"stop_timeout_ms": 10000, "allow_non_loopback": True, "allowed_origins": ["https://app.example"], "max_sessions": 8,
             "session_idle_timeout_ms": 60000,
             "auth": {"jwks_url": "https://as.example/jwks", "issuer": "https://as.example", "audience": "https://gw.example/mcp"}},
        ),
    ],
)
def test_cli_serve_flags_are_the_librarys_options(flags: List[str], options: Dict[str, Any]) -> None:
    from lemonmcp._cli_serve import server_options
    from lemonmcp.cli import build_parser

    ns = build_parser().parse_args(["--config", "x.json", "serve", *flags])
    assert server_options(ns) == options


def test_cli_serve_on_a_busy_address_fails_to_connect(tmp_path: Any) -> None:
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        proc = run_cli(["--config", write_config(str(tmp_path), servers=("fx",)), "serve", "--http", f"127.0.0.1:{port}"])
    assert proc.returncode == 3, proc.stderr  # the one table's "connect"
    assert f"127.0.0.1:{port}" in proc.stderr and proc.stderr.count("\n") == 1 and not proc.stdout


@pytest.mark.parametrize("verbose", [True, False])
def test_cli_serve_verbose_prints_the_servers_log_lines(verbose: bool, tmp_path: Any) -> None:
    """-v: the servers' log lines (here their stderr) on the gateway's
    stderr, though the gateway holds the host's event handler; without it,
    none."""
    config = str(tmp_path / "mcp.json")
    with open(config, "w") as f:
        json.dump({"mcpServers": {"fx": {"command": os.environ["LEMONMCP_FIXTURE"], "args": ["-stderr-flood", "200"]}}}, f)
    gw = HTTPGateway(config, *(["-v"] if verbose else []))
    try:
        with lemonmcp.Client.http(gw.url, ready_timeout=30) as client:
            assert "fx__echo" in {t.name for t in client.list_tools()}
    finally:
        done = gw.stop()
    assert done.returncode == 0, done.stderr[-3000:]
    assert ("[fx] fixture stderr flood line" in done.stderr) == verbose, done.stderr[-3000:]
