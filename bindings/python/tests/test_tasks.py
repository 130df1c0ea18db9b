"""2025-11-25 tasks through the Python binding: a task-augmented tools/call
is one call that completes (with progress), against the fixture server
(the Go SDK with -legacy-tasks) and the TypeScript SDK v1 server
(tests/fixtures/tsv1tasks, installed by `make tasks-peer-setup`); and the
client as receiver: task-augmented elicitation and sampling served."""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from typing import Any, Callable, Iterator, List, NamedTuple

import pytest

import lemonmcp
from lemonmcp import Client

from conftest import READY_S, REPO


class Peer(NamedTuple):
    command: str
    args: List[str]
    slow: str
    slow_args: dict
    slow_text: str
    ask: str
    forever: str
    maybe: str
    maybe_text: str


def _ts_v1_peer(tmp: str) -> Peer:
    modules = os.path.join(REPO, ".cache", "tasks-ts", "node_modules")
    node = shutil.which("node")
    if node is None or not os.path.isfile(os.path.join(modules, "@modelcontextprotocol", "sdk", "package.json")):
        why = "the TypeScript SDK v1 is not installed (make tasks-peer-setup)"
        if os.environ.get("LEMONMCP_REQUIRE_PEERS"):
            pytest.fail(why)
        pytest.skip(why)
    os.symlink(modules, os.path.join(tmp, "node_modules"))
    script = os.path.join(tmp, "server.mjs")
    shutil.copy(os.path.join(REPO, "tests", "fixtures", "tsv1tasks", "server.mjs"), script)
    return Peer(node, [script], "delay", {"ms": 300}, "done after 300 ms", "ask", "forever", "maybe", "maybe lemon")


@pytest.fixture(params=["go fixture", "typescript sdk v1"])
def peer(request: Any, fixture_path: str) -> Iterator[Peer]:
    if request.param == "go fixture":
        yield Peer(fixture_path, ["-legacy-tasks"], "task_echo", {"text": "lemon"}, "lemon",
                   "task_ask", "task_forever", "task_maybe", "lemon")
        return
    tmp = tempfile.mkdtemp(prefix=f"lemonmcp-tasks-{os.getpid()}-")
    try:
        yield _ts_v1_peer(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


@pytest.fixture
def task_client(peer: Peer) -> Iterator[Client]:
    c = Client.stdio(peer.command, peer.args, call_timeout=15.0, ready_timeout=READY_S,
                     elicitation=lambda params: {"action": "accept", "content": {"name": "Ada"}})
    c.open(timeout=READY_S)
    yield c
    c.close(timeout=10)


def _cancelled(client: Client) -> int:
    tasks = client.call("tasks/list", all_pages=True)["tasks"]
    return sum(1 for t in tasks if t["status"] == "cancelled")


def _eventually(pred: Callable[[], bool], timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(0.05)
    return pred()


def test_task_is_one_call_with_progress(task_client: Client, peer: Peer) -> None:
    assert task_client.server_info.protocol_version == "2025-11-25"
    seen: List[lemonmcp.Progress] = []
    result = task_client.call_tool(peer.slow, peer.slow_args, progress=seen.append)
    assert result.text == peer.slow_text
    assert seen, "the task's status messages arrive as progress"
    assert seen[0].raw.get("task_id")


def test_task_input_through_the_host(task_client: Client, peer: Peer) -> None:
    assert task_client.call_tool(peer.ask, {}).text == "hello Ada"


def test_optional_task_on_request(task_client: Client, peer: Peer) -> None:
    assert task_client.call_tool(peer.maybe, {"text": "lemon"}).text == peer.maybe_text
    assert task_client.call_tool(peer.maybe, {"text": "lemon"}, task=True).text == peer.maybe_text


def test_task_timeout_cancels_the_task(task_client: Client, peer: Peer) -> None:
    with pytest.raises(lemonmcp.TimeoutError):
        task_client.call_tool(peer.forever, {}, timeout=0.5)
    assert _eventually(lambda: _cancelled(task_client) >= 1), "tasks/cancel reached the server"


def test_own_task_by_hand(task_client: Client, peer: Peer) -> None:
    """A raw tools/call carrying the application's own params.task is
    passed through: its CreateTaskResult comes back, and the application
    follows the task itself with tasks/get, tasks/result, tasks/list and
    tasks/cancel (it may keep the task beyond one call)."""
    created = task_client.call("tools/call", {"name": peer.slow, "arguments": peer.slow_args, "task": {"ttl": 60000}})
    task_id = created["task"]["taskId"]
    assert task_id and created["task"]["status"] == "working", created

    def status() -> str:
        return str(task_client.call("tasks/get", {"taskId": task_id})["status"])

    assert _eventually(lambda: status() == "completed", timeout=30), "the task ran to completion"
    result = task_client.call("tasks/result", {"taskId": task_id})
    assert result["content"][0]["text"] == peer.slow_text
    listed = task_client.call("tasks/list", all_pages=True)["tasks"]
    assert task_id in [t["taskId"] for t in listed]

    forever = task_client.call("tools/call", {"name": peer.forever, "arguments": {}, "task": {}})["task"]["taskId"]
    assert task_client.call("tasks/cancel", {"taskId": forever})["status"] == "cancelled"
    assert status() == "completed", "the first task is untouched"


def test_the_client_serves_task_augmented_requests(tmp_path: Any) -> None:
    # The client as receiver (protocol tasks): the TypeScript SDK v1's
    # ask_as_task and sample_as_task send their elicitation and sampling
    # with params.task; the client answers each with a task, the handler
    # gets the question (naming the task), and the server's tasks/result
    # gets the handler's answer.
    peer = _ts_v1_peer(str(tmp_path))
    seen: List[Any] = []

    def elicit(params: Any) -> Any:
        seen.append(("elicitation", params))
        return {"action": "accept", "content": {"name": "Ada"}}

    def sample(params: Any) -> Any:
        seen.append(("sampling", params))
        return {"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "stand-in"}

    c = Client.stdio(peer.command, peer.args, protocol={"tasks": True}, elicitation=elicit, sampling=sample,
                     call_timeout=15.0, ready_timeout=READY_S)
    c.open(timeout=READY_S)
    try:
        assert c.call_tool("ask_as_task", {}).text == "hello Ada (task created)"
        assert c.call_tool("sample_as_task", {}).text == "the model says hi (task created)"
    finally:
        c.close(timeout=10)
    assert [kind for kind, _ in seen] == ["elicitation", "sampling"]
    assert all(params["task"] == {"ttl": 60000} for _, params in seen), seen
