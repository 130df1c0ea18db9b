"""Building the configuration JSON given to ``lmcp_client_new``.

Pure Python, no library calls. The library is the one judge of a
configuration: it rejects unknown fields, wrong types and unknown enum values
with a message that names the field (``config.transport.comand: is not a
known field``), and that message is the one users see. This module does only
what Python must do itself: it turns keyword arguments, seconds and Python
values (paths, tuples, mappings) into the JSON object, and refuses a value
JSON cannot carry (bytes, a callable, NaN, ...) by naming its field and its
type. No error here shows a configuration value: any of them may be a secret
(a header, an environment variable, a client secret).
"""

from __future__ import annotations

import math
import os
from typing import Any, Dict, Iterable, Mapping, Optional, Union

from .errors import InvalidArgument

__all__ = [
    "stdio_transport",
    "http_transport",
    "build_config",
    "check_config",
    "call_options",
    "seconds_to_ms",
    "wait_ms",
    "auth_config",
    "CONFIG_KEYWORDS",
]

PathLike = Union[str, "os.PathLike[str]"]

#: Flat keyword arguments accepted besides the group dicts, and where they go.
CONFIG_KEYWORDS: Dict[str, str] = {
    "client_name": "client_info.name",
    "client_version": "client_info.version",
    "client_title": "client_info.title",
    "client_description": "client_info.description",
    "client_website_url": "client_info.website_url",
    "protocol_mode": "protocol.mode",
    "protocol_versions": "protocol.versions",
    "ready_ms": "timeouts.ready_ms",
    "call_ms": "timeouts.call_ms",
    "max_total_ms": "timeouts.max_total_ms",
    "reset_timeout_on_progress": "timeouts.reset_timeout_on_progress",
    "app_request_ms": "timeouts.app_request_ms",
    "close_grace_ms": "timeouts.close_grace_ms",
    "max_message_bytes": "limits.max_message_bytes",
    "max_pages": "limits.max_pages",
    "sampling_mode": "sampling_policy.mode",
    "sampling_max_tokens": "sampling_policy.max_tokens",
    "sampling_allowed_models": "sampling_policy.allowed_models",
    "sampling_max_messages": "sampling_policy.max_messages",
    "sampling_max_text_chars": "sampling_policy.max_text_chars",
    # seconds, for people who think in seconds
    "ready_timeout": "timeouts.ready_ms",
    "call_timeout": "timeouts.call_ms",
    "close_grace": "timeouts.close_grace_ms",
    "app_request_timeout": "timeouts.app_request_ms",
}
_SECONDS_KEYWORDS = ("ready_timeout", "call_timeout", "close_grace", "app_request_timeout")
_GROUPS = (
    "client_info",
    "protocol",
    "timeouts",
    "limits",
    "handlers",
    "sampling_policy",
    "capabilities",
    "result_format",
    "auth",
)


def _bad_type(field: str, expected: str, value: Any) -> InvalidArgument:
    """An error naming the field and the type of its value, never the value."""
    return InvalidArgument(f"{field}: expected {expected}, got a value of type {type(value).__name__}")


def _json(field: str, value: Any) -> Any:
    """``value`` as JSON data: mappings become dicts, lists and tuples lists,
    paths strings. Anything JSON cannot carry is an error naming the field
    (a dotted path) and the value's type."""
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            raise InvalidArgument(f"{field}: expected a finite number")
        return value
    if isinstance(value, Mapping):
        out: Dict[str, Any] = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise InvalidArgument(f"{field}: expected string keys, got a key of type {type(k).__name__}")
            out[k] = _json(f"{field}.{k}", v)
        return out
    if isinstance(value, (list, tuple)):
        return [_json(f"{field}[{i}]", v) for i, v in enumerate(value)]
    if isinstance(value, os.PathLike):
        path = os.fspath(value)
        if isinstance(path, str):
            return path
    raise _bad_type(field, "a JSON value (string, number, boolean, list or dict)", value)


def _object(field: str, value: Any) -> Dict[str, Any]:
    if not isinstance(value, Mapping):
        raise _bad_type(field, "a dict", value)
    return dict(value)


def _list(field: str, value: Any) -> Any:
    """An iterable of strings given as one argument: a single string is a
    mistake Python would silently turn into a list of characters."""
    if isinstance(value, (str, bytes)):
        raise _bad_type(field, "a list of strings (not one string)", value)
    try:
        return list(value)
    except TypeError:
        raise _bad_type(field, "a list of strings", value) from None


def wait_ms(seconds: Optional[float]) -> int:
    """A blocking wait's limit as the library takes it: -1 (none) for None,
    else :func:`seconds_to_ms`."""
    return -1 if seconds is None else seconds_to_ms("timeout", seconds)


def seconds_to_ms(field: str, seconds: Any) -> int:
    """Seconds (int or float, >= 0) to whole milliseconds, rounding up so that
    a small positive timeout never becomes 0 ("no limit")."""
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
        raise _bad_type(field, "a number of seconds", seconds)
    if math.isnan(seconds) or seconds < 0 or math.isinf(seconds):
        raise InvalidArgument(f"{field}: expected a finite, non-negative number of seconds")
    return int(math.ceil(seconds * 1000.0))


# ------------------------------------------------------------ transports


def stdio_transport(
    command: PathLike,
    args: Iterable[Any] = (),
    *,
    env: Optional[Mapping[str, str]] = None,
    env_inherit: Optional[str] = None,
    cwd: Optional[PathLike] = None,
    stderr: Optional[str] = None,
    sandbox: Optional[Mapping[str, Any]] = None,
) -> Dict[str, Any]:
    """The ``transport`` object for a stdio server (spawned without a shell).
    Paths may be ``os.PathLike``; the library checks the rest. ``sandbox``
    confines the server (VS Code's object: filesystem, network, plus limits
    and required; docs/sandbox.md)."""
    t: Dict[str, Any] = {"type": "stdio", "command": _json("transport.command", command)}
    arg_list = _json("transport.args", _list("transport.args", args))
    if arg_list:
        t["args"] = arg_list
    for key, value in (("env", env), ("env_inherit", env_inherit), ("cwd", cwd), ("stderr", stderr), ("sandbox", sandbox)):
        if value is not None:
            t[key] = _json(f"transport.{key}", value)
    return t


def http_transport(
    url: str, headers: Optional[Mapping[str, str]] = None, *, type: str = "http"
) -> Dict[str, Any]:
    """The ``transport`` object for an HTTP server: ``type`` is
    "streamable_http", "sse" (legacy HTTP+SSE) or "http" (Streamable HTTP,
    falling back to legacy SSE)."""
    t: Dict[str, Any] = {"type": _json("transport.type", type), "url": _json("transport.url", url)}
    if headers is not None:
        t["headers"] = _json("transport.headers", headers)
    return t


# ------------------------------------------------------------ OAuth


def auth_config(
    *,
    client_id: Optional[str] = None,
    client_secret: Optional[str] = None,
    client_issuer: Optional[str] = None,
    token_auth_method: Optional[str] = None,
    client_metadata_url: Optional[str] = None,
    client_name: Optional[str] = None,
    scopes: Optional[Iterable[str]] = None,
    redirect_uri: Optional[str] = None,
    flow: Optional[str] = None,
    refresh_token: Optional[str] = None,
    private_key_pem: Optional[str] = None,
    private_key_id: Optional[str] = None,
    private_key_alg: Optional[str] = None,
    token_store: Union[str, Mapping[str, Any], None] = None,
    authorization_timeout: Optional[float] = None,
    max_step_ups: Optional[int] = None,
    allow_insecure_http: Optional[bool] = None,
    assertion: Optional[str] = None,
    token_exchange: Optional[Mapping[str, Any]] = None,
    dpop: Union[bool, Mapping[str, Any], None] = None,
) -> Dict[str, Any]:
    """The ``auth`` object (OAuth 2.1 for the HTTP transports) from keyword
    arguments; None leaves a field out. ``authorization_timeout`` is in
    seconds; ``private_key_*`` become ``private_key_jwt``. ``assertion``
    (a JWT for the jwt-bearer grant), ``token_exchange`` (SEP-990: the
    enterprise IdP exchange), ``dpop`` (True or {"alg"?, "key_pem"?}) and
    ``token_store`` (the store's one form, such as {"type": "file",
    "path": P}: docs/configuration.md, "The store") are passed as they
    are. The library checks the object when the client
    is created (docs/configuration.md, "auth"); no error shows a value."""
    a: Dict[str, Any] = {}
    for key, value in (
        ("client_id", client_id),
        ("client_secret", client_secret),
        ("client_issuer", client_issuer),
        ("token_auth_method", token_auth_method),
        ("client_metadata_url", client_metadata_url),
        ("client_name", client_name),
        ("redirect_uri", redirect_uri),
        ("flow", flow),
        ("refresh_token", refresh_token),
        ("token_store", token_store),
        ("max_step_ups", max_step_ups),
        ("allow_insecure_http", allow_insecure_http),
        ("assertion", assertion),
        ("token_exchange", token_exchange),
        ("dpop", dpop),
    ):
        if value is not None:
            a[key] = value
    if scopes is not None:
        a["scopes"] = _list("auth.scopes", scopes)
    if private_key_pem is not None:
        pk: Dict[str, Any] = {"key_pem": private_key_pem}
        if private_key_id is not None:
            pk["kid"] = private_key_id
        if private_key_alg is not None:
            pk["alg"] = private_key_alg
        a["private_key_jwt"] = pk
    elif private_key_id is not None or private_key_alg is not None:
        raise InvalidArgument("auth.private_key_jwt.key_pem: required with private_key_id / private_key_alg")
    if authorization_timeout is not None:
        a["authorization_timeout_ms"] = max(1, seconds_to_ms("authorization_timeout", authorization_timeout))
    out: Dict[str, Any] = _json("auth", a)
    return out


# ------------------------------------------------------------ whole config


def check_config(config: Mapping[str, Any]) -> Dict[str, Any]:
    """The configuration as JSON data (a copy), with the one rule the Python
    binding adds: results must be JSON. Unknown fields are kept, and every
    other check is the library's, when the client is created."""
    out: Dict[str, Any] = _json("config", _object("config", config))
    if out.get("result_format", "json") != "json":
        raise InvalidArgument(
            "config.result_format: the Python binding reads JSON results; leave it out or set it to \"json\""
        )
    return out


def build_config(
    transport: Optional[Mapping[str, Any]] = None,
    *,
    base: Optional[Mapping[str, Any]] = None,
    handler_kinds: Iterable[str] = (),
    roots_list_changed: bool = True,
    **options: Any,
) -> Dict[str, Any]:
    """Assemble a configuration from a base object, a transport object and
    keyword options, as JSON data (see :func:`check_config`).

    ``base`` is a whole configuration (every field kept, unknown ones too, for
    the library to judge). ``options`` holds the group objects
    (``client_info``, ``protocol``, ``timeouts``, ``limits``, ``handlers``,
    ``sampling_policy``, ``capabilities``, ``result_format``, ``auth``), whose
    fields are merged over the base's, and/or the flat keywords of
    :data:`CONFIG_KEYWORDS`, which win over both.
    ``handler_kinds`` lists the app requests the caller answers ("roots",
    "sampling", "elicitation", "authorization"); each is added to
    ``handlers`` unless that object already mentions it.
    The ``auth`` group is the OAuth object (see :func:`auth_config`).
    """
    config: Dict[str, Any] = {}
    if base is not None:
        for key, value in _object("config", base).items():
            config[key] = dict(value) if isinstance(value, Mapping) else value
    if transport is not None:
        config["transport"] = _object("transport", transport)
    for group in _GROUPS:
        if group not in options:
            continue
        value = options.pop(group)
        if value is None:
            continue
        if group == "result_format":
            config[group] = value
            continue
        merged = dict(config[group]) if isinstance(config.get(group), Mapping) else {}
        merged.update(_object(group, value))
        config[group] = merged
    for key in list(options):
        if key not in CONFIG_KEYWORDS:
            raise TypeError(f"unexpected keyword argument {key!r}")
        value = options.pop(key)
        if value is None:
            continue
        group, field = CONFIG_KEYWORDS[key].split(".", 1)
        if key in _SECONDS_KEYWORDS:
            value = seconds_to_ms(key, value)
        current = config.setdefault(group, {})
        if not isinstance(current, dict):
            raise _bad_type(group, "a dict", current)
        current[field] = value
    declare_handlers(config, handler_kinds, roots_list_changed)
    return check_config(config)


def declare_handlers(config: Dict[str, Any], kinds: Iterable[str], roots_list_changed: bool = True) -> None:
    """Add each app request the caller answers ("roots", "sampling",
    "elicitation", "authorization") to ``config["handlers"]`` unless that
    object already mentions it: in a client's configuration, or in a host's
    ``defaults`` (which every server of the host gets)."""
    kinds = list(kinds)
    if not kinds:
        return
    handlers = config.setdefault("handlers", {})
    if not isinstance(handlers, dict):
        raise _bad_type("handlers", "a dict", handlers)
    for kind in kinds:
        if kind in handlers:
            continue
        if kind == "roots":
            handlers["roots"] = {"list_changed": roots_list_changed}
        elif kind == "sampling":
            handlers["sampling"] = {}
        elif kind == "elicitation":
            handlers["elicitation"] = {"form": True}
        elif kind == "authorization":
            handlers["authorization"] = {}
        else:  # pragma: no cover - internal
            raise ValueError(kind)


# ----------------------------------------------------------- call options


def call_options(
    *,
    timeout: Optional[float] = None,
    timeout_ms: Optional[int] = None,
    reset_timeout_on_progress: Optional[bool] = None,
    max_total_ms: Optional[int] = None,
    max_total: Optional[float] = None,
    all_pages: Optional[bool] = None,
    progress: Optional[bool] = None,
    wait_ready: Optional[bool] = None,
    meta: Optional[Mapping[str, Any]] = None,
    verify: Optional[Mapping[str, Any]] = None,
    no_cache: Optional[bool] = None,
    task: Optional[bool] = None,
    trace: Optional[Mapping[str, str]] = None,
    fail_if_restarting: Optional[bool] = None,
) -> Dict[str, Any]:
    """The ``options_json`` object of ``lmcp_client_call``
    (docs/call-options.md); the library checks it when the call is made.

    ``timeout``/``max_total`` are seconds (float), ``timeout_ms``/
    ``max_total_ms`` milliseconds; 0 means no limit. ``meta`` becomes
    ``_meta``. ``verify`` (``resources/read`` only) is what the host holds
    about the resource, ``{"digest": "sha256:<hex>", "size": <bytes>,
    "frontmatter": {...}}`` (any of them; a skill file's entry from
    ``skills/list``): the library checks the content and raises
    ``ProtocolError`` instead of returning content that does not match.
    ``no_cache`` sends the request even when the 2026-07-28 result cache
    holds a fresh result for it (see docs/modern.md). ``task`` runs a
    ``tools/call`` whose tool takes tasks optionally (2025-11-25
    ``execution.taskSupport: "optional"``) as a task; a tool that requires
    one always gets one (see docs/tasks.md).
    ``trace`` is the call's W3C trace context, ``{"traceparent",
    "tracestate", "baggage"}`` (any of them), carried in ``params._meta`` of
    every request of the call; the library drops a malformed part with a
    warning log event. With ``opentelemetry-api`` importable the current
    span's context is put here by itself (see ``lemonmcp._otel``).
    ``fail_if_restarting`` fails the call at once while a supervised server
    restarts instead of waiting for it.
    """
    opts: Dict[str, Any] = {}
    if timeout is not None and timeout_ms is not None:
        raise InvalidArgument("timeout: give timeout (seconds) or timeout_ms, not both")
    if max_total is not None and max_total_ms is not None:
        raise InvalidArgument("max_total: give max_total (seconds) or max_total_ms, not both")
    if timeout is not None:
        opts["timeout_ms"] = seconds_to_ms("timeout", timeout)
    if max_total is not None:
        opts["max_total_ms"] = seconds_to_ms("max_total", max_total)
    for key, value in (
        ("timeout_ms", timeout_ms),
        ("max_total_ms", max_total_ms),
        ("reset_timeout_on_progress", reset_timeout_on_progress),
        ("all_pages", all_pages),
        ("progress", progress),
        ("wait_ready", wait_ready),
        ("_meta", meta),
        ("verify", verify),
        ("no_cache", no_cache),
        ("task", task),
        ("trace", trace),
        ("fail_if_restarting", fail_if_restarting),
    ):
        if value is not None:
            opts[key] = _json("options." + key, value)
    return opts
