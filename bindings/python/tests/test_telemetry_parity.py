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

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
TABLE_PATH = os.path.join(REPO, "tests", "fixtures", "telemetry", "parity.json")
OTEL_PATH = os.environ.get("LEMONMCP_OTEL_PATH") or os.path.join(REPO, ".cache", "otel-py")

with open(TABLE_PATH) as _f:
    TABLE: Dict[str, Any] = json.load(_f)
KEYS: List[str] = TABLE["keys"]
EXPECTED: List[Dict[str, str]] = [op["attributes"] for op in TABLE["operations"]]

# A record's target, by method, as the conventions name it.
_TARGET_ATTRIBUTE = {
    "tools/call": "gen_ai.tool.name",
    "prompts/get": "gen_ai.prompt.name",
    "resources/read": "mcp.resource.uri",
}


def convention(attrs: Mapping[str, Any]) -> Dict[str, str]:
    """The table's keys among attrs."""
    return {k: attrs[k] for k in KEYS if k in attrs}


def record_attributes(rec: Mapping[str, Any]) -> Dict[str, str]:
    """A C telemetry record in the conventions' names (docs/telemetry.md's
    record table)."""
    attrs = {"mcp.method.name": rec["method"]}
    if rec.get("target") and rec["method"] in _TARGET_ATTRIBUTE:
        attrs[_TARGET_ATTRIBUTE[rec["method"]]] = rec["target"]
    if rec.get("error_type"):
        attrs["error.type"] = rec["error_type"]
    return convention(attrs)


def test_c_records_match_the_table(fixture_path: str) -> None:
    records: List[Dict[str, Any]] = []
    lock = threading.Lock()

    def on_record(_ud: Any, kind: bytes, ptr: int, length: int) -> None:
        if kind == b"call":
            with lock:
                records.append(json.loads(ctypes.string_at(ptr, length)))

    thunk = _ffi.TELEMETRY_CB(on_record)
    with lemonmcp.Client.stdio(fixture_path, call_timeout=30, ready_timeout=30) as c:
        _ffi.lib.lmcp_client_set_telemetry_handler(c._session.handle(), thunk, None, _ffi.DESTROY_CB(), None)
        for op in TABLE["operations"]:
            try:
                c.call(op["method"], op["params"])
            except lemonmcp.LemonMCPError:
                pass
        # Each call's record is delivered before its completion.
        with lock:
            got = [record_attributes(r) for r in records]
        assert all(r.get("protocol_version") for r in records)
    assert got == EXPECTED


def test_python_spans_match_the_table(fixture_path: str) -> None:
    if not os.path.isdir(os.path.join(OTEL_PATH, "opentelemetry")):
        if os.environ.get("LEMONMCP_OTEL_PATH"):
            pytest.fail(f"the OpenTelemetry SDK is missing under .cache ({OTEL_PATH}); run make otel-setup")
        pytest.skip("make otel-setup has not installed the OpenTelemetry SDK under .cache")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.dirname(HERE), OTEL_PATH]), PYTHONDONTWRITEBYTECODE="1")
    proc = subprocess.run(
        [sys.executable, os.path.join(HERE, "otel_app.py"), "parity", fixture_path, TABLE_PATH],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    spans = json.loads(proc.stdout.strip().splitlines()[-1])["client_spans"]
    assert all(s["kind"] == "CLIENT" and s["attributes"].get("mcp.protocol.version") for s in spans)
    assert [convention(s["attributes"]) for s in spans] == EXPECTED
