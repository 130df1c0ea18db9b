"""An application that traces with the real OpenTelemetry SDK and calls a
server through lemonmcp; test_otel.py runs it in a process of its own (the
SDK and the state of lemonmcp._otel are per process) and reads what it
prints: one JSON object.

    python otel_app.py spans|async|http|host|async_host|api|absent <server python> <server script>
    python otel_app.py parity <fixture server> <parity table>

"absent" blocks the opentelemetry package before lemonmcp is imported;
"http" runs the server over Streamable HTTP (a session id), "host" and
"async_host" call it through a Host and an AsyncHost."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
from typing import Any, Dict, List

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

MODE, SERVER_PY, SERVER = sys.argv[1], sys.argv[2], sys.argv[3]
if MODE == "absent":
    sys.modules["opentelemetry"] = None  # type: ignore[assignment]

import lemonmcp  # noqa: E402
import lemonmcp.aio  # noqa: E402
from lemonmcp import _otel  # noqa: E402


def payload(result: Dict[str, Any]) -> Any:
    """A Python-SDK tool's return value out of its tools/call result."""
    sc = result.get("structuredContent")
    if isinstance(sc, dict):
        return sc.get("result", sc)
    return json.loads(result["content"][0]["text"])


def span_doc(s: Any) -> Dict[str, Any]:
    return {
        "name": s.name,
        "trace_id": format(s.context.trace_id, "032x"),
        "span_id": format(s.context.span_id, "016x"),
        "parent_span_id": format(s.parent.span_id, "016x") if s.parent is not None else None,
        "kind": s.kind.name,
        "status": s.status.status_code.name,
        "attributes": dict(s.attributes or {}),
    }


def metric_points(reader: Any, name: str) -> List[Dict[str, Any]]:
    points: List[Dict[str, Any]] = []
    data = reader.get_metrics_data()
    for rm in data.resource_metrics if data else []:
        for sm in rm.scope_metrics:
            for m in sm.metrics:
                if m.name == name:
                    for p in m.data.data_points:
                        points.append({"unit": m.unit, "count": p.count, "sum": p.sum, "attributes": dict(p.attributes)})
    return points


def http_server() -> "tuple[subprocess.Popen[bytes], str]":
    """The server over Streamable HTTP on a free loopback port, listening."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    proc = subprocess.Popen([SERVER_PY, SERVER, "http", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return proc, f"http://127.0.0.1:{port}/mcp"
        except OSError:
            if proc.poll() is not None:
                break
            time.sleep(0.1)
    proc.kill()
    raise SystemExit("the HTTP server did not start")


def host_config() -> Dict[str, Any]:
    return {"mcpServers": {"py": {"command": SERVER_PY, "args": [SERVER]}}}


def main() -> None:
    out: Dict[str, Any] = {"enabled": _otel.ENABLED}
    if MODE == "absent":
        with lemonmcp.Client.stdio(SERVER_PY, [SERVER], call_timeout=30, ready_timeout=30) as c:
            out["whoami"] = payload(c.call("tools/call", {"name": "whoami", "arguments": {}}))
        print(json.dumps(out))
        return

    if MODE == "api":
        # The API without an SDK: no span, but a remote context that is
        # current still goes on.
        from opentelemetry import context, propagate

        with lemonmcp.Client.stdio(SERVER_PY, [SERVER], call_timeout=30, ready_timeout=30) as c:
            out["none"] = payload(c.call("tools/call", {"name": "whoami", "arguments": {}}))
            token = context.attach(propagate.extract({"traceparent": sys.argv[4]}))
            try:
                out["remote"] = payload(c.call("tools/call", {"name": "whoami", "arguments": {}}))
            finally:
                context.detach(token)
        print(json.dumps(out))
        return

    from opentelemetry import metrics, trace
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    reader = InMemoryMetricReader()
    metrics.set_meter_provider(MeterProvider(metric_readers=[reader]))
    tracer = trace.get_tracer("otel-app")

    if MODE == "parity":
        # tests/fixtures/telemetry/parity.json's operations, in order.
        with open(SERVER) as f:
            table = json.load(f)
        with lemonmcp.Client.stdio(SERVER_PY, call_timeout=30, ready_timeout=30) as c:
            for op in table["operations"]:
                try:
                    c.call(op["method"], op["params"])
                except lemonmcp.LemonMCPError:
                    pass  # the span says how it failed
        # Then the table's host operations, through a host of the fixture.
        server = table["host"]["server"]
        with lemonmcp.Host({"mcpServers": {server: {"command": SERVER_PY}}}, ready_timeout=30) as h:
            for op in table["host"]["operations"]:
                try:
                    if "call_tool" in op:
                        h.call_tool(op["call_tool"], op["arguments"])
                    else:
                        h.call(server, op["method"], op["params"])
                except lemonmcp.LemonMCPError:
                    pass
    elif MODE == "http":
        proc, url = http_server()
        try:
            with lemonmcp.Client.http(url, protocol={"mode": "legacy"}, call_timeout=30, ready_timeout=30) as c:
                with tracer.start_as_current_span("app"):
                    out["whoami"] = payload(c.call("tools/call", {"name": "whoami", "arguments": {}}))
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    elif MODE in ("host", "async_host"):

        async def run_async() -> Dict[str, Any]:
            async with lemonmcp.aio.AsyncHost(host_config(), ready_timeout=30) as h:
                with tracer.start_as_current_span("app"):
                    tool = await h.call_tool("py__whoami", {})
                    raw = await h.call("py", "tools/call", {"name": "whoami", "arguments": {}})
                server = await h.call("py", "tools/call", {"name": "spans", "arguments": {}})
                servers = await h.servers()
            return {"tool": tool.structured_content, "whoami": payload(raw), "server_spans": payload(server), "servers": servers}

        if MODE == "async_host":
            out.update(asyncio.run(run_async()))
        else:
            with lemonmcp.Host(host_config(), ready_timeout=30) as h:
                with tracer.start_as_current_span("app"):
                    out["tool"] = h.call_tool("py__whoami", {}).structured_content
                    out["whoami"] = payload(h.call("py", "tools/call", {"name": "whoami", "arguments": {}}))
                out["server_spans"] = payload(h.call("py", "tools/call", {"name": "spans", "arguments": {}}))
                out["servers"] = h.servers()
    elif MODE == "async":

        async def run() -> Dict[str, Any]:
            async with lemonmcp.AsyncClient.stdio(SERVER_PY, [SERVER], call_timeout=30, ready_timeout=30) as c:
                with tracer.start_as_current_span("app"):
                    who = payload(await c.call("tools/call", {"name": "whoami", "arguments": {}}))
                server = payload(await c.call("tools/call", {"name": "spans", "arguments": {}}))
            return {"whoami": who, "server_spans": server}

        out.update(asyncio.run(run()))
    else:
        with lemonmcp.Client.stdio(SERVER_PY, [SERVER], call_timeout=30, ready_timeout=30) as c:
            with tracer.start_as_current_span("app"):
                out["whoami"] = payload(c.call("tools/call", {"name": "whoami", "arguments": {}}))
                try:
                    bad = c.call("tools/call", {"name": "nosuch", "arguments": {}})
                    out["error"] = "isError" if bad.get("isError") else None
                except lemonmcp.LemonMCPError as e:
                    out["error"] = type(e).__name__
                out["explicit"] = payload(
                    c.call(
                        "tools/call",
                        {"name": "whoami", "arguments": {}},
                        trace={"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"},
                    )
                )
            out["server_spans"] = payload(c.call("tools/call", {"name": "spans", "arguments": {}}))
    # Every client and host is closed by now: their sessions ended.
    out["metric_points"] = metric_points(reader, "mcp.client.operation.duration")
    out["session_points"] = metric_points(reader, "mcp.client.session.duration")
    out["client_spans"] = [span_doc(s) for s in exporter.get_finished_spans()]
    print(json.dumps(out))


main()
