"""OpenTelemetry end to end: an application traced with the real SDK calls a
real Python-SDK server (mcp 2.3.0, which traces natively) through lemonmcp;
the server's span must be a child of the client's span, in one trace.

Each scenario runs otel_app.py in a process of its own. `make otel-setup`
installs what they need under .cache (the tests fail, not skip, under
`make test-python` when it is missing: LEMONMCP_OTEL_PATH is then set)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any, Dict, List

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
OTEL_PATH = os.environ.get("LEMONMCP_OTEL_PATH") or os.path.join(REPO, ".cache", "otel-py")
SERVER_PY = os.environ.get("LEMONMCP_MODERN_PY") or os.path.join(REPO, ".cache", "modern-py", "bin", "python")
SERVER = os.environ.get("LEMONMCP_PYOTEL_SERVER") or os.path.join(REPO, "tests", "fixtures", "pyotel", "server.py")
EXPLICIT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"


def run_app(mode: str, *extra: str) -> Dict[str, Any]:
    if not (os.path.isdir(os.path.join(OTEL_PATH, "opentelemetry")) and os.access(SERVER_PY, os.X_OK)):
        if os.environ.get("LEMONMCP_OTEL_PATH"):
            pytest.fail(f"the OpenTelemetry SDK or the Python-SDK server is missing under .cache ({OTEL_PATH}); run make otel-setup")
        pytest.skip("make otel-setup has not installed the OpenTelemetry SDK under .cache")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.dirname(HERE), OTEL_PATH]))
    proc = subprocess.run(
        [sys.executable, os.path.join(HERE, "otel_app.py"), mode, SERVER_PY, SERVER, *extra],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def one(spans: List[Dict[str, Any]], name: str) -> Dict[str, Any]:
    found = [s for s in spans if s["name"] == name]
    assert len(found) >= 1, f"no span {name!r} in {[s['name'] for s in spans]}"
    return found[0]


def test_spans_form_one_tree_with_the_server() -> None:
    out = run_app("spans")
    assert out["enabled"] is True
    app = one(out["client_spans"], "app")
    call = one(out["client_spans"], "tools/call whoami")
    assert call["kind"] == "CLIENT"
    assert call["trace_id"] == app["trace_id"] and call["parent_span_id"] == app["span_id"], "a child of the caller's span"
    attrs = call["attributes"]
    assert attrs["mcp.method.name"] == "tools/call"
    assert attrs["gen_ai.tool.name"] == "whoami"
    assert attrs["gen_ai.operation.name"] == "execute_tool"
    assert attrs["mcp.protocol.version"]
    assert "error.type" not in attrs
    assert int(attrs["jsonrpc.request.id"]) > 0, "from the call's telemetry record"
    assert "mcp.session.id" not in attrs, "stdio has no session id"
    # The library carried the span's context in params._meta ...
    assert out["whoami"]["traceparent"].startswith(f"00-{call['trace_id']}-{call['span_id']}-")
    # ... and the server's own span (exported by its SDK) is the client span's child.
    server = [s for s in out["server_spans"] if s["name"] == "tools/call whoami" and s["kind"] == "SERVER"]
    assert server, out["server_spans"]
    assert server[0]["trace_id"] == call["trace_id"]
    assert server[0]["parent_span_id"] == call["span_id"]


def test_failures_and_explicit_trace_and_metric() -> None:
    out = run_app("spans")
    failed = one(out["client_spans"], "tools/call nosuch")
    assert out["error"]
    assert failed["status"] == "ERROR"
    assert failed["attributes"]["error.type"], failed
    # A call that names its own trace context keeps it.
    assert out["explicit"]["traceparent"] == EXPLICIT
    points = out["metric_points"]
    assert points and all(p["unit"] == "s" for p in points)
    calls = [p for p in points if p["attributes"].get("mcp.method.name") == "tools/call"]
    assert sum(p["count"] for p in calls) >= 3
    assert any(p["attributes"].get("error.type") == failed["attributes"]["error.type"] for p in calls)


def session_point(out: Dict[str, Any]) -> Dict[str, Any]:
    """The one mcp.client.session.duration point: the session the app
    closed, in seconds."""
    points = out["session_points"]
    assert len(points) == 1, points
    p = points[0]
    assert p["unit"] == "s" and p["count"] == 1 and p["sum"] > 0, p
    assert p["attributes"]["mcp.protocol.version"], p
    assert "error.type" not in p["attributes"], "closed, not lost"
    return p


def test_session_duration_when_closed() -> None:
    session_point(run_app("spans"))


def test_http_span_names_the_session() -> None:
    out = run_app("http")
    app = one(out["client_spans"], "app")
    call = one(out["client_spans"], "tools/call whoami")
    assert call["parent_span_id"] == app["span_id"]
    attrs = call["attributes"]
    assert attrs["mcp.session.id"], "Streamable HTTP: the server's session"
    assert int(attrs["jsonrpc.request.id"]) > 0
    assert attrs["mcp.protocol.version"]
    assert out["whoami"]["traceparent"].startswith(f"00-{call['trace_id']}-{call['span_id']}-")
    session_point(out)


@pytest.mark.parametrize("mode", ["host", "async_host"])
def test_host_calls_are_spans(mode: str) -> None:
    out = run_app(mode)
    app = one(out["client_spans"], "app")
    calls = [s for s in out["client_spans"] if s["name"] == "tools/call whoami"]
    # call_tool("py__whoami") is named by the tool's own name, from the record.
    assert len(calls) == 2, [s["name"] for s in out["client_spans"]]
    sent = [out["tool"].get("result", out["tool"])["traceparent"], out["whoami"]["traceparent"]]
    server = {s["span_id"]: s for s in out["server_spans"] if s["kind"] == "SERVER"}
    for call, traceparent in zip(calls, sent):
        assert call["kind"] == "CLIENT"
        assert call["trace_id"] == app["trace_id"] and call["parent_span_id"] == app["span_id"]
        attrs = call["attributes"]
        assert attrs["lemonmcp.server.name"] == "py"
        assert attrs["mcp.method.name"] == "tools/call"
        assert attrs["gen_ai.tool.name"] == "whoami"
        assert attrs["gen_ai.operation.name"] == "execute_tool"
        assert attrs["mcp.protocol.version"]
        assert int(attrs["jsonrpc.request.id"]) > 0
        assert traceparent.startswith(f"00-{call['trace_id']}-{call['span_id']}-")
        assert any(s["parent_span_id"] == call["span_id"] for s in server.values()), "the server's span is its child"
    points = [p for p in out["metric_points"] if p["attributes"].get("lemonmcp.server.name") == "py"]
    assert sum(p["count"] for p in points) >= 2
    assert session_point(out)["attributes"]["lemonmcp.server.name"] == "py"
    # The handler the SDK brought also feeds the server's own histograms.
    durations = out["servers"]["py"]["durations"]["tools/call"]
    assert durations["count"] == 3 and len(durations["buckets"]) == 15, durations


def test_async_client_spans() -> None:
    out = run_app("async")
    app = one(out["client_spans"], "app")
    call = one(out["client_spans"], "tools/call whoami")
    assert call["parent_span_id"] == app["span_id"]
    assert out["whoami"]["traceparent"].startswith(f"00-{call['trace_id']}-{call['span_id']}-")
    server = [s for s in out["server_spans"] if s["name"] == "tools/call whoami"]
    assert server and server[0]["parent_span_id"] == call["span_id"]


def test_api_without_sdk_passes_a_current_remote_context_on() -> None:
    out = run_app("api", EXPLICIT)
    assert out["enabled"] is True
    assert out["none"]["traceparent"] is None, "no span, no current context: nothing is sent"
    assert out["remote"]["traceparent"] == EXPLICIT


def test_nothing_changes_without_opentelemetry() -> None:
    out = run_app("absent")
    assert out["enabled"] is False
    assert out["whoami"]["traceparent"] is None
