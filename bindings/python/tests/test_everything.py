"""The Python binding against a real server: the reference MCP server
`@modelcontextprotocol/server-everything` (pinned in tests/everything/everything.py,
installed from npm into .cache/everything/ on first use), over stdio, legacy
HTTP+SSE and Streamable HTTP.

Every test runs on every transport. The HTTP servers are started once per
session on 127.0.0.1 (free ports, their own process groups, killed at
teardown); the stdio server is spawned and reaped by the library itself.

These tests always run under `make test`. They are skipped, with the reason
printed, only when explicitly opted out: LEMONMCP_SKIP_EVERYTHING=1.
"""

from __future__ import annotations

import base64
import os
import sys
import threading
from typing import Any, Callable, Dict, Iterator, List, Optional

import pytest

import lemonmcp

from conftest import REPO, wait_until

sys.path.insert(0, os.path.join(REPO, "tests", "everything"))
import everything  # noqa: E402

READY_S = 20.0
CALL_S = 20.0
NOTIFY_S = 12.0  # the server's periodic notifications tick every 5 s

TRANSPORTS = ["stdio", "sse", "streamable_http"]
SERVER_NAME = "mcp-servers/everything"

OPTED_OUT = os.environ.get("LEMONMCP_SKIP_EVERYTHING", "") not in ("", "0")


# ------------------------------------------------------------------ fixtures


@pytest.fixture(scope="session")
def everything_js() -> str:
    if OPTED_OUT:
        pytest.skip("server-everything tests opted out (LEMONMCP_SKIP_EVERYTHING is set)")
    return everything.install()  # an install failure is an error, never a skip


class _Servers:
    """The HTTP servers, started on first use, stopped at session end."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.running: Dict[str, everything.HttpServer] = {}

    def url(self, kind: str) -> str:
        with self.lock:
            s = self.running.get(kind)
            if s is None or not s.alive():
                if s is not None:
                    s.close()
                s = self.running[kind] = everything.HttpServer(kind)
            return s.url

    def close(self) -> None:
        for s in self.running.values():
            s.close()
        self.running.clear()


@pytest.fixture(scope="session")
def servers(everything_js: str) -> Iterator[_Servers]:
    s = _Servers()
    yield s
    s.close()


class Recorder:
    """What a client's callbacks saw."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.notifications: List[lemonmcp.Notification] = []
        self.logs: List[lemonmcp.LogRecord] = []
        self.denials: List[Dict[str, Any]] = []

    def on_notification(self, n: lemonmcp.Notification) -> None:
        with self.lock:
            self.notifications.append(n)

    def on_log(self, r: lemonmcp.LogRecord) -> None:
        with self.lock:
            self.logs.append(r)

    def on_sampling_denied(self, payload: Dict[str, Any]) -> None:
        with self.lock:
            self.denials.append(payload)

    def methods(self) -> List[str]:
        with self.lock:
            return [n.method for n in self.notifications]

    def matching(self, method: str, pred: Callable[[Dict[str, Any]], bool] = lambda p: True) -> List[lemonmcp.Notification]:
        with self.lock:
            return [n for n in self.notifications if n.method == method and pred(n.params)]


def _transport_config(transport: str, servers: _Servers, everything_js: str) -> Dict[str, Any]:
    if transport == "stdio":
        return {"transport": lemonmcp.stdio_transport(everything.node(), [everything_js, "stdio"], stderr="capture")}
    kind = "sse" if transport == "sse" else "streamableHttp"
    return {"transport": lemonmcp.http_transport(servers.url(kind), type=transport)}


@pytest.fixture
def connect(servers: _Servers, everything_js: str) -> Iterator[Callable[..., lemonmcp.Client]]:
    """connect(transport, **options) -> (an open Client, its Recorder);
    closed at teardown."""
    made: List[lemonmcp.Client] = []

    def make(transport: str, config: Optional[Dict[str, Any]] = None, **options: Any) -> Any:
        if transport != "stdio" and transport not in lemonmcp.features().get("transports", []):
            pytest.fail(f"this build of liblemonmcp lacks the {transport!r} transport (lmcp_features: "
                        f"{lemonmcp.features().get('transports')})")
        rec = Recorder()
        options.setdefault("ready_timeout", READY_S)
        options.setdefault("call_timeout", CALL_S)
        options.setdefault("close_grace", 0.5)
        options.setdefault("client_name", "lemonmcp-everything-test")
        options.setdefault("on_notification", rec.on_notification)
        options.setdefault("on_log", rec.on_log)
        options.setdefault("on_sampling_denied", rec.on_sampling_denied)
        cfg = config if config is not None else _transport_config(transport, servers, everything_js)
        c = lemonmcp.Client(cfg, **options)
        made.append(c)
        c.open(timeout=READY_S)
        return c, rec

    yield make
    for c in made:
        c.close(timeout=10)


def _url_for(transport: str, servers: _Servers) -> str:
    return servers.url("sse" if transport == "sse" else "streamableHttp")


# --------------------------------------------------------------------- tests


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_handshake(connect: Any, transport: str) -> None:
    c, _ = connect(transport)
    info = c.server_info
    assert info.name == SERVER_NAME
    assert info.title == "Everything Reference Server"
    assert info.transport == transport
    assert info.protocol_version in lemonmcp.features()["protocol_versions"]
    for cap in ("tools", "resources", "prompts", "logging"):
        assert info.has_capability(cap), cap
    assert info.capabilities["resources"].get("subscribe") is True
    assert info.instructions and "Everything Server" in info.instructions
    c.ping()


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_tools_list_and_call(connect: Any, transport: str) -> None:
    c, _ = connect(transport)
    tools = {t.name: t for t in c.list_tools()}
    for name in ("echo", "get-sum", "trigger-long-running-operation", "get-tiny-image", "get-structured-content"):
        assert name in tools, sorted(tools)
    assert tools["echo"].input_schema["properties"]["message"]["type"] == "string"

    r = c.call_tool("echo", {"message": "hello, 世界"})
    assert not r.is_error and r.text == "Echo: hello, 世界"

    r = c.call_tool("get-sum", {"a": 2, "b": 3})
    assert not r.is_error and "5" in r.text, r.text

    r = c.call_tool("get-tiny-image", {})
    images = [b for b in r.content if b.type == "image"]
    assert images and images[0].mime_type == "image/png"
    data = images[0].bytes()
    assert data is not None and data[:8] == b"\x89PNG\r\n\x1a\n"

    r = c.call_tool("get-structured-content", {"location": "New York"})
    assert not r.is_error
    assert r.structured_content == {"temperature": 33, "conditions": "Cloudy", "humidity": 82}
    assert tools["get-structured-content"].output_schema is not None


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_tool_argument_error(connect: Any, transport: str) -> None:
    """A call the server rejects fails that call only: an error result or a
    protocol error, and the client stays usable."""
    c, _ = connect(transport)
    try:
        r = c.call_tool("get-sum", {"a": "two"})
        assert r.is_error, r.raw
    except lemonmcp.ProtocolError as exc:
        assert exc.code == -32602, exc
    assert c.call_tool("echo", {"message": "still here"}).text == "Echo: still here"


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_long_running_progress(connect: Any, transport: str) -> None:
    c, _ = connect(transport)
    seen: List[lemonmcp.Progress] = []
    r = c.call_tool("trigger-long-running-operation", {"duration": 1.2, "steps": 4}, progress=seen.append)
    assert "Long running operation completed" in r.text, r.text
    assert [p.progress for p in seen] == [1, 2, 3, 4]
    assert all(p.total == 4 for p in seen)
    assert len({p.call_id for p in seen}) == 1 and seen[0].call_id > 0


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_progress_resets_timeout(connect: Any, transport: str) -> None:
    """With reset_timeout_on_progress, a 2 s operation reporting every
    0.5 s finishes under a 1.2 s per-call timeout."""
    c, _ = connect(transport)
    r = c.call_tool("trigger-long-running-operation", {"duration": 2, "steps": 4},
                    timeout=1.2, reset_timeout_on_progress=True, progress=True)
    assert "completed" in r.text


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_timeout_then_usable(connect: Any, transport: str) -> None:
    c, _ = connect(transport)
    # The 10 s operation would otherwise succeed, and the client's own
    # call_timeout would name its own value.
    with pytest.raises(lemonmcp.TimeoutError, match="within 500 ms"):
        c.call_tool("trigger-long-running-operation", {"duration": 10, "steps": 2}, timeout=0.5)
    assert c.call_tool("echo", {"message": "after timeout"}).text == "Echo: after timeout"


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_resources_pagination_and_read(connect: Any, transport: str) -> None:
    c, _ = connect(transport)
    everything_at_once = c.list_resources()  # all_pages
    assert everything_at_once.next_cursor is None
    uris = [r.uri for r in everything_at_once]
    assert "demo://resource/static/document/features.md" in uris, uris

    # Page by page, following nextCursor by hand: the same list.
    paged: List[str] = []
    cursor: Optional[str] = None
    for _ in range(100):
        page = c.list_resources(cursor, all_pages=False)
        paged.extend(r.uri for r in page)
        cursor = page.next_cursor
        if cursor is None:
            break
    assert paged == uris

    for res in everything_at_once:
        rr = c.read_resource(res.uri)
        assert rr.contents and rr.contents[0].uri == res.uri
        assert rr.contents[0].text, res.uri
    features = c.read_resource("demo://resource/static/document/features.md")
    assert features.contents[0].mime_type == "text/markdown"
    assert "## Tools" in features.text

    templates = {t.uri_template for t in c.list_resource_templates()}
    assert "demo://resource/dynamic/text/{resourceId}" in templates
    text = c.read_resource("demo://resource/dynamic/text/3")
    assert text.contents[0].text.startswith("Resource 3:")
    blob = c.read_resource("demo://resource/dynamic/blob/4")
    assert base64.b64decode(blob.contents[0].blob or "").startswith(b"Resource 4:")

    with pytest.raises(lemonmcp.ProtocolError):
        c.read_resource("demo://resource/dynamic/text/0")


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_prompts_and_completion(connect: Any, transport: str) -> None:
    c, _ = connect(transport)
    prompts = {p.name: p for p in c.list_prompts()}
    assert {"simple-prompt", "args-prompt", "completable-prompt", "resource-prompt"} <= set(prompts)
    args = {a.name: a.required for a in prompts["args-prompt"].arguments}
    assert args == {"city": True, "state": False}

    simple = c.get_prompt("simple-prompt")
    assert simple.messages and simple.messages[0].role == "user" and simple.text
    weather = c.get_prompt("args-prompt", {"city": "Paris", "state": "Texas"})
    assert "Paris" in weather.text
    embedded = c.get_prompt("resource-prompt", {"resourceType": "Text", "resourceId": "2"})
    kinds = [m.content.type for m in embedded.messages]
    assert "resource" in kinds, kinds
    res = next(m.content.resource for m in embedded.messages if m.content.type == "resource")
    assert res is not None and res.uri == "demo://resource/dynamic/text/2"

    done = c.complete("completable-prompt", "department", "S")
    assert done.values == ["Sales", "Support"]
    names = c.complete("completable-prompt", "name", "", context={"department": "Engineering"})
    assert names.values == ["Alice", "Bob", "Charlie"]


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_logging_notifications(connect: Any, transport: str) -> None:
    c, rec = connect(transport)
    c.set_logging_level("debug")
    try:
        assert "Started simulated" in c.call_tool("toggle-simulated-logging", {}).text
        assert wait_until(lambda: rec.matching("notifications/message", lambda p: "-level message" in str(p.get("data")) or "level-message" in str(p.get("data"))), NOTIFY_S), rec.methods()
        msg = rec.matching("notifications/message")[-1].params
        assert msg["level"] in ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
    finally:
        assert "Stopped simulated" in c.call_tool("toggle-simulated-logging", {}).text


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_resource_subscription_updates(connect: Any, transport: str) -> None:
    c, rec = connect(transport)
    uri = "demo://resource/static/document/architecture.md"
    c.subscribe(uri)
    try:
        assert "Started simulated resource updated" in c.call_tool("toggle-subscriber-updates", {}).text
        assert wait_until(lambda: rec.matching("notifications/resources/updated", lambda p: p.get("uri") == uri), NOTIFY_S), rec.methods()
    finally:
        c.call_tool("toggle-subscriber-updates", {})
        c.unsubscribe(uri)
    # The subscribe request is acknowledged with a log message.
    assert wait_until(lambda: bool(rec.matching("notifications/message", lambda p: "Subscribe Resource request" in str(p.get("data")))), 5)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_sampling_delegate(connect: Any, transport: str) -> None:
    asked: List[Dict[str, Any]] = []

    def sampling(params: Dict[str, Any]) -> Dict[str, Any]:
        asked.append(params)
        return {"role": "assistant", "content": {"type": "text", "text": "a reply from the host"}, "model": "host-model"}

    c, _ = connect(transport, sampling=sampling)
    assert c.server_info.name == SERVER_NAME
    assert wait_until(lambda: "trigger-sampling-request" in [t.name for t in c.list_tools()], 5)
    r = c.call_tool("trigger-sampling-request", {"prompt": "What is MCP?", "maxTokens": 64})
    assert not r.is_error, r.text
    assert "a reply from the host" in r.text and "host-model" in r.text
    assert len(asked) == 1
    p = asked[0]
    assert p["maxTokens"] == 64 and p["systemPrompt"] == "You are a helpful test server."
    assert "What is MCP?" in p["messages"][0]["content"]["text"]


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_sampling_policy_deny(connect: Any, transport: str) -> None:
    """sampling_policy "deny": sampling is advertised, every request refused
    with a structured denial; the host sees a sampling_denied event."""
    c, rec = connect(transport, sampling_mode="deny")
    assert wait_until(lambda: "trigger-sampling-request" in [t.name for t in c.list_tools()], 5)
    try:
        r = c.call_tool("trigger-sampling-request", {"prompt": "denied?"})
        assert r.is_error, r.raw
    except lemonmcp.ProtocolError:
        pass  # the server may surface the refusal as a JSON-RPC error instead
    assert wait_until(lambda: bool(rec.denials), 5)
    denial = rec.denials[0]["denial"]
    assert denial["reason"] == "sampling_disabled"
    assert denial["request"]["message_count"] == 1 and denial["request"]["max_tokens"] == 100
    assert rec.denials[0]["server"]["name"] == SERVER_NAME


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_sampling_policy_bounds(connect: Any, transport: str) -> None:
    """sampling_policy "model" with max_tokens 50: a request over the bound
    is refused before the delegate sees it, one under it is delegated."""
    asked: List[Dict[str, Any]] = []

    def sampling(params: Dict[str, Any]) -> Dict[str, Any]:
        asked.append(params)
        return {"role": "assistant", "content": {"type": "text", "text": "bounded"}, "model": "m"}

    c, rec = connect(transport, sampling=sampling, sampling_mode="model", sampling_max_tokens=50)
    assert wait_until(lambda: "trigger-sampling-request" in [t.name for t in c.list_tools()], 5)
    try:
        r = c.call_tool("trigger-sampling-request", {"prompt": "too long", "maxTokens": 500})
        assert r.is_error
    except lemonmcp.ProtocolError:
        pass
    assert wait_until(lambda: bool(rec.denials), 5)
    assert rec.denials[0]["denial"]["reason"] == "max_tokens_exceeded"
    assert asked == []
    r = c.call_tool("trigger-sampling-request", {"prompt": "short", "maxTokens": 20})
    assert not r.is_error and "bounded" in r.text
    assert len(asked) == 1


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_elicitation_defaults(connect: Any, transport: str) -> None:
    """Accept with only the required field: the library fills every schema
    default the host left out before the server sees the answer."""
    asked: List[Dict[str, Any]] = []

    def elicitation(params: Dict[str, Any]) -> Dict[str, Any]:
        asked.append(params)
        return {"action": "accept", "content": {"name": "Ada Lovelace", "check": True}}

    c, _ = connect(transport, elicitation=elicitation)
    assert wait_until(lambda: "trigger-elicitation-request" in [t.name for t in c.list_tools()], 5)
    r = c.call_tool("trigger-elicitation-request", {})
    assert not r.is_error, r.text
    assert "User provided the requested information" in r.text
    assert "- Name: Ada Lovelace" in r.text
    assert "- Favorite Integer: 42" in r.text and "- Favorite Number: 3.14" in r.text
    assert '"firstLine": "It was a dark and stormy night."' in r.text
    assert '"untitledSingleSelectEnum": "Monica"' in r.text
    assert len(asked) == 1 and asked[0]["requestedSchema"]["required"] == ["name"]


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_elicitation_decline_and_invalid(connect: Any, transport: str) -> None:
    answers = [
        {"action": "decline"},
        {"action": "accept", "content": {"name": 12}},  # wrong type: the library refuses it
        {"action": "cancel"},
    ]

    def elicitation(params: Dict[str, Any]) -> Dict[str, Any]:
        return answers.pop(0)

    c, rec = connect(transport, elicitation=elicitation)
    assert wait_until(lambda: "trigger-elicitation-request" in [t.name for t in c.list_tools()], 5)
    assert "declined" in c.call_tool("trigger-elicitation-request", {}).text
    try:
        r = c.call_tool("trigger-elicitation-request", {})
        assert r.is_error, r.text
    except lemonmcp.ProtocolError:
        pass
    assert "cancelled" in c.call_tool("trigger-elicitation-request", {}).text
    assert answers == []


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_roots(connect: Any, transport: str) -> None:
    c, rec = connect(transport, roots=[{"uri": "file:///tmp/lemon-a", "name": "a"}])
    assert wait_until(lambda: rec.matching("notifications/message", lambda p: "Roots updated: 1" in str(p.get("data"))), 5), rec.methods()
    assert wait_until(lambda: "get-roots-list" in [t.name for t in c.list_tools()], 5)
    assert "file:///tmp/lemon-a" in c.call_tool("get-roots-list", {}).text
    c.set_roots([{"uri": "file:///tmp/lemon-a", "name": "a"}, {"uri": "file:///tmp/lemon-b", "name": "b"}])
    assert wait_until(lambda: rec.matching("notifications/message", lambda p: "Roots updated: 2" in str(p.get("data"))), 5), rec.methods()
    text = c.call_tool("get-roots-list", {}).text
    assert "file:///tmp/lemon-b" in text and "(2 total)" in text


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_concurrent_calls(connect: Any, transport: str) -> None:
    """Calls from many threads at once, one slow call among them: every
    answer matches its request."""
    c, _ = connect(transport)
    errors: List[BaseException] = []
    slow_done = threading.Event()

    def slow() -> None:
        try:
            assert "completed" in c.call_tool("trigger-long-running-operation", {"duration": 1, "steps": 2}).text
            slow_done.set()
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    def worker(i: int) -> None:
        try:
            for j in range(5):
                assert c.call_tool("echo", {"message": f"m{i}-{j}"}).text == f"Echo: m{i}-{j}"
                assert f"{i + j}" in c.call_tool("get-sum", {"a": i, "b": j}).text
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=slow)] + [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not any(t.is_alive() for t in threads)
    assert errors == []
    assert slow_done.is_set()


@pytest.mark.parametrize("transport", ["sse", "streamable_http"])
def test_http_detection(connect: Any, servers: _Servers, transport: str) -> None:
    """type "http": Streamable HTTP first, legacy SSE when the server does not
    take a POST there; the chosen transport is reported."""
    url = _url_for(transport, servers)
    c, _ = connect(transport, config={"transport": lemonmcp.http_transport(url, type="http")})
    assert c.server_info.transport == transport
    assert c.call_tool("echo", {"message": "detected"}).text == "Echo: detected"


def _children_running(script: str) -> List[int]:
    """Pids of our child processes whose command line names script."""
    me = os.getpid()
    pids = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{d}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if int(fields[1]) == me and fields[0] != "Z" and script in cmd:
            pids.append(int(d))
    return pids


def test_stdio_server_reaped(connect: Any, everything_js: str) -> None:
    """The stdio server is the library's child while connected and is gone
    (reaped) after close; the closed event says the close was requested."""
    c, _ = connect("stdio")
    pids = _children_running(everything_js + " stdio")
    assert len(pids) == 1, pids
    c.close(timeout=10)
    assert wait_until(lambda: not os.path.exists(f"/proc/{pids[0]}"), 10)
    assert wait_until(lambda: c.closed_info is not None, 5)
    info = c.closed_info
    assert info is not None and info.requested
