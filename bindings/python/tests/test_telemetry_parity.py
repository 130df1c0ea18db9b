"""The same operations, the same attributes, in every host (issue #21):
tests/fixtures/telemetry/parity.json lists operations on the Go fixture
and the MCP semantic-convention attributes each must be reported with.
Here, the C host's view (the telemetry handler's records, registered
through ctypes: the bytes a C host receives) and the Python spans (the
real OpenTelemetry SDK, in a process of its own); the Elixir events are
checked against the same table by telemetry_parity_test.exs."""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys
import threading
from typing import Any, Dict, List, Mapping

import pytest

import lemonmcp
from lemonmcp import _ffi

from conftest import wait_until

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
TABLE_PATH = os.path.join(REPO, "tests", "fixtures", "telemetry", "parity.json")
OTEL_PATH = os.environ.get("LEMONMCP_OTEL_PATH") or os.path.join(REPO, ".cache", "otel-py")

with open(TABLE_PATH) as _f:
    TABLE: Dict[str, Any] = json.load(_f)
KEYS: List[str] = TABLE["keys"]
PRESENT: List[str] = TABLE["present"]
EXPECTED: List[Dict[str, str]] = [op["attributes"] for op in TABLE["operations"]]
HOST_SERVER: str = TABLE["host"]["server"]
HOST_OPERATIONS: List[Dict[str, Any]] = TABLE["host"]["operations"]
HOST_EXPECTED: List[Dict[str, str]] = [op["attributes"] for op in HOST_OPERATIONS]

# A record's target, by method, as the conventions name it.
_TARGET_ATTRIBUTE = {
    "tools/call": "gen_ai.tool.name",
    "prompts/get": "gen_ai.prompt.name",
    "resources/read": "mcp.resource.uri",
}


def convention(attrs: Mapping[str, Any]) -> Dict[str, str]:
    """The table's keys among attrs."""
    return {k: attrs[k] for k in KEYS if k in attrs}


def present(attrs: Mapping[str, Any]) -> List[str]:
    """The table's "present" attributes that attrs carries (any value)."""
    return [k for k in PRESENT if attrs.get(k) not in (None, "")]


def record_names(rec: Mapping[str, Any]) -> Dict[str, Any]:
    """A C telemetry record in the conventions' names (docs/telemetry.md's
    record table)."""
    attrs = {"mcp.method.name": rec["method"]}
    if rec.get("target") and rec["method"] in _TARGET_ATTRIBUTE:
        attrs[_TARGET_ATTRIBUTE[rec["method"]]] = rec["target"]
    for field, attr in (
        ("error_type", "error.type"),
        ("server", "lemonmcp.server.name"),
        ("protocol_version", "mcp.protocol.version"),
        ("request_id", "jsonrpc.request.id"),
    ):
        if rec.get(field):
            attrs[attr] = rec[field]
    return attrs


def record_attributes(rec: Mapping[str, Any]) -> Dict[str, str]:
    return convention(record_names(rec))


class Collector:
    """The "call" records a handler receives (on a library thread)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.records: List[Dict[str, Any]] = []
        self.thunk = _ffi.TELEMETRY_CB(self.on_record)

    def on_record(self, _ud: Any, kind: bytes, ptr: int, length: int) -> None:
        if kind == b"call":
            with self.lock:
                self.records.append(json.loads(ctypes.string_at(ptr, length)))

    def taken(self) -> List[Dict[str, Any]]:
        with self.lock:
            return list(self.records)


def test_c_records_match_the_table(fixture_path: str) -> None:
    col = Collector()
    with lemonmcp.Client.stdio(fixture_path, call_timeout=30, ready_timeout=30) as c:
        _ffi.lib.lmcp_client_set_telemetry_handler(c._session.handle(), col.thunk, None, _ffi.DESTROY_CB(), None)
        for op in TABLE["operations"]:
            try:
                c.call(op["method"], op["params"])
            except lemonmcp.LemonMCPError:
                pass
        # A record is delivered on the delivery thread, in order with the
        # completions delivered there; a blocking call returns when its
        # outcome arrives, which may be before its record is delivered.
        wait_until(lambda: len(col.taken()) >= len(EXPECTED))
        records = col.taken()
    assert [record_attributes(r) for r in records] == EXPECTED
    assert [present(record_names(r)) for r in records] == [PRESENT] * len(EXPECTED)


def test_c_host_records_match_the_table(fixture_path: str) -> None:
    col = Collector()
    with lemonmcp.Host({"mcpServers": {HOST_SERVER: {"command": fixture_path}}}, ready_timeout=30) as h:
        _ffi.lib.lmcp_host_set_telemetry_handler(h._session.handle(), col.thunk, None, _ffi.DESTROY_CB(), None)
        for op in HOST_OPERATIONS:
            try:
                if "call_tool" in op:
                    h.call_tool(op["call_tool"], op["arguments"])
                else:
                    h.call(HOST_SERVER, op["method"], op["params"])
            except lemonmcp.LemonMCPError:
                pass
        wait_until(lambda: len(col.taken()) >= len(HOST_EXPECTED))  # as above
        records = col.taken()
    assert [record_attributes(r) for r in records] == HOST_EXPECTED
    assert [present(record_names(r)) for r in records] == [PRESENT] * len(HOST_EXPECTED)


def test_python_spans_match_the_table(fixture_path: str) -> None:
    if not os.path.isdir(os.path.join(OTEL_PATH, "opentelemetry")):
        if os.environ.get("LEMONMCP_OTEL_PATH"):
            pytest.fail(f"the OpenTelemetry SDK is missing under .cache ({OTEL_PATH}); run make otel-setup")
        pytest.skip("make otel-setup has not installed the OpenTelemetry SDK under .cache")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.dirname(HERE), OTEL_PATH]))
    proc = subprocess.run(
        [sys.executable, os.path.join(HERE, "otel_app.py"), "parity", fixture_path, TABLE_PATH],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    spans = json.loads(proc.stdout.strip().splitlines()[-1])["client_spans"]
    assert all(s["kind"] == "CLIENT" for s in spans)
    # The client's operations, then the host's (otel_app.py's order).
    assert [convention(s["attributes"]) for s in spans] == EXPECTED + HOST_EXPECTED
    assert [present(s["attributes"]) for s in spans] == [PRESENT] * len(spans)
