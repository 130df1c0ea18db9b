"""The interoperability corpus seen from Python (issue 10): servers that
write JSON in other styles connect, and bytes that are not UTF-8 reach the
host as U+FFFD, never as an internal error."""

from __future__ import annotations

import os
import sys
import threading
from typing import Callable, List

import pytest

import lemonmcp

from conftest import CALL_S, READY_S, REPO, wait_until

PYSERVER = os.path.join(REPO, "tests", "fixtures", "pyserver", "server.py")


@pytest.fixture(params=["lf", "crlf"])
def pyserver(request: pytest.FixtureRequest) -> "list[str]":
    args = [PYSERVER]
    if request.param == "crlf":
        args.append("--crlf")
    return args


def _client(args: "list[str]", **options: object) -> lemonmcp.Client:
    return lemonmcp.Client.stdio(
        sys.executable, args, protocol_mode="legacy", roots=[{"uri": "file:///wörk", "name": "work"}],
        call_timeout=CALL_S, ready_timeout=READY_S, **options,
    )


def test_json_dumps_server_connects_and_calls(pyserver: "list[str]") -> None:
    notes: List[lemonmcp.Notification] = []
    lock = threading.Lock()

    def on_note(n: lemonmcp.Notification) -> None:
        with lock:
            notes.append(n)

    with _client(pyserver, on_notification=on_note) as c:
        assert c.call_tool("echo", {"text": "grüße ✓ 𝄞"}).text == "grüße ✓ 𝄞"
        assert c.call_tool("notify").text == "ok"
        assert wait_until(lambda: any(n.params.get("data") == "notified ünïcode" for n in notes), timeout=5)
        assert "file:///wörk" in c.call_tool("roots").text


def test_invalid_utf8_becomes_replacement_character(pyserver: "list[str]") -> None:
    with _client(pyserver) as c:
        # Not an internal error, not a decode error: U+FFFD in the text.
        assert c.call_tool("bad_utf8").text == "bad \ufffd end"


def test_styled_fixture_server(make_client: Callable[..., lemonmcp.Client]) -> None:
    for style in ("python", "crlf", "reverse", "escape", "numbers", "all"):
        c = make_client("-style", style)
        assert c.call_tool("echo", {"text": "grüße ✓"}).text == "grüße ✓", style
        c.close()
