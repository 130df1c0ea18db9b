"""subscriptions/listen, the result cache and the tasks extension of the
2026-07-28 era through the Python binding, against the fixture server."""

from __future__ import annotations

import threading
import time
from typing import Any, Callable, List

import pytest

import lemonmcp
from lemonmcp import Client

MakeClient = Callable[..., Client]


def test_features_list_modern() -> None:
    modern = lemonmcp.features()["modern"]
    for name in ("subscriptions_listen", "result_cache", "tasks"):
        assert name in modern


def _wait_for(pred: Callable[[], bool], timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(0.01)
    return pred()


@pytest.mark.parametrize("mode", ["legacy", "modern"])
def test_subscribe_in_both_eras(make_client: MakeClient, mode: str) -> None:
    seen: List[str] = []
    lock = threading.Lock()

    def on_notification(n: Any) -> None:
        with lock:
            seen.append(n.method)

    client = make_client(protocol_mode=mode, on_notification=on_notification)
    client.subscribe("fixture://blob")
    assert client.call_tool("touch", {"uri": "fixture://blob"}).text == "ok"
    assert _wait_for(lambda: "notifications/resources/updated" in seen)
    client.unsubscribe("fixture://blob")


def test_result_cache_and_no_cache(make_client: MakeClient) -> None:
    client = make_client("-ttl-ms", "60000", protocol_mode="modern")
    before = lemonmcp.diagnostics()["result_cache"]
    first = [t.name for t in client.list_tools()]
    assert [t.name for t in client.list_tools()] == first
    after = lemonmcp.diagnostics()["result_cache"]
    assert after["hits"] > before["hits"]
    client.list_tools(no_cache=True)
    assert lemonmcp.diagnostics()["result_cache"]["misses"] > after["misses"]


def test_task_is_one_call(make_client: MakeClient) -> None:
    client = make_client(
        protocol={"mode": "modern", "tasks": True},
        elicitation=lambda params: {"action": "accept", "content": {"name": "Ada"}},
    )
    assert client.call_tool("task_echo", {"text": "lemon"}).text == "lemon"
    assert client.call_tool("task_ask", {}).text == "hello Ada"
    with pytest.raises(lemonmcp.LemonMCPError) as exc:
        client.call_tool("task_fail", {})
    assert "the task failed" in str(exc.value)


def test_task_needs_opt_in(make_client: MakeClient) -> None:
    client = make_client(protocol_mode="modern")
    with pytest.raises(lemonmcp.UnsupportedError) as exc:
        client.call_tool("task_echo", {"text": "x"})
    assert "protocol.tasks" in str(exc.value)
