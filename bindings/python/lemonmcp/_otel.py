"""OpenTelemetry for client calls, when ``opentelemetry-api`` is importable.

Each call becomes a CLIENT span named and attributed by the MCP semantic
conventions (``"{mcp.method.name} {target}"``; ``mcp.method.name``,
``mcp.protocol.version``, ``gen_ai.tool.name``, ``gen_ai.operation.name``,
``error.type``), a child of the caller's current span. The span's context
is injected (the global propagator: W3C ``traceparent``/``tracestate`` and
``baggage``) into the call's ``trace`` option, so the library carries it in
``params._meta`` of every request of the call and the server's span joins
the same trace. Each call's duration is recorded in the histogram
``mcp.client.operation.duration`` (seconds).

What only the library knows comes from its telemetry records (the
``lmcp_*_set_telemetry_handler`` of the client or host, registered once an
SDK is installed): a call's record reaches :class:`Records` before its
completion does, so the span gets ``mcp.session.id``,
``jsonrpc.request.id`` (and, for a host, the server and the tool's own
name) without asking the library again; a ``"session"`` record, when a
session ends, goes to the histogram ``mcp.client.session.duration``.

Without the package nothing here runs: ``ENABLED`` is False and the clients
call the library directly. A call that names its own ``trace`` option keeps
it. The package has no required dependency: ``pip install lemonmcp[otel]``
adds the API; an application brings its SDK and exporter.
"""

from __future__ import annotations

import importlib
import json
import threading
import time
import weakref
from ctypes import c_void_p
from types import TracebackType
from typing import Any, Awaitable, Callable, Dict, Mapping, Optional, Tuple, Type

from . import _ffi
from ._callbacks import DESTROY_THUNK, EVENT_THUNK, registry, report
from .errors import LemonMCPError

# Loaded by name, so the package type-checks and imports without it.
_trace: Any
_metrics: Any
_propagate: Any
try:
    _trace = importlib.import_module("opentelemetry.trace")
    _metrics = importlib.import_module("opentelemetry.metrics")
    _propagate = importlib.import_module("opentelemetry.propagate")
except ImportError:  # the package is optional
    _trace = None

#: Whether client calls are traced (``opentelemetry-api`` was importable).
ENABLED = _trace is not None

#: The bucket bounds (seconds) the MCP semantic conventions advise for
#: ``mcp.client.operation.duration``; lmcp_diagnostics uses the same.
DURATION_BUCKETS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300)

#: The attribute naming a host's server (no convention names one).
SERVER_ATTRIBUTE = "lemonmcp.server.name"

_TRACE_KEYS = ("traceparent", "tracestate", "baggage")
_TARGET_KEYS = {
    "tools/call": "name",
    "prompts/get": "name",
    "resources/read": "uri",
    "resources/subscribe": "uri",
    "resources/unsubscribe": "uri",
}

if ENABLED:
    # (Named without a version: this module loads while the package's
    # __init__ is still running.)
    _tracer = _trace.get_tracer("lemonmcp")
    _meter = _metrics.get_meter("lemonmcp")
    try:
        _duration = _meter.create_histogram(
            "mcp.client.operation.duration",
            unit="s",
            description="Duration of an MCP request as the client saw it",
            explicit_bucket_boundaries_advisory=list(DURATION_BUCKETS),
        )
    except TypeError:  # an API older than the advisory parameter
        _duration = _meter.create_histogram(
            "mcp.client.operation.duration", unit="s", description="Duration of an MCP request as the client saw it"
        )
    _session_duration = _meter.create_histogram(
        "mcp.client.session.duration", unit="s", description="Duration of an MCP session as the client saw it"
    )

def _sdk_tracing() -> bool:
    """Whether the application installed a tracer provider (an SDK)."""
    return not isinstance(_trace.get_tracer_provider(), (_trace.ProxyTracerProvider, _trace.NoOpTracerProvider))


def _sdk_metering() -> bool:
    """Whether the application installed a meter provider (an SDK); the
    API's own are a proxy (``_ProxyMeterProvider``) and ``NoOpMeterProvider``."""
    provider = _metrics.get_meter_provider()
    return not isinstance(provider, _metrics.NoOpMeterProvider) and type(provider).__name__ != "_ProxyMeterProvider"


#: A call as the session takes it: (method, params, options, ...).
Request = Tuple[Any, ...]

#: How many call records wait for their span at most: a span that ended
#: before its call did (Ctrl-C, a cancelled task) never takes its record.
_MAX_WAITING = 1024


class Records:
    """One client's or host's telemetry records, as its handler receives
    them on a library thread: a call's record waits (by the trace context it
    carried, which a span's own context makes unique) until its span ends;
    a session's goes to ``mcp.client.session.duration``."""

    def __init__(self) -> None:
        # Filled on a library thread, taken on the caller's.
        self._lock = threading.Lock()
        self._calls: Dict[str, Dict[str, Any]] = {}
        #: The last session id a record named (for a span whose record
        #: cannot be told apart: the caller named the trace context).
        self.session_id: Optional[str] = None

    def on_event(self, kind: str, data: bytes) -> None:
        """The telemetry handler (through the event thunk: same shape)."""
        if kind == "call":
            rec = json.loads(data)
            if rec.get("session_id"):
                self.session_id = rec["session_id"]
            tp = rec.get("traceparent")
            if tp:
                with self._lock:
                    if len(self._calls) >= _MAX_WAITING:
                        self._calls.pop(next(iter(self._calls)))
                    self._calls[tp] = rec
        elif kind == "session" and _sdk_metering():
            rec = json.loads(data)
            attrs: Dict[str, Any] = {}
            for key, attr in (
                ("protocol_version", "mcp.protocol.version"),
                ("error_type", "error.type"),
                ("server", SERVER_ATTRIBUTE),
            ):
                if rec.get(key):
                    attrs[attr] = rec[key]
            _session_duration.record(rec.get("duration_ns", 0) / 1e9, attributes=attrs)

    def on_app_request(self, request_id: int, kind: str, data: bytes) -> None:
        """Part of the registry's target shape; no app request comes here
        (only the telemetry handler is registered with this target)."""

    def take(self, traceparent: str) -> Optional[Dict[str, Any]]:
        with self._lock:
            return self._calls.pop(traceparent, None)


# Each session's records, once its handler is registered.
_records: "weakref.WeakKeyDictionary[Any, Records]" = weakref.WeakKeyDictionary()


def records_of(session: Any) -> Optional[Records]:
    """The session's :class:`Records`, registering its telemetry handler
    the first time an SDK is installed (tracing or metering); None before
    that, or when the handle is gone."""
    recs = _records.get(session)
    if recs is not None or not (_sdk_tracing() or _sdk_metering()):
        return recs
    with _register_lock:
        recs = _records.get(session)
        if recs is None:
            recs = _register(session)
    return recs


_register_lock = threading.Lock()


def _register(session: Any) -> Optional[Records]:
    recs = Records()
    token = registry.add_target(recs)
    setter = (
        _ffi.lib.lmcp_host_set_telemetry_handler if session.kind.noun == "host" else _ffi.lib.lmcp_client_set_telemetry_handler
    )
    try:
        # destroy runs even when the registration fails, dropping the token.
        setter(session.handle(), EVENT_THUNK, token, DESTROY_THUNK, c_void_p())
    except LemonMCPError:
        return None  # closed meanwhile: the call itself says so
    except BaseException:
        report("registering the telemetry handler")
        return None
    _records[session] = recs
    return recs


def target_of(method: str, params: Optional[Mapping[str, Any]]) -> Optional[str]:
    """What a call acts on: the tool or prompt name, or the resource URI."""
    if not isinstance(params, Mapping):
        return None
    key = _TARGET_KEYS.get(method)
    value = params.get(key) if key else None
    return value if isinstance(value, str) else None


def error_type(exc: BaseException) -> str:
    """``error.type`` of a failed call: the library's, from its error object
    (the server's JSON-RPC error code, or the status's name as telemetry
    records name it), else the exception's qualified type."""
    t = exc.raw.get("type") if isinstance(exc, LemonMCPError) else None
    return t if isinstance(t, str) and t else f"{type(exc).__module__}.{type(exc).__qualname__}"


class CallSpan:
    """The span of one call: ``with CallSpan(req, version, session) as req:
    ...`` makes the span current, returns the request with the span's trace
    context in its options (``req[2]``; a request is ``(method, params,
    options, ...)`` as the session's call takes it), and ends the span (and
    records the duration) on exit, with what the call's telemetry record
    adds. Call :meth:`result` with the call's result so a tool error is
    seen. ``server`` names a host's server; ``described`` is ``(method,
    params)`` when the request's own differ (a host's tool call is
    ``(exposed name, arguments, options)``)."""

    def __init__(
        self,
        req: Request,
        protocol_version: Optional[str],
        session: Any = None,
        server: Optional[str] = None,
        described: Optional[Tuple[str, Optional[Mapping[str, Any]]]] = None,
    ) -> None:
        method, params = described if described is not None else (req[0], req[1])
        self._req = req
        self._method = method
        self._session = session
        self._target = target_of(method, params)
        self._attrs: Dict[str, Any] = {"mcp.method.name": method}
        if protocol_version:
            self._attrs["mcp.protocol.version"] = protocol_version
        if server:
            self._attrs[SERVER_ATTRIBUTE] = server
        self._name_target(self._target)
        self._cm: Any = None
        self._span: Any = None
        self._records: Optional[Records] = None
        self._sent: Optional[str] = None
        self._start = 0.0
        self._error: Optional[str] = None

    def _name_target(self, target: Optional[str]) -> None:
        """The span's name and what the conventions attribute to the target
        (a resource URI is an attribute, never part of the name)."""
        method = self._method
        self._name = method
        if not target:
            return
        if method == "tools/call":
            self._attrs["gen_ai.tool.name"] = target
            self._attrs["gen_ai.operation.name"] = "execute_tool"
            self._name = f"{method} {target}"
        elif method == "prompts/get":
            self._attrs["gen_ai.prompt.name"] = target
            self._name = f"{method} {target}"
        else:
            self._attrs["mcp.resource.uri"] = target

    def __enter__(self) -> Request:
        # Until the application installs an SDK the API's spans record
        # nothing: the span is skipped (it cost ~18 µs a call), and only a
        # valid current context, if any, is passed on.
        if _sdk_tracing():
            self._cm = _tracer.start_as_current_span(
                self._name, kind=_trace.SpanKind.CLIENT, attributes=self._attrs, record_exception=True
            )
            self._span = self._cm.__enter__()
        if self._session is not None:
            self._records = records_of(self._session)
        self._start = time.perf_counter()
        opts = self._req[2]
        if "trace" in opts or (self._span is None and not _trace.get_current_span().get_span_context().is_valid):
            return self._req
        carrier: Dict[str, str] = {}
        _propagate.inject(carrier)
        trace = {k: carrier[k] for k in _TRACE_KEYS if k in carrier}
        if not trace:
            return self._req
        if self._span is not None:
            self._sent = trace.get("traceparent")
        return self._req[:2] + (dict(opts, trace=trace),) + self._req[3:]

    @property
    def awaits_record(self) -> bool:
        """Whether the span reads its call's telemetry record when it ends:
        the call's outcome must then come after the record (through the
        delivery queue, which delivers the record first), not from a wait in
        C, which can return before the record is delivered."""
        return self._span is not None and self._records is not None and self._sent is not None

    def result(self, result: Any) -> None:
        if self._method == "tools/call" and isinstance(result, Mapping) and result.get("isError") is True:
            self._error = "tool_error"

    def _from_record(self) -> None:
        """What the call's telemetry record adds: the session, the request
        id, the negotiated version, a host's server and tool."""
        recs = self._records
        if recs is None:
            return
        rec = recs.take(self._sent) if self._sent else None
        session_id = rec.get("session_id") if rec is not None else recs.session_id
        if session_id:
            self._span.set_attribute("mcp.session.id", session_id)
        if rec is None:
            return
        if rec.get("request_id"):
            self._span.set_attribute("jsonrpc.request.id", str(rec["request_id"]))
        if rec.get("protocol_version"):
            self._attrs["mcp.protocol.version"] = rec["protocol_version"]
        if rec.get("server"):
            self._attrs[SERVER_ATTRIBUTE] = rec["server"]
        target = rec.get("target")
        if target and target != self._target:
            self._name_target(target)  # a host's tool: its own name, not the exposed one
            self._span.update_name(self._name)
        self._span.set_attributes(self._attrs)

    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        elapsed = time.perf_counter() - self._start
        if exc is not None:
            self._error = error_type(exc)
        if self._span is not None:
            self._from_record()
        attrs = dict(self._attrs)
        if self._error is not None:
            attrs["error.type"] = self._error
        if _sdk_metering():
            _duration.record(elapsed, attributes=attrs)
        if self._span is None:
            return
        if self._error is not None:
            self._span.set_attribute("error.type", self._error)
            self._span.set_status(_trace.Status(_trace.StatusCode.ERROR, str(exc) if exc is not None else self._error))
        self._cm.__exit__(exc_type, exc, tb)


def traced(req: Request, span: Optional[CallSpan], run: Callable[..., Any]) -> Any:
    """Makes the call ``run(*req)`` inside ``span`` (None: untraced): the
    span-then-call wrapper of every blocking client and host."""
    if span is None:
        return run(*req)
    with span as sent:
        result = run(*sent, after_record=True) if span.awaits_record else run(*sent)
        span.result(result)
    return result


async def traced_async(req: Request, span: Optional[CallSpan], run: Callable[..., Awaitable[Any]]) -> Any:
    """:func:`traced` for an asyncio client or host (``run`` a coroutine
    function)."""
    if span is None:
        return await run(*req)
    with span as sent:
        result = await run(*sent)
        span.result(result)
    return result
