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

Without the package nothing here runs: ``ENABLED`` is False and the clients
call the library directly. A call that names its own ``trace`` option keeps
it. The package has no required dependency: ``pip install lemonmcp[otel]``
adds the API; an application brings its SDK and exporter.
"""

from __future__ import annotations

import importlib
import time
from types import TracebackType
from typing import Any, Dict, Mapping, Optional, Tuple, Type

from .errors import LemonMCPError, status_name

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

def _sdk_tracing() -> bool:
    """Whether the application installed a tracer provider (an SDK)."""
    return not isinstance(_trace.get_tracer_provider(), (_trace.ProxyTracerProvider, _trace.NoOpTracerProvider))


def _sdk_metering() -> bool:
    """Whether the application installed a meter provider (an SDK); the
    API's own are a proxy (``_ProxyMeterProvider``) and ``NoOpMeterProvider``."""
    provider = _metrics.get_meter_provider()
    return not isinstance(provider, _metrics.NoOpMeterProvider) and type(provider).__name__ != "_ProxyMeterProvider"


Request = Tuple[str, Optional[Mapping[str, Any]], Dict[str, Any], Any]


def target_of(method: str, params: Optional[Mapping[str, Any]]) -> Optional[str]:
    """What a call acts on: the tool or prompt name, or the resource URI."""
    if not isinstance(params, Mapping):
        return None
    key = _TARGET_KEYS.get(method)
    value = params.get(key) if key else None
    return value if isinstance(value, str) else None


def error_type(exc: BaseException) -> str:
    """``error.type`` of a failed call: the server's JSON-RPC error code, the
    library's status name ("timeout", "transport_error", ...) as the core's
    telemetry records name it, or the exception's qualified type."""
    if isinstance(exc, LemonMCPError):
        if exc.code is not None:
            return str(exc.code)
        return status_name(exc.status).lower().replace(" ", "_")
    return f"{type(exc).__module__}.{type(exc).__qualname__}"


class CallSpan:
    """The span of one call: ``with CallSpan(req, version) as req: ...`` makes
    the span current, returns the request with the span's trace context in
    its options, and ends the span (and records the duration) on exit. Call
    :meth:`result` with the call's result so a tool error is seen."""

    def __init__(self, req: Request, protocol_version: Optional[str]) -> None:
        method, params = req[0], req[1]
        self._req = req
        target = target_of(method, params)
        self._attrs: Dict[str, Any] = {"mcp.method.name": method}
        if protocol_version:
            self._attrs["mcp.protocol.version"] = protocol_version
        if method == "tools/call" and target:
            self._attrs["gen_ai.tool.name"] = target
            self._attrs["gen_ai.operation.name"] = "execute_tool"
        self._name = f"{method} {target}" if target else method
        self._cm: Any = None
        self._span: Any = None
        self._start = 0.0
        self._error: Optional[str] = None

    def __enter__(self) -> Request:
        # Until the application installs an SDK the API's spans record
        # nothing: the span is skipped (it cost ~18 µs a call), and only a
        # valid current context, if any, is passed on.
        if _sdk_tracing():
            self._cm = _tracer.start_as_current_span(
                self._name, kind=_trace.SpanKind.CLIENT, attributes=self._attrs, record_exception=True
            )
            self._span = self._cm.__enter__()
        self._start = time.perf_counter()
        method, params, opts, handler = self._req
        if "trace" in opts or (self._span is None and not _trace.get_current_span().get_span_context().is_valid):
            return self._req
        carrier: Dict[str, str] = {}
        _propagate.inject(carrier)
        trace = {k: carrier[k] for k in _TRACE_KEYS if k in carrier}
        if not trace:
            return self._req
        return method, params, dict(opts, trace=trace), handler

    def result(self, result: Any) -> None:
        if self._req[0] == "tools/call" and isinstance(result, Mapping) and result.get("isError") is True:
            self._error = "tool_error"

    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        elapsed = time.perf_counter() - self._start
        if exc is not None:
            self._error = error_type(exc)
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
