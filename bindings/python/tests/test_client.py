"""The blocking client against the fixture server over stdio."""

from __future__ import annotations

import builtins
import concurrent.futures
import gc
import hashlib
import json
import threading
import time
from typing import Any, Callable, Dict, List

import pytest

import lemonmcp
from lemonmcp import Client

from conftest import CALL_S, READY_S, pid_alive, wait_until

MakeClient = Callable[..., Client]


# ------------------------------------------------------------------ helpers


def test_server_info(client: Client) -> None:
    info = client.server_info
    assert info.name == "lemon-fixture" and info.version
    assert info.transport == "stdio" and info.protocol_version
    assert "tools" in info.capabilities and "prompts" in info.capabilities
    assert info.instructions and "Fixture" in info.instructions
    assert info.raw["serverInfo"]["name"] == "lemon-fixture"
    assert client.state == "ready"


def test_list_tools(client: Client) -> None:
    tools = client.list_tools()
    names = {t.name for t in tools}
    assert {"echo", "add", "slow", "fail", "pid", "roots", "sample", "elicit"} <= names
    echo = next(t for t in tools if t.name == "echo")
    assert echo.input_schema["properties"]["text"]["type"] == "string"
    assert echo.description and echo.raw["name"] == "echo"
    assert tools.next_cursor is None


@pytest.mark.parametrize(
    "tool,args,text,structured",
    [
        ("echo", {"text": "hi there"}, "hi there", {"text": "hi there"}),
        ("echo", {"text": "ünïcødé ✓"}, "ünïcødé ✓", {"text": "ünïcødé ✓"}),
        ("add", {"a": 2, "b": 40}, "42", {"sum": 42}),
        ("add", {"a": 0.5, "b": 0.25}, "0.75", {"sum": 0.75}),
    ],
)
def test_call_tool(client: Client, tool: str, args: Dict[str, Any], text: str, structured: Any) -> None:
    r = client.call_tool(tool, args)
    assert not r.is_error
    assert r.text == text
    assert r.structured_content == structured
    assert r.content[0].type == "text"


def test_tool_error_is_a_result(client: Client) -> None:
    r = client.call_tool("fail", {"message": "it broke"})
    assert r.is_error is True and r.text == "it broke"


def test_large_result(client: Client) -> None:
    r = client.call_tool("large", {"bytes": 1_000_000})
    assert r.text == "x" * 1_000_000


def test_generic_call(client: Client) -> None:
    raw = client.call("tools/call", {"name": "echo", "arguments": {"text": "raw"}})
    assert raw["structuredContent"] == {"text": "raw"}
    assert "tools" in client.call("tools/list")


def test_resources(client: Client) -> None:
    res = client.list_resources()
    uris = [r.uri for r in res]
    assert len([u for u in uris if u.startswith("fixture://item/")]) == 25
    assert "fixture://blob" in uris
    item = next(r for r in res if r.uri == "fixture://item/01")
    assert item.mime_type == "text/plain" and item.name == "item-01"


def test_read_resource_text_and_blob(client: Client) -> None:
    r = client.read_resource("fixture://item/07")
    assert r.text == "item 07" and r.contents[0].uri == "fixture://item/07"
    b = client.read_resource("fixture://blob")
    assert b.contents[0].blob is not None and b.contents[0].size == 16
    assert len(b.contents[0].bytes() or b"") == 16


def test_read_resource_verify(client: Client) -> None:
    text = b"item 07"
    digest = "sha256:" + hashlib.sha256(text).hexdigest()
    r = client.read_resource("fixture://item/07", verify={"digest": digest, "size": len(text)})
    assert r.text == "item 07"
    blob = bytes(range(16))
    b = client.read_resource("fixture://blob", verify={"digest": "sha256:" + hashlib.sha256(blob).hexdigest()})
    assert b.contents[0].bytes() == blob
    with pytest.raises(lemonmcp.ProtocolError, match="verification failed: the content is 7 bytes, the expected size is 8"):
        client.read_resource("fixture://item/07", verify={"digest": digest, "size": 8})
    with pytest.raises(lemonmcp.ProtocolError, match="digest sha256:[0-9a-f]{64} is not the expected"):
        client.read_resource("fixture://item/08", verify={"digest": digest})
    with pytest.raises(lemonmcp.ProtocolError, match="does not begin with a YAML frontmatter block"):
        client.read_resource("fixture://item/07", verify={"frontmatter": {"name": "x"}})
    with pytest.raises(lemonmcp.InvalidArgument, match="only to resources/read"):
        client.call("tools/call", {"name": "echo", "arguments": {"text": "x"}}, verify={"size": 1})


def test_templates(client: Client) -> None:
    tps = client.list_resource_templates()
    assert [t.uri_template for t in tps] == ["fixture://items/{id}"]
    r = client.read_resource("fixture://items/abc")
    assert r.contents and r.contents[0].uri == "fixture://items/abc"


def test_prompts(client: Client) -> None:
    ps = {p.name: p for p in client.list_prompts()}
    assert set(ps) >= {"greet", "plain"}
    assert [(a.name, a.required) for a in ps["greet"].arguments] == [("name", True)]
    g = client.get_prompt("greet", {"name": "Ada"})
    assert g.text == "Hello, Ada!" and g.messages[0].role == "user"
    assert client.get_prompt("plain").messages


def test_ping_and_logging_level(make_client: MakeClient) -> None:
    # ping and logging/setLevel exist in the legacy era only (the default,
    # "auto", finds the dual-era fixture modern)
    client = make_client(protocol_mode="legacy")
    assert client.ping() is None
    assert client.set_logging_level("debug") is None
    with pytest.raises(lemonmcp.InvalidArgument, match="level"):
        client.set_logging_level("loud")


def test_subscribe_and_updates(make_client: MakeClient) -> None:
    got: List[lemonmcp.Notification] = []
    seen = threading.Event()

    def on_note(n: lemonmcp.Notification) -> None:
        got.append(n)
        if n.method == "notifications/resources/updated":
            seen.set()

    c = make_client(on_notification=on_note)
    c.subscribe("fixture://item/03")
    c.call_tool("touch", {"uri": "fixture://item/03"})
    assert seen.wait(CALL_S)
    assert any(n.params.get("uri") == "fixture://item/03" for n in got)
    c.unsubscribe("fixture://item/03")


def test_list_changed_and_server_log_notifications(make_client: MakeClient) -> None:
    methods: List[str] = []
    threads: List[threading.Thread] = []
    done = threading.Event()

    def on_note(n: lemonmcp.Notification) -> None:
        methods.append(n.method)
        threads.append(threading.current_thread())
        if "notifications/tools/list_changed" in methods and "notifications/message" in methods:
            done.set()

    c = make_client(on_notification=on_note, protocol_mode="legacy")  # logging/setLevel: legacy era
    c.set_logging_level("info")
    c.call_tool("notify")
    assert done.wait(CALL_S), methods
    assert all(t is not threading.main_thread() for t in threads)
    assert "dynamic_1" in {t.name for t in c.list_tools()}


def test_complete_needs_the_capability(client: Client) -> None:
    with pytest.raises(lemonmcp.UnsupportedError):
        client.complete("greet", "name", "A")


# ------------------------------------------------------------------ pagination


@pytest.mark.parametrize(
    "lister,total",
    [("list_resources", 26), ("list_tools", None), ("list_prompts", 2)],
)
def test_pagination(make_client: MakeClient, lister: str, total: Any) -> None:
    c = make_client("-page-size", "5")
    everything = getattr(c, lister)()
    if total is not None:
        assert len(everything) == total
    assert everything.next_cursor is None
    pages: List[Any] = []
    page = getattr(c, lister)(all_pages=False)
    pages.append(page)
    while page.next_cursor:
        assert len(page) == 5
        page = getattr(c, lister)(page.next_cursor)
        pages.append(page)
        assert len(pages) < 20
    flat = [x.raw for p in pages for x in p]
    assert flat == [x.raw for x in everything]
    if len(everything) > 5:
        assert len(pages) == -(-len(everything) // 5)


def test_max_pages_limit(make_client: MakeClient) -> None:
    c = make_client("-page-size", "5", max_pages=2)
    with pytest.raises(lemonmcp.LemonMCPError):
        c.list_resources()
    assert len(c.list_resources(all_pages=False)) == 5


# ------------------------------------------------------------------ errors


@pytest.mark.parametrize(
    "call,exc,check",
    [
        (lambda c: c.call_tool("no_such_tool"), lemonmcp.ProtocolError, lambda e: e.code is not None),
        (lambda c: c.get_prompt("no_such_prompt"), lemonmcp.ProtocolError, lambda e: e.code is not None),
        (lambda c: c.read_resource("fixture://nothing/here"), lemonmcp.ProtocolError, lambda e: e.code is not None),
        (lambda c: c.call("no/such/method"), lemonmcp.ProtocolError, lambda e: e.code == -32601),
        (lambda c: c.complete("greet", "name", "x"), lemonmcp.UnsupportedError, lambda e: True),
        (lambda c: c.call("tools/list", [1]), lemonmcp.InvalidArgument, lambda e: "params" in str(e)),
        (lambda c: c.call("", None), lemonmcp.InvalidArgument, lambda e: "method" in str(e)),
        (lambda c: c.call_tool("echo", {"text": object()}), lemonmcp.InvalidArgument, lambda e: "params" in str(e)),
        (lambda c: c.call_tool("echo", {"text": "x"}, timeout="soon"), lemonmcp.InvalidArgument, lambda e: "timeout" in str(e)),
    ],
)
def test_errors_map_to_exceptions(client: Client, call: Any, exc: Any, check: Any) -> None:
    with pytest.raises(exc) as ei:
        call(client)
    assert check(ei.value), repr(ei.value)
    assert client.call_tool("echo", {"text": "still fine"}).text == "still fine"


def test_unknown_call_option_is_a_type_error(client: Client) -> None:
    with pytest.raises(TypeError, match="bogus"):
        client.call_tool("echo", {"text": "x"}, bogus=1)


def test_call_timeout(client: Client) -> None:
    # The server would answer in 10 minutes and the client's call_timeout is
    # CALL_S: the error names which limit ended the call.
    with pytest.raises(lemonmcp.TimeoutError) as ei:
        client.call_tool("slow", {"ms": 600000}, timeout=0.3)
    assert isinstance(ei.value, builtins.TimeoutError)
    assert "within 300 ms" in str(ei.value), ei.value
    assert client.call_tool("echo", {"text": "after"}).text == "after"


def test_calls_before_connect_and_after_close(make_client: MakeClient) -> None:
    c = make_client(open=False)
    assert c.state == "new"
    with pytest.raises(lemonmcp.InvalidState):
        c.call_tool("echo", {"text": "x"})
    with pytest.raises(lemonmcp.InvalidState):
        c.server_info
    c.open(timeout=READY_S)
    c.close()
    c.close()  # idempotent
    assert c.closed and c.state == "closed"
    with pytest.raises(lemonmcp.ClosedError) as ei:
        c.call_tool("echo", {"text": "x"})
    assert isinstance(ei.value, ConnectionError)
    assert c.server_info.name == "lemon-fixture"  # kept after close


def test_wait_ready_option_queues_the_call(make_client: MakeClient) -> None:
    c = make_client(open=False)
    c.connect()
    assert c.call_tool("echo", {"text": "queued"}, wait_ready=True).text == "queued"


@pytest.mark.parametrize(
    "flags,options,exc,match",
    [
        (["-init-error"], {}, lemonmcp.ProtocolError, "refused initialize"),
        (["-no-init"], {"ready_timeout": 0.5}, lemonmcp.TimeoutError, "did not answer initialize within 500 ms"),
        (["-exit-after-ms", "1", "-no-init"], {}, lemonmcp.ClosedError, "closed before the handshake completed"),
    ],
)
def test_handshake_failures(
    make_client: MakeClient, flags: List[str], options: Dict[str, Any], exc: Any, match: str
) -> None:
    """The handshake's own failure ends open(), not open's READY_S: that
    would be a TimeoutError saying "not ready after 15000 ms"."""
    c = make_client(*flags, open=False, **options)
    with pytest.raises(exc, match=match):
        c.open(timeout=READY_S)
    assert c.closed


def test_unreachable_server() -> None:
    c = Client.stdio("/nonexistent/server-binary")
    with pytest.raises(lemonmcp.LemonMCPError) as ei:
        c.open(timeout=READY_S)
    assert "not found" in str(ei.value)


def test_crash_mid_call_closes_with_reason(make_client: MakeClient) -> None:
    closed: List[lemonmcp.Closed] = []
    got = threading.Event()

    def on_closed(info: lemonmcp.Closed) -> None:
        closed.append(info)
        got.set()

    c = make_client(on_closed=on_closed)
    with pytest.raises(lemonmcp.ClosedError):
        c.call_tool("crash", {"code": 3})
    assert got.wait(CALL_S)
    assert closed[0].exit_code == 3 and not closed[0].requested
    assert c.closed_info is not None and c.closed_info.exit_code == 3
    assert c.state == "closed"


# ------------------------------------------------------------------ callbacks


def test_log_lines_from_library_threads(make_client: MakeClient) -> None:
    recs: List[lemonmcp.LogRecord] = []
    threads: List[threading.Thread] = []

    def on_log(r: lemonmcp.LogRecord) -> None:
        recs.append(r)
        threads.append(threading.current_thread())

    c = make_client(on_log=on_log)
    c.call_tool("stderr", {"bytes": 300})
    assert wait_until(lambda: any(r.source == "stderr" for r in recs), CALL_S)
    assert all(t is not threading.main_thread() for t in threads)


def test_progress_callback(make_client: MakeClient) -> None:
    mine: List[lemonmcp.Progress] = []
    everyone: List[lemonmcp.Progress] = []
    c = make_client(on_progress=everyone.append)
    r = c.call_tool("slow", {"ms": 300, "steps": 3}, progress=mine.append)
    assert not r.is_error
    assert [p.progress for p in mine] == [1, 2, 3]
    assert all(p.total == 3 for p in mine)
    assert len({p.call_id for p in mine}) == 1 and mine[0].call_id > 0
    assert wait_until(lambda: len(everyone) >= 3, 5)
    # another call does not get the first call's events
    mine2: List[lemonmcp.Progress] = []
    c.call_tool("echo", {"text": "x"}, progress=mine2.append)
    assert mine2 == []


def test_event_callback_exceptions_do_not_break_the_client(make_client: MakeClient) -> None:
    def boom(_: Any) -> None:
        raise RuntimeError("callback bug")

    c = make_client(on_log=boom, on_progress=boom, on_notification=boom)
    c.call_tool("stderr", {"bytes": 100})
    c.call_tool("slow", {"ms": 50, "steps": 2}, progress=boom)
    assert c.call_tool("echo", {"text": "ok"}).text == "ok"


@pytest.mark.parametrize(
    "roots,expected",
    [
        (["file:///fixture-root"], [{"uri": "file:///fixture-root"}]),
        ([{"uri": "file:///a", "name": "A"}], [{"uri": "file:///a", "name": "A"}]),
        (lambda params: [{"uri": "file:///from-callable"}], [{"uri": "file:///from-callable"}]),
        (lambda params: {"roots": ["file:///dict"]}, [{"uri": "file:///dict"}]),
    ],
)
def test_roots(make_client: MakeClient, roots: Any, expected: Any) -> None:
    c = make_client(roots=roots)
    r = c.call_tool("roots")
    assert not r.is_error, r.text
    assert json.loads(r.text)["roots"] == expected


@pytest.mark.parametrize("mode, era", [("legacy", "legacy"), ("auto", "modern")])
def test_set_roots_notifies_the_server(make_client: MakeClient, mode: str, era: str) -> None:
    # a legacy server is told (roots/list_changed); a modern one asks anew
    c = make_client(roots=["file:///one"], protocol_mode=mode)
    assert c.server_info.era == era
    c.set_roots(["file:///two"])
    assert json.loads(c.call_tool("roots").text)["roots"] == [{"uri": "file:///two"}]


def test_sampling_handler_runs_off_the_main_thread(make_client: MakeClient) -> None:
    seen: List[Any] = []

    def sampling(params: Dict[str, Any]) -> Dict[str, Any]:
        seen.append((params, threading.current_thread()))
        text = params["messages"][0]["content"]["text"]
        return {"role": "assistant", "model": "test-model", "content": {"type": "text", "text": text.upper()}}

    c = make_client(sampling=sampling)
    r = c.call_tool("sample", {"prompt": "shout this", "max_tokens": 5})
    assert not r.is_error, r.text
    answer = json.loads(r.text)
    assert answer["model"] == "test-model" and answer["content"]["text"] == "SHOUT THIS"
    assert seen[0][0]["maxTokens"] == 5 and seen[0][1] is not threading.main_thread()


@pytest.mark.parametrize(
    "handler,needle",
    [
        (lambda p: (_ for _ in ()).throw(RuntimeError("secret detail")), "handler failed"),
        (lambda p: (_ for _ in ()).throw(lemonmcp.PolicyDenied("not today")), "not today"),
        (lambda p: (_ for _ in ()).throw(lemonmcp.ProtocolError("bad request", code=-32602)), "bad request"),
        (lambda p: "not a dict", "expected a dict"),
    ],
)
def test_host_handler_errors_become_error_replies(make_client: MakeClient, handler: Any, needle: str) -> None:
    # an error reply to the server's request over a session: the legacy era
    c = make_client(sampling=handler, protocol_mode="legacy")
    r = c.call_tool("sample", {"prompt": "x", "max_tokens": 1})
    assert r.is_error and needle in r.text
    assert "secret detail" not in r.text
    assert c.call_tool("echo", {"text": "alive"}).text == "alive"


def test_elicitation_answered_later_through_a_future(make_client: MakeClient) -> None:
    pool = concurrent.futures.ThreadPoolExecutor(1)

    def elicitation(params: Dict[str, Any]) -> "concurrent.futures.Future[Dict[str, Any]]":
        assert params["message"] == "who are you?"

        def later() -> Dict[str, Any]:
            time.sleep(0.2)
            return {"action": "accept", "content": {"name": "Grace", "age": 85}}

        return pool.submit(later)

    try:
        c = make_client(elicitation=elicitation)
        r = c.call_tool("elicit", {"message": "who are you?"})
        assert not r.is_error, r.text
        assert json.loads(r.text) == {"action": "accept", "content": {"name": "Grace", "age": 85}}
    finally:
        pool.shutdown()


def test_no_handler_means_no_capability(make_client: MakeClient) -> None:
    # the server sees the capabilities of initialize: the legacy era
    client = make_client(protocol_mode="legacy")
    r = client.call_tool("sample", {"prompt": "x", "max_tokens": 1})
    assert r.is_error  # the server learns the client cannot sample


# ------------------------------------------------------------------ concurrency, close, GC


def test_threads_share_one_client(client: Client) -> None:
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        texts = list(pool.map(lambda i: client.call_tool("echo", {"text": str(i)}).text, range(64)))
    assert texts == [str(i) for i in range(64)]


def test_cancel_by_call_id_from_another_thread(client: Client) -> None:
    ids: List[int] = []
    client_ready = threading.Event()

    def note(p: lemonmcp.Progress) -> None:
        ids.append(p.call_id)
        client_ready.set()

    def canceller() -> None:
        if client_ready.wait(CALL_S):
            client.cancel(ids[0])

    t = threading.Thread(target=canceller)
    t.start()
    # 10 minutes, progress every 100 ms: only the cancel can end the call
    # with Cancelled (the client's call_timeout would raise TimeoutError).
    with pytest.raises(lemonmcp.Cancelled):
        client.call_tool("slow", {"ms": 600000, "steps": 6000}, progress=note)
    t.join(CALL_S)
    assert client.cancel(ids[0]) is False  # already finished
    assert client.call_tool("echo", {"text": "next"}).text == "next"


def test_close_with_calls_in_flight(make_client: MakeClient) -> None:
    c = make_client()
    errors: List[BaseException] = []
    started = threading.Barrier(5)

    def slow() -> None:
        started.wait(CALL_S)
        try:
            # 10 minutes: only close can end it with ClosedError (the
            # client's call_timeout would raise TimeoutError)
            c.call_tool("slow", {"ms": 600000})
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=slow) for _ in range(4)]
    for t in threads:
        t.start()
    started.wait(CALL_S)
    time.sleep(0.3)
    c.close(timeout=10)
    for t in threads:
        t.join(CALL_S)
    assert not any(t.is_alive() for t in threads), "close did not end the calls in flight"
    assert len(errors) == 4 and all(isinstance(e, lemonmcp.ClosedError) for e in errors), errors
    assert c.closed_info is not None and c.closed_info.requested


def test_context_manager(fixture_path: str) -> None:
    with Client.stdio(fixture_path, call_timeout=CALL_S) as c:
        assert c.state == "ready"
        pid = int(c.call_tool("pid").text)
        assert pid_alive(pid)
    assert c.closed
    assert wait_until(lambda: not pid_alive(pid), 10)


def test_garbage_collected_client_frees_its_server(fixture_path: str) -> None:
    c = Client.stdio(fixture_path, call_timeout=CALL_S)
    c.open(timeout=READY_S)
    pid = int(c.call_tool("pid").text)
    assert pid_alive(pid)
    before = lemonmcp.diagnostics()["live_clients"]
    del c
    gc.collect()
    assert wait_until(lambda: not pid_alive(pid), 15), f"server {pid} still running"
    assert wait_until(lambda: lemonmcp.diagnostics()["live_clients"] == before - 1, 5)


def test_collecting_a_client_with_callbacks_in_a_cycle(fixture_path: str) -> None:
    def start() -> int:
        holder: Dict[str, Any] = {}
        c = Client.stdio(fixture_path, on_log=lambda r: holder.get("c"), call_timeout=CALL_S)
        holder["c"] = c  # callback -> holder -> client: a reference cycle
        c.open(timeout=READY_S)
        return int(c.call_tool("pid").text)

    pid = start()  # the cycle is unreachable once start() returns
    gc.collect()
    assert wait_until(lambda: not pid_alive(pid), 15)


def test_many_clients_create_and_free(fixture_path: str) -> None:
    base = lemonmcp.diagnostics()
    for _ in range(50):
        Client.stdio(fixture_path)  # never connected, dropped at once
    gc.collect()
    assert wait_until(lambda: lemonmcp.diagnostics()["live_clients"] <= base["live_clients"], 5)


def test_close_from_the_clients_own_callback(make_client: MakeClient) -> None:
    """close() inside one of the client's callbacks must not free the handle
    on that library thread (the C ABI forbids it); it is deferred."""
    holder: Dict[str, Client] = {}
    closed = threading.Event()

    def on_progress(p: lemonmcp.Progress) -> None:
        holder["c"].close(timeout=5)
        closed.set()

    c = make_client(on_progress=on_progress)
    holder["c"] = c
    with pytest.raises((lemonmcp.ClosedError, lemonmcp.Cancelled)):
        c.call_tool("slow", {"ms": 3000, "steps": 30})
    assert closed.wait(CALL_S)
    assert c.closed


def test_close_from_on_closed(make_client: MakeClient) -> None:
    holder: Dict[str, Client] = {}
    done = threading.Event()

    def on_closed(info: lemonmcp.Closed) -> None:
        holder["c"].close()
        done.set()

    c = make_client(on_closed=on_closed)
    holder["c"] = c
    with pytest.raises(lemonmcp.ClosedError):
        c.call_tool("crash")
    assert done.wait(CALL_S) and c.closed


EXIT_CHILD = r"""
import sys, threading, lemonmcp
c = lemonmcp.Client.stdio(sys.argv[1], on_log=lambda r: None, on_progress=lambda p: None)
c.open(timeout=15)
print(c.call_tool("pid").text, flush=True)
a = lemonmcp.Client.stdio(sys.argv[1]); a.open(timeout=15)
print(a.call_tool("pid").text, flush=True)
def bg(client, args):
    try:
        client.call_tool("slow", args)
    except lemonmcp.LemonMCPError:
        pass  # Cancelled once the exit frees the clients: expected
threading.Thread(target=bg, args=(c, {"ms": 30000, "steps": 300}), daemon=True).start()
threading.Thread(target=bg, args=(a, {"ms": 30000}), daemon=True).start()
import time; time.sleep(0.3)
print("exiting", flush=True)
"""


def test_interpreter_exit_with_open_clients_and_calls_in_flight(fixture_path: str) -> None:
    import subprocess
    import sys

    from conftest import PKG_ROOT, env_for_child

    r = subprocess.run(
        [sys.executable, "-c", EXIT_CHILD, fixture_path],
        capture_output=True, text=True, timeout=60, env=env_for_child(), cwd=PKG_ROOT,
    )
    assert r.returncode == 0, r.stderr
    assert "exiting" in r.stdout and "fatal" not in r.stderr.lower() and "Traceback" not in r.stderr
    pids = [int(x) for x in r.stdout.split()[:2]]
    assert wait_until(lambda: not any(pid_alive(p) for p in pids), 15), pids


FORK_CHILD = r"""
import os, sys, lemonmcp
c = lemonmcp.Client.stdio(sys.argv[1]); c.open(timeout=15)
pid = os.fork()
if pid == 0:
    try:
        c.call_tool("echo", {"text": "x"})
        print("child: call worked?!", flush=True)
    except lemonmcp.InternalError as e:
        print("child refused:", "fork" in str(e), flush=True)
    os._exit(0)
# A child that hangs (a library call in it would) is killed rather than
# left behind holding the server's pipes.
import signal, time
deadline = time.monotonic() + 20
while os.waitpid(pid, os.WNOHANG) == (0, 0):
    if time.monotonic() > deadline:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        print("child hung", flush=True)
        break
    time.sleep(0.01)
c.call_tool("echo", {"text": "x"})
print("parent fine", flush=True)
c.close()
"""


def test_forked_child_is_refused(fixture_path: str) -> None:
    import subprocess
    import sys

    from conftest import PKG_ROOT, env_for_child

    r = subprocess.run(
        [sys.executable, "-c", FORK_CHILD, fixture_path],
        capture_output=True, text=True, timeout=60, env=env_for_child(), cwd=PKG_ROOT,
    )
    assert r.returncode == 0, r.stderr
    assert "child refused: True" in r.stdout and "parent fine" in r.stdout


def _answer(params: Dict[str, Any]) -> Dict[str, Any]:
    return {"role": "assistant", "model": "m1", "content": {"type": "text", "text": "ok"}}


def _review(req: Dict[str, Any]) -> Any:
    assert set(req) == {"summary", "server"} and "hi" not in json.dumps(req)  # counts and hashes only
    return (False, "too many tokens") if req["summary"]["max_tokens"] > 5 else True


@pytest.mark.parametrize(
    "policy,max_tokens,denied_reason",
    [
        ({"mode": "deny"}, 2, "sampling_disabled"),
        ({"mode": "model", "max_tokens": 3}, 2, None),
        ({"mode": "model", "max_tokens": 3}, 10, "max_tokens_exceeded"),
        ({"mode": "reviewed_model"}, 2, None),
        ({"mode": "reviewed_model"}, 10, "review_rejected"),
    ],
)
def test_sampling_policy_and_review(make_client: MakeClient, policy: Dict[str, Any], max_tokens: int, denied_reason: Any) -> None:
    denials: List[Dict[str, Any]] = []
    got = threading.Event()

    def on_denied(d: Dict[str, Any]) -> None:
        denials.append(d)
        got.set()

    # a denial reaches the server as the answer to its request: the legacy era
    c = make_client(sampling=_answer, review=_review, sampling_policy=policy, on_sampling_denied=on_denied, protocol_mode="legacy")
    r = c.call_tool("sample", {"prompt": "hi", "max_tokens": max_tokens})
    if denied_reason is None:
        assert not r.is_error and json.loads(r.text)["model"] == "m1"
        assert not denials
    else:
        assert r.is_error and denied_reason in r.text
        assert got.wait(CALL_S) and denials[0]["denial"]["reason"] == denied_reason


def test_sampling_flat_keywords(make_client: MakeClient) -> None:
    # a refusal reaches the server as an error answer: the legacy era
    c = make_client(sampling=_answer, sampling_mode="model", sampling_max_tokens=3, protocol_mode="legacy")
    assert c.config["sampling_policy"] == {"mode": "model", "max_tokens": 3}
    assert c.call_tool("sample", {"prompt": "hi", "max_tokens": 10}).is_error
    assert not c.call_tool("sample", {"prompt": "hi", "max_tokens": 2}).is_error


def test_client_from_a_config_dict(fixture_path: str) -> None:
    config = {"transport": {"type": "stdio", "command": fixture_path, "args": ["-page-size", "3"]}, "client_info": {"name": "t"}}
    with Client(config, call_timeout=CALL_S, client_version="9.9") as c:
        assert c.config["client_info"] == {"name": "t", "version": "9.9"}
        assert len(c.list_prompts(all_pages=False)) == 2
        assert c.call_tool("echo", {"text": "dict"}).text == "dict"


@pytest.mark.parametrize("make,kind", [
    (lambda: Client.http("http://127.0.0.1:9/mcp"), "http"),
    (lambda: Client.http("http://127.0.0.1:9/mcp", fallback_sse=False), "streamable_http"),
    (lambda: Client.sse("http://127.0.0.1:9/sse", headers={"X-A": "1"}), "sse"),
])
def test_http_constructors(make: Any, kind: str) -> None:
    if kind in lemonmcp.features()["transports"]:
        c = make()
        assert c.config["transport"]["type"] == kind and c.state == "new"
        c.close()
    else:
        with pytest.raises(lemonmcp.UnsupportedError, match="not supported"):
            make()
