"""The multi-server host: many named MCP servers behind one object.

    import lemonmcp

    config = {"mcpServers": {
        "files": {"command": "mcp-server-filesystem", "args": ["/tmp"]},
        "search": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}},
    }}
    with lemonmcp.Host(config) as host:
        for tool in host.list_tools():
            print(tool.name, tool.server)          # files__read_file files
        result = host.call_tool("files__read_file", {"path": "/tmp/x"})
        print(host.servers()["files"]["state"])    # ready

The host lives in the library (``lmcp_host``, see docs/host.md): servers are
connected in parallel and supervised (a crashed server is restarted; the call
in flight fails once with :class:`ClosedError`), tool lists are cached per
server and refreshed on list_changed, and a server that fails never fails the
others. Methods block the calling thread (the GIL is released meanwhile);
``lemonmcp.aio.AsyncHost`` is the asyncio twin.
"""

from __future__ import annotations

import ctypes
import itertools
import json
import os
import threading
from ctypes import byref, c_size_t, c_uint64, c_void_p
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Callable, Dict, List, Mapping, Optional, Set, Type, Union

from . import _ffi, _host_file
from .errors import LemonMCPError
from .types import CallToolResult, Prompt, Resource, Tool

__all__ = ["Host", "HostTool", "HostPrompt", "HostResource", "EventHandler", "RequestHandler"]

#: on_event(kind, payload): every server's events with payload["server"],
#: and "list_changed" {"server", "list"}; runs on a library thread.
EventHandler = Callable[[str, Dict[str, Any]], None]
#: on_request(kind, payload) -> result dict: answers a server's request
#: (sampling, elicitation, roots); payload["server"] names the server. Raise
#: a LemonMCPError to refuse with its status.
RequestHandler = Callable[[str, Dict[str, Any]], Mapping[str, Any]]

_STATUS_INTERNAL = -14
_STATUS_UNSUPPORTED = -10


@dataclass
class HostTool(Tool):
    """A tool of one of the host's servers: ``name`` is the host's name for
    it (``server__tool`` by default), ``original_name`` the server's."""

    server: str = ""
    original_name: str = ""

    @classmethod
    def from_host_json(cls, raw: Any) -> "HostTool":
        t = Tool.from_json(raw)
        r = raw if isinstance(raw, dict) else {}
        return cls(**{**t.__dict__, "server": str(r.get("server", "")), "original_name": str(r.get("original_name", t.name))})


@dataclass
class HostPrompt(Prompt):
    """A prompt of one of the host's servers."""

    server: str = ""


@dataclass
class HostResource(Resource):
    """A resource of one of the host's servers."""

    server: str = ""


# The host's callbacks, by token. The C trampolines below are created once
# and live as long as the module; a registration's entry goes when the
# library runs its destroy, so no callback can reach a collected object.
_registrations: Dict[int, Any] = {}
_tokens = itertools.count(1)
_reg_lock = threading.Lock()


def _register(obj: Any) -> int:
    with _reg_lock:
        token = next(_tokens)
        _registrations[token] = obj
        return token


def _lookup(ud: Optional[int]) -> Any:
    with _reg_lock:
        return _registrations.get(ud or 0)


def _destroy_fn(ud: Optional[int]) -> None:
    with _reg_lock:
        _registrations.pop(ud or 0, None)


def _on_event_fn(ud: Optional[int], kind: bytes, data: Optional[int], length: int) -> None:
    handler = _lookup(ud)
    if handler is None:
        return
    try:
        payload = json.loads(ctypes.string_at(data, length)) if data else {}
        handler(kind.decode("utf-8", "replace"), payload)
    except Exception:  # a handler's bug must not unwind into the library
        pass


def _on_request_fn(ud: Optional[int], request_id: int, kind: bytes, data: Optional[int], length: int) -> None:
    entry = _lookup(ud)
    if entry is None:
        return
    host, handler = entry
    try:
        payload = json.loads(ctypes.string_at(data, length)) if data else {}
        result = handler(kind.decode("utf-8", "replace"), payload)
        body = json.dumps(dict(result)).encode()
        host._respond(request_id, 0, body)
    except LemonMCPError as exc:
        host._respond(request_id, exc.status, None)
    except Exception:
        host._respond(request_id, _STATUS_INTERNAL, None)


_destroy = _ffi.DESTROY_CB(_destroy_fn)
_on_event = _ffi.EVENT_CB(_on_event_fn)
_on_request = _ffi.HOST_REQUEST_CB(_on_request_fn)


def _load_config(config_or_path: Union[str, "os.PathLike[str]", Mapping[str, Any]]) -> Dict[str, Any]:
    if isinstance(config_or_path, Mapping):
        return dict(config_or_path)
    text = os.fspath(config_or_path)
    if text.lstrip().startswith("{"):
        loaded = json.loads(text)
    else:
        with open(text, "r", encoding="utf-8") as f:
            loaded = json.load(f)
    if not isinstance(loaded, dict):
        raise ValueError("lemonmcp.Host: the configuration must be a JSON object")
    return loaded


def _ms(seconds: Optional[float]) -> int:
    return -1 if seconds is None else int(seconds * 1000)


class Host:
    """Many named MCP servers from one ``mcpServers`` configuration.

    ``config_or_path`` is a dict, a JSON text, or the path of a config file
    as Claude Desktop, Claude Code, Cursor, VS Code, Cline, Roo Code or
    Windsurf write it: the library reads a path itself (messages name the
    file), ignores the members it does not use with one warning each, logged
    on the ``lemonmcp`` logger and kept in :attr:`warnings` (``strict=True``
    makes them errors), resolves ``${input:id}`` from ``inputs`` and
    ``${workspaceFolder}`` from ``workspace_folder`` (default: the file's
    project). ``start="lazy"`` starts each server on its first use.
    ``tool_prefix``: ``"always"`` (``server__tool``), ``"on_collision"`` or
    ``"never"``; the file's own value is kept when the argument is left at
    its default. Other keyword options are top-level host fields
    (``defaults={...}``). ``on_event`` and ``on_request`` are optional
    handlers (see :data:`EventHandler`, :data:`RequestHandler`).

    Entering the context connects and waits up to ``ready_timeout`` seconds
    for every server to be ready or to fail; leaving it closes and frees.
    """

    def __init__(
        self,
        config_or_path: Union[str, "os.PathLike[str]", Mapping[str, Any]],
        tool_prefix: str = "always",
        *,
        on_event: Optional[EventHandler] = None,
        on_request: Optional[RequestHandler] = None,
        ready_timeout: Optional[float] = 30.0,
        strict: bool = False,
        inputs: Optional[Mapping[str, str]] = None,
        workspace_folder: Optional[Union[str, "os.PathLike[str]"]] = None,
        start: Optional[str] = None,
        **options: Any,
    ) -> None:
        if _host_file.is_path(config_or_path):
            override = dict(options)
            if tool_prefix != "always":
                override["tool_prefix"] = tool_prefix
            opts = _host_file.load_options(
                strict=strict, inputs=inputs, workspace_folder=workspace_folder, start=start, override=override
            )
            handle = _host_file.new_host_from_file(config_or_path, opts)  # type: ignore[arg-type]
        else:
            config = _load_config(config_or_path)
            if tool_prefix != "always" or "tool_prefix" not in config:
                config["tool_prefix"] = tool_prefix
            config.update(options)
            if strict:
                config["strict"] = True
            if start is not None:
                config["start"] = start
            raw = json.dumps(config).encode()
            handle = _ffi.HostHandle()
            err = c_void_p()
            _ffi.lib.lmcp_host_new(raw, len(raw), byref(handle), err)
        self._h: Any = handle
        #: The members of the configuration the host ignored, one line each
        #: (also logged as warnings on the ``lemonmcp`` logger).
        self.warnings: List[str] = _host_file.warnings_of(handle)
        _host_file.log_warnings(self.warnings)
        self._failures_logged: Set[str] = set()
        self._lock = threading.Lock()
        self._freed = False
        self._connected = False
        self.ready_timeout = ready_timeout
        if on_event is not None:
            token = _register(on_event)
            _ffi.lib.lmcp_host_set_event_handler(self._h, _on_event, c_void_p(token), _destroy, c_void_p())
        if on_request is not None:
            token = _register((self, on_request))
            _ffi.lib.lmcp_host_set_host_request_handler(self._h, _on_request, c_void_p(token), _destroy, c_void_p())

    # ------------------------------------------------------------ lifecycle

    def connect(self) -> "Host":
        """Start every enabled server in parallel (returns once started)."""
        _ffi.lib.lmcp_host_connect(self._handle(), c_void_p())
        self._connected = True
        return self

    def wait_ready(self, timeout: Optional[float] = None) -> None:
        """Wait until every enabled server is ready or has failed once
        (:class:`TimeoutError` names those still connecting). Each server
        that failed is logged once as a warning saying why."""
        _ffi.lib.lmcp_host_wait_ready(self._handle(), _ms(timeout), c_void_p())
        _host_file.log_failed(self.servers(), self._failures_logged)

    def __enter__(self) -> "Host":
        try:
            if not self._connected:
                self.connect()
            self.wait_ready(self.ready_timeout)
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        self.close()

    def close(self, timeout: Optional[float] = None) -> None:
        """Close every server (processes reaped) and release the host.
        Idempotent."""
        with self._lock:
            if self._freed:
                return
            self._freed = True
        try:
            _ffi.lib.lmcp_host_close(self._h, _ms(timeout), c_void_p())
        finally:
            _ffi.lib.lmcp_host_free(self._h)

    def __del__(self) -> None:  # pragma: no cover - best effort
        if not getattr(self, "_freed", True):
            self._freed = True
            _ffi.lib.lmcp_host_free(self._h)

    def _handle(self) -> Any:
        if self._freed:
            # The library answers a freed handle with InvalidHandle too; this
            # says why.
            from .errors import InvalidState

            raise InvalidState("the host is closed")
        return self._h

    # ------------------------------------------------------------- queries

    def _json(self, fn: Any) -> Any:
        out = c_void_p()
        length = c_size_t()
        fn(self._handle(), out, byref(length), c_void_p())
        return _ffi.decode_json(_ffi.take_bytes(out, length.value))

    def servers(self) -> Dict[str, Dict[str, Any]]:
        """Each server: {"state", "restarts", "enabled", "start"?, "era"?,
        "protocol_version"?, "transport"?, and when not ready "last_error"?,
        "cause"?, "exit_code"?, "signal"?, "stderr_tail"?}."""
        result: Dict[str, Dict[str, Any]] = self._json(_ffi.lib.lmcp_host_servers)
        return result

    def list_tools(self) -> List[HostTool]:
        """Every ready server's tools, named by ``tool_prefix``."""
        doc = self._json(_ffi.lib.lmcp_host_list_tools)
        return [HostTool.from_host_json(t) for t in doc.get("tools", [])]

    def list_prompts(self) -> List[HostPrompt]:
        """Every ready server's prompts, each with ``.server``."""
        doc = self._json(_ffi.lib.lmcp_host_list_prompts)
        out = []
        for p in doc.get("prompts", []):
            base = Prompt.from_json(p)
            out.append(HostPrompt(**{**base.__dict__, "server": str(p.get("server", ""))}))
        return out

    def list_resources(self) -> List[HostResource]:
        """Every ready server's resources, each with ``.server``."""
        doc = self._json(_ffi.lib.lmcp_host_list_resources)
        out = []
        for r in doc.get("resources", []):
            base = Resource.from_json(r)
            out.append(HostResource(**{**base.__dict__, "server": str(r.get("server", ""))}))
        return out

    # --------------------------------------------------------------- calls

    def call_tool(
        self,
        name: str,
        arguments: Optional[Mapping[str, Any]] = None,
        *,
        timeout: Optional[float] = None,
        fail_if_restarting: bool = False,
    ) -> CallToolResult:
        """Call a tool by the name :meth:`list_tools` gives it."""
        args = json.dumps(dict(arguments or {})).encode()
        opts = self._options(timeout, fail_if_restarting)
        out = c_void_p()
        length = c_size_t()
        _ffi.lib.lmcp_host_call_tool_sync(
            self._handle(), name.encode(), args, len(args), opts, len(opts), out, byref(length), c_void_p()
        )
        return CallToolResult.from_json(_ffi.decode_json(_ffi.take_bytes(out, length.value)))

    def call(
        self,
        server: str,
        method: str,
        params: Optional[Mapping[str, Any]] = None,
        *,
        timeout: Optional[float] = None,
    ) -> Any:
        """Send any request to one named server; returns the result JSON."""
        body = json.dumps(dict(params)).encode() if params is not None else b""
        opts = self._options(timeout, False)
        out = c_void_p()
        length = c_size_t()
        _ffi.lib.lmcp_host_call_sync(
            self._handle(), server.encode(), method.encode(), body or None, len(body), opts, len(opts), out, byref(length), c_void_p()
        )
        return _ffi.decode_json(_ffi.take_bytes(out, length.value))

    @staticmethod
    def _options(timeout: Optional[float], fail_if_restarting: bool) -> bytes:
        o: Dict[str, Any] = {}
        if timeout is not None:
            o["timeout_ms"] = int(timeout * 1000)
        if fail_if_restarting:
            o["fail_if_restarting"] = True
        return json.dumps(o).encode() if o else b""

    def _respond(self, request_id: int, status: int, body: Optional[bytes]) -> None:
        if self._freed:
            return
        try:
            _ffi.lib.lmcp_host_respond(self._h, c_uint64(request_id), status, body, len(body or b""), c_void_p())
        except LemonMCPError:
            pass  # expired, or its server restarted: nothing to answer
