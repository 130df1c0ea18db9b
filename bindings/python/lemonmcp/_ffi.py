"""The C ABI of liblemonmcp, declared once.

Everything that touches ctypes directly lives here: where the library is
found, the one table of functions (name, argtypes, restype, errcheck), the
opaque handle type, the callback types, and the helpers that read and release
library-owned strings. Importing this module loads the library and checks its
ABI version; a missing library or a mismatch is an ImportError with a message
that says what to do.

Conventions (see include/lemonmcp.h):

- Library-owned output strings are ``c_void_p`` out-parameters, read with
  ``string_at`` and released with ``lmcp_free``; never a ``c_char_p`` restype,
  which would copy the text and lose the pointer. Only the two static strings
  (``lmcp_version``, ``lmcp_status_string``) are ``c_char_p``.
- ctypes releases the GIL around a call; the functions in ``HOLDS_GIL``
  (never blocking, per the header) are called through ``lib_held``, which
  keeps it.
- Every function returning an ``lmcp_status`` has an errcheck that raises the
  matching :class:`~lemonmcp.errors.LemonMCPError`, built from the ``err_out``
  JSON when the function has one (the errcheck always frees it).
"""

from __future__ import annotations

import ctypes
import json
import os
import sys
from ctypes import (
    CFUNCTYPE,
    POINTER,
    c_char_p,
    c_int,
    c_int32,
    c_int64,
    c_size_t,
    c_uint64,
    c_void_p,
)
from typing import Any, Callable, List, Optional, Sequence, Tuple

from .errors import LemonMCPError, error_from_status, use_status_names

__all__ = [
    "ABI_VERSION",
    "LIBRARY_ENV",
    "LIBRARY_NAME",
    "ClientHandle",
    "HostHandle",
    "ServerHandle",
    "QueueHandle",
    "COMPLETION_LAYOUT",
    "EVENT_CB",
    "APP_REQUEST_CB",
    "DONE_CB",
    "DESTROY_CB",
    "TELEMETRY_CB",
    "lib",
    "lib_held",
    "HOLDS_GIL",
    "library_path",
    "take_bytes",
    "decode_json",
    "status_string",
    "QUERY_LIST_TOOLS",
    "QUERY_LIST_PROMPTS",
    "QUERY_LIST_RESOURCES",
    "QUERY_SEARCH_TOOLS",
    "STATE_NEW",
    "STATE_CONNECTING",
    "STATE_READY",
    "STATE_CLOSING",
    "STATE_CLOSED",
    "STATE_FAILED",
    "STATE_NAMES",
]

#: The ABI version this binding was written for (LMCP_ABI_VERSION).
ABI_VERSION = 1
#: Environment variable that overrides where the library is loaded from.
LIBRARY_ENV = "LEMONMCP_LIBRARY"
#: The library's file name inside the package.
LIBRARY_NAME = "liblemonmcp.so"

# lmcp_query values: the host's queries (lmcp_host_query).
QUERY_LIST_TOOLS = 0
QUERY_LIST_PROMPTS = 1
QUERY_LIST_RESOURCES = 2
QUERY_SEARCH_TOOLS = 3

# lmcp_state values.
STATE_NEW = 0
STATE_CONNECTING = 1
STATE_READY = 2
STATE_CLOSING = 3
STATE_CLOSED = 4
STATE_FAILED = 5
STATE_NAMES = {
    STATE_NEW: "new",
    STATE_CONNECTING: "connecting",
    STATE_READY: "ready",
    STATE_CLOSING: "closing",
    STATE_CLOSED: "closed",
    STATE_FAILED: "failed",
}


class _Client(ctypes.Structure):
    """The opaque ``lmcp_client``; only pointers to it exist."""


#: ``lmcp_client *``: with argtypes set, ctypes refuses any other pointer.
ClientHandle = POINTER(_Client)

# void (*lmcp_event_cb)(void *user_data, const char *kind, const char *json, size_t len)
EVENT_CB = CFUNCTYPE(None, c_void_p, c_char_p, c_void_p, c_size_t)
# void (*lmcp_app_request_cb)(void *user_data, lmcp_request_id, const char *kind,
#                              const char *json, size_t len)
APP_REQUEST_CB = CFUNCTYPE(None, c_void_p, c_uint64, c_char_p, c_void_p, c_size_t)
# void (*lmcp_done_cb)(void *user_data, lmcp_call_id, lmcp_status, const char *json, size_t len)
DONE_CB = CFUNCTYPE(None, c_void_p, c_uint64, c_int32, c_void_p, c_size_t)
# void (*lmcp_destroy_cb)(void *user_data)
DESTROY_CB = CFUNCTYPE(None, c_void_p)
#: lmcp_telemetry_cb(user_data, kind, json, len). Python traces through
#: OpenTelemetry in Python (_otel.py); the declaration keeps the table whole.
TELEMETRY_CB = CFUNCTYPE(None, c_void_p, c_char_p, c_void_p, c_size_t)

_charpp = POINTER(c_void_p)  # char ** out-parameters (library-owned)
_sizep = POINTER(c_size_t)


def library_path() -> str:
    """Where the library is loaded from: ``$LEMONMCP_LIBRARY`` when set, else
    the ``liblemonmcp.so`` shipped inside this package.

    Raises ImportError with instructions when neither exists.
    """
    override = os.environ.get(LIBRARY_ENV)
    if override:
        if not os.path.isfile(override):
            raise ImportError(
                f"lemonmcp: {LIBRARY_ENV}={override!r} does not name a file"
            )
        return override
    here = _package_file(LIBRARY_NAME)
    if here is not None:
        return here
    raise ImportError(
        f"lemonmcp: {LIBRARY_NAME} not found inside the lemonmcp package "
        f"({os.path.dirname(os.path.abspath(__file__))}) and {LIBRARY_ENV} is not set; "
        "build it with `make lib python-dev`, install a wheel that contains it, "
        f"or point {LIBRARY_ENV} at the library"
    )


def _package_file(name: str) -> Optional[str]:
    try:
        from importlib import resources

        ref = resources.files(__package__ or "lemonmcp").joinpath(name)
        if ref.is_file():
            path = str(ref)
            if os.path.isfile(path):
                return path
    except Exception:  # pragma: no cover - unusual importers
        pass
    fallback = os.path.join(os.path.dirname(os.path.abspath(__file__)), name)
    return fallback if os.path.isfile(fallback) else None


# ----------------------------------------------------------------- errchecks

_ArgTuple = Tuple[Any, ...]


def take_bytes(ptr: c_void_p, length: Optional[int] = None) -> bytes:
    """Copy a library-owned buffer and release it with ``lmcp_free``.

    ``length`` is used when known (``*_len_out``); otherwise the buffer is read
    up to its NUL terminator. A NULL pointer gives ``b""``.
    """
    addr = ptr.value
    if not addr:
        return b""
    try:
        if length is None:
            return ctypes.string_at(addr)
        return ctypes.string_at(addr, length)
    finally:
        _held.lmcp_free(addr)


def decode_json(data: bytes) -> Any:
    """Decode library JSON; ``None`` for an empty buffer."""
    if not data:
        return None
    return json.loads(data)


def _error_from(status: int, err: Optional[c_void_p]) -> LemonMCPError:
    payload: Any = None
    if err is not None and err.value:
        raw = take_bytes(err)
        try:
            payload = json.loads(raw)
        except ValueError:
            payload = {"message": raw.decode("utf-8", "replace")}
    if not isinstance(payload, dict) or not payload.get("message"):
        payload = dict(payload) if isinstance(payload, dict) else {}
        payload["message"] = status_string(status)
    return error_from_status(status, payload)


def _check_err_out(result: int, func: Any, args: _ArgTuple) -> int:
    """errcheck for functions whose last parameter is ``char **err_out``."""
    err = args[-1]
    if result != 0:
        raise _error_from(result, err if isinstance(err, c_void_p) else None)
    if isinstance(err, c_void_p) and err.value:  # defensive: OK with a message
        take_bytes(err)
    return result


def _check_status(result: int, func: Any, args: _ArgTuple) -> int:
    """errcheck for functions that return a status without an error object."""
    if result != 0:
        raise _error_from(result, None)
    return result


# --------------------------------------------------------------- the table

_Entry = Tuple[str, Sequence[Any], Any, Optional[Callable[[Any, Any, _ArgTuple], Any]]]

class SyncCall(ctypes.Structure):
    """``lmcp_sync_call``: a blocking call begun with ``lmcp_*_call_begin``,
    waited for with ``lmcp_sync_call_wait``; its fields are the library's."""

    _fields_ = [("state", ctypes.c_uint32), ("status", c_int32), ("json", c_void_p), ("len", c_size_t)]


_syncp = POINTER(SyncCall)

#: Every function of include/lemonmcp.h: (name, argtypes, restype, errcheck).
FUNCTIONS: List[_Entry] = [
    ("lmcp_version", [], c_char_p, None),  # static text: not freed
    ("lmcp_abi_version", [], c_int32, None),
    ("lmcp_status_string", [c_int32], c_char_p, None),  # static text: not freed
    ("lmcp_free", [c_void_p], None, None),
    ("lmcp_features", [_charpp, _sizep], c_int32, _check_status),
    ("lmcp_diagnostics", [_charpp, _sizep], c_int32, _check_status),
    (
        "lmcp_validate_answer",
        [c_char_p, c_char_p, c_size_t, c_char_p, c_size_t, _charpp],
        c_int32,
        _check_err_out,
    ),
    (
        "lmcp_client_new",
        [c_char_p, c_size_t, POINTER(ClientHandle), _charpp],
        c_int32,
        _check_err_out,
    ),
    (
        "lmcp_client_set_event_handler",
        [ClientHandle, EVENT_CB, c_void_p, DESTROY_CB, _charpp],
        c_int32,
        _check_err_out,
    ),
    (
        "lmcp_client_set_telemetry_handler",
        [ClientHandle, TELEMETRY_CB, c_void_p, DESTROY_CB, _charpp],
        c_int32,
        _check_err_out,
    ),
    (
        "lmcp_client_set_app_request_handler",
        [ClientHandle, APP_REQUEST_CB, c_void_p, DESTROY_CB, _charpp],
        c_int32,
        _check_err_out,
    ),
    ("lmcp_client_connect", [ClientHandle, _charpp], c_int32, _check_err_out),
    (
        "lmcp_client_wait_ready",
        [ClientHandle, c_int64, _charpp],
        c_int32,
        _check_err_out,
    ),
    ("lmcp_client_state", [ClientHandle, POINTER(c_int32)], c_int32, _check_status),
    (
        "lmcp_client_call",
        [
            ClientHandle,
            c_char_p,
            c_char_p,
            c_size_t,
            c_char_p,
            c_size_t,
            DONE_CB,
            c_void_p,
            POINTER(c_uint64),
            _charpp,
        ],
        c_int32,
        _check_err_out,
    ),
    (
        "lmcp_client_call_sync",
        [
            ClientHandle,
            c_char_p,
            c_char_p,
            c_size_t,
            c_char_p,
            c_size_t,
            _charpp,
            _sizep,
            _charpp,
        ],
        c_int32,
        _check_err_out,
    ),
    (
        "lmcp_client_call_begin",
        [ClientHandle, c_char_p, c_char_p, c_size_t, c_char_p, c_size_t, _syncp, POINTER(c_uint64), _charpp],
        c_int32,
        _check_err_out,
    ),
    # The call's own status is the caller's to read (no errcheck): it is
    # decoded with the result, once (_session.call_blocking).
    (
        "lmcp_sync_call_wait",
        [_syncp, c_int32, POINTER(c_int), _charpp, _sizep, _charpp],
        c_int32,
        None,
    ),
    ("lmcp_client_cancel", [ClientHandle, c_uint64], c_int32, _check_status),
    (
        "lmcp_client_notify",
        [ClientHandle, c_char_p, c_char_p, c_size_t, _charpp],
        c_int32,
        _check_err_out,
    ),
    (
        "lmcp_client_respond",
        [ClientHandle, c_uint64, c_int32, c_char_p, c_size_t, _charpp],
        c_int32,
        _check_err_out,
    ),
    (
        "lmcp_client_server_info",
        [ClientHandle, _charpp, _sizep, _charpp],
        c_int32,
        _check_err_out,
    ),
    ("lmcp_client_close", [ClientHandle, c_int64, _charpp], c_int32, _check_err_out),
    ("lmcp_client_free", [ClientHandle], None, None),
]


# ---------------------------------------------------- completion queues (QUEUE)


class _Queue(ctypes.Structure):
    """The opaque ``lmcp_queue``; only pointers to it exist."""


#: ``lmcp_queue *``.
QueueHandle = POINTER(_Queue)

#: ``lmcp_completion`` as ``struct`` unpacks it from a copied batch (native
#: order and sizes, no padding between members: the C layout on LP64):
#: tag, call_id, status, reserved, json (an address inside the batch), len.
COMPLETION_LAYOUT = "=QQiIQQ"

#: The lmcp_queue_* functions and lmcp_client_call_queued (the QUEUE section).
FUNCTIONS.extend(
    [
        ("lmcp_queue_new", [POINTER(QueueHandle), POINTER(c_int), _charpp], c_int32, _check_err_out),
        (
            "lmcp_client_call_queued",
            [
                ClientHandle,
                c_char_p,
                c_char_p,
                c_size_t,
                c_char_p,
                c_size_t,
                QueueHandle,
                c_uint64,
                POINTER(c_uint64),
                _charpp,
            ],
            c_int32,
            _check_err_out,
        ),
        ("lmcp_client_hold_sends", [ClientHandle], c_int32, _check_status),
        ("lmcp_client_release_sends", [ClientHandle], c_int32, _check_status),
        ("lmcp_queue_pop", [QueueHandle, c_size_t, _charpp, _sizep, _sizep], c_int32, _check_status),
        ("lmcp_queue_free", [QueueHandle], None, None),
    ]
)


# ------------------------------------------------------------ the host (HOST)


class _Host(ctypes.Structure):
    """The opaque ``lmcp_host``; only pointers to it exist."""


#: ``lmcp_host *``.
HostHandle = POINTER(_Host)

#: The lmcp_host_* functions of include/lemonmcp.h (the HOST section).
FUNCTIONS.extend(
    [
        ("lmcp_host_new", [c_char_p, c_size_t, POINTER(HostHandle), _charpp], c_int32, _check_err_out),
        ("lmcp_host_new_file", [c_char_p, c_char_p, c_size_t, POINTER(HostHandle), _charpp], c_int32, _check_err_out),
        (
            "lmcp_host_file_server",
            [c_char_p, c_char_p, c_size_t, c_char_p, _charpp, _sizep, _charpp],
            c_int32,
            _check_err_out,
        ),
        ("lmcp_host_warnings", [HostHandle, _charpp, _sizep, _charpp], c_int32, _check_err_out),
        (
            "lmcp_host_set_event_handler",
            [HostHandle, EVENT_CB, c_void_p, DESTROY_CB, _charpp],
            c_int32,
            _check_err_out,
        ),
        (
            "lmcp_host_set_telemetry_handler",
            [HostHandle, TELEMETRY_CB, c_void_p, DESTROY_CB, _charpp],
            c_int32,
            _check_err_out,
        ),
        (
            "lmcp_host_set_app_request_handler",
            [HostHandle, APP_REQUEST_CB, c_void_p, DESTROY_CB, _charpp],
            c_int32,
            _check_err_out,
        ),
        ("lmcp_host_connect", [HostHandle, _charpp], c_int32, _check_err_out),
        ("lmcp_host_wait_ready", [HostHandle, c_int64, _charpp], c_int32, _check_err_out),
        ("lmcp_host_servers", [HostHandle, _charpp, _sizep, _charpp], c_int32, _check_err_out),
        ("lmcp_host_list_tools", [HostHandle, _charpp, _sizep, _charpp], c_int32, _check_err_out),
        ("lmcp_host_tool_route", [HostHandle, c_char_p, _charpp, _sizep, _charpp], c_int32, _check_err_out),
        ("lmcp_host_list_prompts", [HostHandle, _charpp, _sizep, _charpp], c_int32, _check_err_out),
        ("lmcp_host_list_resources", [HostHandle, _charpp, _sizep, _charpp], c_int32, _check_err_out),
        ("lmcp_host_search_tools", [HostHandle, c_char_p, c_char_p, c_size_t, _charpp, _sizep, _charpp], c_int32, _check_err_out),
        ("lmcp_host_pins", [HostHandle, _charpp, _sizep, _charpp], c_int32, _check_err_out),
        ("lmcp_host_approve", [HostHandle, c_char_p, c_size_t, _charpp], c_int32, _check_err_out),
        (
            "lmcp_host_call_tool",
            [HostHandle, c_char_p, c_char_p, c_size_t, c_char_p, c_size_t, DONE_CB, c_void_p, POINTER(c_uint64), _charpp],
            c_int32,
            _check_err_out,
        ),
        (
            "lmcp_host_call",
            [
                HostHandle,
                c_char_p,
                c_char_p,
                c_char_p,
                c_size_t,
                c_char_p,
                c_size_t,
                DONE_CB,
                c_void_p,
                POINTER(c_uint64),
                _charpp,
            ],
            c_int32,
            _check_err_out,
        ),
        (
            "lmcp_host_call_tool_begin",
            [HostHandle, c_char_p, c_char_p, c_size_t, c_char_p, c_size_t, _syncp, POINTER(c_uint64), _charpp],
            c_int32,
            _check_err_out,
        ),
        (
            "lmcp_host_call_begin",
            [HostHandle, c_char_p, c_char_p, c_char_p, c_size_t, c_char_p, c_size_t, _syncp, POINTER(c_uint64), _charpp],
            c_int32,
            _check_err_out,
        ),
        (
            "lmcp_host_call_tool_sync",
            [HostHandle, c_char_p, c_char_p, c_size_t, c_char_p, c_size_t, _charpp, _sizep, _charpp],
            c_int32,
            _check_err_out,
        ),
        (
            "lmcp_host_call_sync",
            [HostHandle, c_char_p, c_char_p, c_char_p, c_size_t, c_char_p, c_size_t, _charpp, _sizep, _charpp],
            c_int32,
            _check_err_out,
        ),
        (
            "lmcp_host_call_queued",
            [
                HostHandle,
                c_char_p,
                c_char_p,
                c_char_p,
                c_size_t,
                c_char_p,
                c_size_t,
                QueueHandle,
                c_uint64,
                POINTER(c_uint64),
                _charpp,
            ],
            c_int32,
            _check_err_out,
        ),
        (
            "lmcp_host_call_tool_queued",
            [HostHandle, c_char_p, c_char_p, c_size_t, c_char_p, c_size_t, QueueHandle, c_uint64, POINTER(c_uint64), _charpp],
            c_int32,
            _check_err_out,
        ),
        (
            "lmcp_host_query",
            [HostHandle, c_int32, c_char_p, c_size_t, DONE_CB, c_void_p, POINTER(c_uint64), _charpp],
            c_int32,
            _check_err_out,
        ),
        (
            "lmcp_host_query_queued",
            [HostHandle, c_int32, c_char_p, c_size_t, QueueHandle, c_uint64, POINTER(c_uint64), _charpp],
            c_int32,
            _check_err_out,
        ),
        ("lmcp_host_cancel", [HostHandle, c_uint64], c_int32, _check_status),
        (
            "lmcp_host_respond",
            [HostHandle, c_uint64, c_int32, c_char_p, c_size_t, _charpp],
            c_int32,
            _check_err_out,
        ),
        ("lmcp_host_close", [HostHandle, c_int64, _charpp], c_int32, _check_err_out),
        ("lmcp_host_free", [HostHandle], None, None),
    ]
)


# ------------------------------------------------- the host served (SERVER)


class _Server(ctypes.Structure):
    """The opaque ``lmcp_server``; only pointers to it exist."""


#: ``lmcp_server *``.
ServerHandle = POINTER(_Server)

#: The lmcp_server_* functions (the SERVER section): a host served as one
#: MCP server (lemonmcp._serve).
FUNCTIONS.extend(
    [
        ("lmcp_server_new", [HostHandle, c_char_p, c_size_t, POINTER(ServerHandle), _charpp], c_int32, _check_err_out),
        ("lmcp_server_serve_fds", [ServerHandle, c_int, c_int, _charpp], c_int32, _check_err_out),
        ("lmcp_server_serve_http", [ServerHandle, c_char_p, _charpp, _charpp], c_int32, _check_err_out),
        ("lmcp_server_wait", [ServerHandle, c_int64, _charpp], c_int32, _check_err_out),
        ("lmcp_server_stop", [ServerHandle, c_int64, _charpp], c_int32, _check_err_out),
        ("lmcp_server_set_event_handler", [ServerHandle, EVENT_CB, c_void_p, DESTROY_CB, _charpp], c_int32, _check_err_out),
        ("lmcp_server_free", [ServerHandle], None, None),
    ]
)


#: Functions the header promises never block (they return in microseconds
#: whatever the server does, and no callback runs inside them): they are
#: called with the GIL held. ctypes releases the GIL around every other call,
#: and releasing and retaking it costs more than these calls themselves; on a
#: busy client it also hands the GIL to a library thread waiting to deliver a
#: completion, and the caller then waits for that callback to finish.
#:
#: Why holding the GIL cannot deadlock: a thread holding it may only enter
#: Go code that never waits for a Python callback, directly or through a
#: lock or goroutine that such a callback holds or blocks. The library's
#: Python callbacks (completions, events, app requests, destroys, auth
#: steps) run on library threads and take the GIL there; every one of them
#: runs with no library lock held (the header's promise, kept by
#: internal/callbackgate: Gate.runLocked releases its mu around the callback,
#: and app requests run on a goroutine of their own, core.askHost). The
#: paths of these functions (read for this list, 2026-12-03):
#:
#: - lmcp_client_call, lmcp_client_call_queued (capi/client.go, queue.go):
#:   a handle lookup (an atomic load, internal/handles), then core.Client.call:
#:   c.mu (held only around table updates), the auth digest (auth.Manager.mu,
#:   held only around field reads; a token grant waits outside it,
#:   auth/flight.go), then the transport's Send: stdio takes its sender's mu
#:   around one non-blocking write(2) or an append to its flusher's queue
#:   (transport/stdio/send.go); Streamable HTTP takes its mu to register the
#:   request and starts a goroutine for the exchange (send.go startRequest),
#:   since a call made this way is never "waiting". A completion that comes
#:   while the call is being started is pushed to the callback gate's
#:   unbounded queue (Gate.Push: its mu only around the append), never run
#:   here.
#: - lmcp_host_call_queued, lmcp_host_call_tool_queued (capi/host_queue.go):
#:   the host's mu around its table, then the client's call as above. Not
#:   on a host with lazy servers: there the call that first needs a server
#:   spawns its process, and a tool name without its server's prefix waits
#:   for every lazy server's handshake, so such a host calls them through
#:   ``lib`` (HostSession in host.py).
#: - lmcp_client_call_begin, lmcp_host_call_begin, lmcp_host_call_tool_begin
#:   (capi/client.go, host.go): the same paths as the queued forms, the
#:   completion storing the outcome in the caller's lmcp_sync_call
#:   (capi/syncwait.go) instead of a queue.
#: - lmcp_client_hold_sends, lmcp_client_release_sends (capi/queue.go):
#:   the stdio sender's mu around a counter; the release then writes the
#:   held lines as a send does (one non-blocking write(2), the rest to the
#:   flusher).
#: - lmcp_queue_pop (capi/queue.go): the queue's mutex around a copy and
#:   the reset of its eventfd (internal/cqueue); a push holds it only for
#:   an append and the eventfd's signal, and runs no Python.
#: - lmcp_free: C free().
#:
#: Cancel, close, respond, the handler setters and every *_sync or wait
#: function can wait (for a transport's abort, a callback to return, a
#: server) and are left to release the GIL. tests/test_held_gil.py runs
#: these calls from several threads while callbacks of every kind take the
#: GIL; a deadlock there fails it by its timeout.
HOLDS_GIL = frozenset(
    {
        "lmcp_client_call",
        "lmcp_client_call_queued",
        "lmcp_client_call_begin",
        "lmcp_host_call_begin",
        "lmcp_host_call_tool_begin",
        "lmcp_host_call_queued",
        "lmcp_host_call_tool_queued",
        "lmcp_host_query_queued",
        "lmcp_client_hold_sends",
        "lmcp_client_release_sends",
        "lmcp_queue_pop",
        "lmcp_free",
    }
)


def _declare(dll: ctypes.CDLL, path: str, names: Optional[Sequence[str]] = None) -> None:
    for name, argtypes, restype, errcheck in FUNCTIONS:
        if names is not None and name not in names:
            continue
        try:
            fn = getattr(dll, name)
        except AttributeError:
            raise ImportError(
                f"lemonmcp: {path} has no function {name}; the library and this "
                "binding are from different versions"
            ) from None
        fn.argtypes = list(argtypes)
        fn.restype = restype
        if errcheck is not None:
            fn.errcheck = errcheck


def _load() -> Tuple[ctypes.CDLL, ctypes.CDLL, str]:
    path = library_path()
    if not sys.platform.startswith("linux"):  # pragma: no cover
        # The library is built for Linux/glibc; other platforms get the
        # loader's own error below, this only makes the cause obvious.
        pass
    try:
        dll = ctypes.CDLL(path)
    except OSError as exc:
        raise ImportError(f"lemonmcp: cannot load {path}: {exc}") from exc
    _declare(dll, path)
    found = int(dll.lmcp_abi_version())
    if found != ABI_VERSION:
        raise ImportError(
            f"lemonmcp: {path} implements ABI version {found}, but this binding was "
            f"written for ABI version {ABI_VERSION}; install matching versions of "
            "the library and the Python package"
        )
    # The same library (dlopen returns the same handle) through PyDLL, whose
    # functions keep the GIL: only the HOLDS_GIL ones are declared on it.
    held = ctypes.PyDLL(path)
    _declare(held, path, sorted(HOLDS_GIL))
    return dll, held, path


_lib, _held, _path = _load()

#: The loaded library with every function declared.
lib: Any = _lib
#: The HOLDS_GIL functions, called without releasing the GIL.
lib_held: Any = _held
#: Where it was loaded from.
loaded_path: str = _path


def status_string(status: int) -> str:
    """``lmcp_status_string``: the static name of a status."""
    raw = _lib.lmcp_status_string(status)
    return raw.decode("utf-8", "replace") if raw else "unknown status"


use_status_names(status_string)


def version() -> str:
    """``lmcp_version``: the library version ("0.1.0")."""
    raw = _lib.lmcp_version()
    return raw.decode("utf-8", "replace") if raw else ""


def features() -> Any:
    """``lmcp_features`` decoded: transports, protocol versions, ..."""
    out = c_void_p()
    length = c_size_t()
    _lib.lmcp_features(out, ctypes.byref(length))
    return decode_json(take_bytes(out, length.value))


def diagnostics() -> Any:
    """``lmcp_diagnostics`` decoded: {"goroutines", "live_clients",
    "live_hosts", "live_queues", "pending_calls", "result_cache"}, for leak
    checks (see ``lmcp_diagnostics`` in the C header)."""
    out = c_void_p()
    length = c_size_t()
    _lib.lmcp_diagnostics(out, ctypes.byref(length))
    return decode_json(take_bytes(out, length.value))


def validate_answer(kind: str, request: Any, answer: Any) -> None:
    """``lmcp_validate_answer``: the library's own check of an answer to a
    server request (``kind`` "elicitation", "sampling" or "roots"), the one
    it applies when the answer is given; raises InvalidArgument naming the
    problem."""
    req = json.dumps(request).encode() if request is not None else b""
    ans = json.dumps(answer).encode()
    _lib.lmcp_validate_answer(kind.encode(), req or None, len(req), ans, len(ans), c_void_p())
