"""`lemonmcp serve` driven by the official SDKs' clients (docs/gateway.md):
the Python SDK 1.x and 2.x and the TypeScript SDK v1 and v2 (both 2.x
also in the 2026-07-28 era), each over stdio (the client starts the gateway) and
Streamable HTTP, through tests/gateway/pyfront.py and tsfront.mjs. Behind
the gateway, fixture servers (fx, fy) do the asking: each relay feature is
checked on what reached the front client and what came back to the server.

Each front is one process running every scenario on one session (lean:
one gateway start per stdio front, one HTTP gateway per module)."""

from __future__ import annotations

import os
from typing import Any, Dict, Iterator, List

import pytest
from gateway_run import FRONTS, HTTPGateway, run_front, serve_command, write_config

#: What every front runs (a 2026-07-28 session gets list_changed on the
#: subscriptions/listen stream it opens). The Python SDK sends no
#: notifications/cancelled for a call it abandons, so cancellation is the
#: TypeScript fronts'.
COMMON = ["tools", "call", "sampling", "elicitation", "roots", "progress", "list_changed"]
SCENARIOS: Dict[str, List[str]] = {name: COMMON + (["cancel"] if name.startswith("ts-") else []) for name in FRONTS}


def check_report(report: Dict[str, Any], front: str, log: str) -> None:
    """What each scenario must show (see tests/gateway/pyfront.py)."""
    names = report["tools"]["names"]
    assert "fx__echo" in names and "fy__echo" in names, names
    assert all(len(n) <= 64 for n in names)
    assert report["call"] == {"text": "hello through the gateway", "is_error": False}
    # Sampling, elicitation and roots: the fixture's request reached this
    # front client, and the client's own answer went back to the server.
    s = report["sampling"]
    assert not s["is_error"] and s["asked"] == ["two plus two"] and "A answers two plus two" in s["text"], s
    e = report["elicitation"]
    assert not e["is_error"] and e["asked"] == ["who are you?"] and '"name":"A"' in e["text"].replace(" ", ""), e
    r = report["roots"]
    assert not r["is_error"] and r["asked"] == 1 and "file:///front/root" in r["text"], r
    p = report["progress"]
    assert p["text"] == "done" and p["progress"] and p["progress"] == sorted(p["progress"]), p
    lc = report["list_changed"]
    assert "notifications/tools/list_changed" in lc["notified"] and lc["dynamic"], lc
    if "cancel" in report:
        c = report["cancel"]
        assert c["error"] and c["after"] == "after the cancel", c
        # The server saw notifications/cancelled for its own request: the
        # fixture logs every line it reads and "cancelled <id>" once its
        # handler stopped.
        with open(log) as f:
            seen = f.read()
        assert "notifications/cancelled" in seen, f"{front}: the server never saw the cancellation"


@pytest.mark.parametrize("front", sorted(FRONTS))
def test_stdio_front(front: str, tmp_path: Any) -> None:
    log = str(tmp_path / "fx.log")
    config = write_config(str(tmp_path), log=log)
    report = run_front(front, ["--stdio", serve_command(config)], SCENARIOS[front])
    check_report(report, front, log)


@pytest.fixture(scope="module")
def http_gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Dict[str, str]]:
    tmp = str(tmp_path_factory.mktemp("gw-http"))
    log = os.path.join(tmp, "fx.log")
    gw = HTTPGateway(write_config(tmp, log=log))
    try:
        yield {"url": gw.url, "log": log}
    finally:
        done = gw.stop()
        assert done.returncode == 0, done.stderr[-3000:]


@pytest.mark.parametrize("front", sorted(FRONTS))
def test_http_front(front: str, http_gateway: Dict[str, str]) -> None:
    report = run_front(front, ["--url", http_gateway["url"]], SCENARIOS[front])
    check_report(report, front, http_gateway["log"])


@pytest.mark.parametrize("front", ["py-sdk-1", "py-sdk-2"])
def test_two_http_sessions_get_only_their_own_requests(front: str, http_gateway: Dict[str, str]) -> None:
    report = run_front(front, ["--url", http_gateway["url"]], ["two_sessions"])["two_sessions"]
    for label, other in (("a", "b"), ("b", "a")):
        mine = report[label]
        assert mine["asked"] == sorted(f"{label}{i}" for i in range(4)), mine
        up = label.upper()
        assert all(f"{up} answers {label}" in t for t in mine["results"]), mine
        assert not any(f"{other.upper()} answers" in t for t in mine["results"]), mine


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_a_server_killed_mid_call_fails_only_that_call(transport: str, tmp_path: Any) -> None:
    config = write_config(str(tmp_path))
    if transport == "stdio":
        report = run_front("py-sdk-1", ["--stdio", serve_command(config)], ["killed"])
    else:
        gw = HTTPGateway(config)
        try:
            report = run_front("py-sdk-1", ["--url", gw.url], ["killed"])
        finally:
            assert gw.stop().returncode == 0
    killed = report["killed"]
    assert killed["failed"], killed
    assert killed["other"] == "done" and killed["after"] == "still here", killed


def test_a_python_host_serves_an_official_client(tmp_path: Any) -> None:
    """Host.serve in this process (not the command line), reached by the
    TypeScript SDK v1 client over HTTP: the same relay."""
    import lemonmcp

    log = str(tmp_path / "fx.log")
    config = write_config(str(tmp_path), log=log)
    with lemonmcp.Host(config, ready_timeout=30, defaults={"handlers": lemonmcp.RELAYED_HANDLERS}) as host:
        with host.serve(http="127.0.0.1:0") as server:
            assert server.url is not None
            report = run_front("ts-sdk-1", ["--url", server.url], SCENARIOS["ts-sdk-1"])
    check_report(report, "ts-sdk-1", log)
