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
others. Methods block the calling thread; a call waits in poll() on the
thread's completion queue, so Ctrl-C interrupts it (and cancels it), as a
:class:`lemonmcp.Client` call. ``lemonmcp.aio.AsyncHost`` is the asyncio
twin.

The host is built on the client's machinery (``_session``): one handle
session with the same callback registry, completion queues, handler
keywords (``sampling=``, ``elicitation=``, ``roots=``, ``on_event=``, ...)
and error reporting; only the ``lmcp_host_*`` functions differ.
"""

from __future__ import annotations

import os
import sys
from ctypes import byref, c_size_t, c_void_p
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Mapping, Optional, Sequence, Set, Tuple, TypeVar, Union

from . import _ffi, _host_file, _otel, _pins
from ._base import CALLBACK_KEYWORDS, TOKEN_STORE_RETIRED, request_options
from ._codec import dumps
from ._config import declare_handlers, wait_ms
from ._dispatch import Callbacks, Dispatcher, ProgressHandler, RequestParams
from ._ffi import lib, lib_held
from ._session import HOST, HandleSession
from ._tool_search import ToolSearchResult, parse_results, search_args
from .errors import ClosedError, InvalidArgument, InvalidHandle, LemonMCPError, NotFound, TimeoutError
from .types import CallToolResult, Prompt, Resource, Tool

if TYPE_CHECKING:
    from . import _serve  # asyncio: loaded by serve() only

__all__ = ["Host", "HostTool", "HostPrompt", "HostResource", "EventHandler", "RequestParams", "ToolSearchResult"]

#: on_event(kind, payload): every server's events with payload["server"],
#: and "list_changed" {"server", "list"}; runs on a library thread.
EventHandler = Callable[[str, Dict[str, Any]], None]

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


class HostQuery(str):
    """A call's target that is the host itself: one of its queries
    (``lmcp_host_query``: a list, or the tool search), whose ``params`` are
    the query's arguments. It is a str (the query's name, also its
    ``method``) so that it passes where a server's name does: the session's
    calls and waits take it unchanged, and only :class:`HostSession` looks
    at it."""

    code: int

    def __new__(cls, name: str, code: int) -> "HostQuery":
        q = super().__new__(cls, name)
        q.code = code
        return q


LIST_TOOLS = HostQuery("list_tools", _ffi.QUERY_LIST_TOOLS)
LIST_PROMPTS = HostQuery("list_prompts", _ffi.QUERY_LIST_PROMPTS)
LIST_RESOURCES = HostQuery("list_resources", _ffi.QUERY_LIST_RESOURCES)
SEARCH_TOOLS = HostQuery("search_tools", _ffi.QUERY_SEARCH_TOOLS)


class HostSession(HandleSession):
    """A host's session: an ``lmcp_host *``. A call names its server
    (``target``), or none for a tool call: then ``method`` is the host's
    name of the tool and ``params`` its arguments; or a
    :class:`HostQuery`."""

    def __init__(
        self,
        config: Mapping[str, Any],
        callbacks: Callbacks,
        dispatcher: Dispatcher,
        path: Optional[str] = None,
        load_options: Optional[Dict[str, Any]] = None,
    ) -> None:
        if path is not None:
            # The library reads an application's file itself (_host_file);
            # config holds the members laid over the file's.
            opts = _host_file.load_options(**(load_options or {}), override=config)
            handle = _host_file.new_host_from_file(path, opts)
        else:
            blob = dumps(config, "config")
            handle = _ffi.HostHandle()
            lib.lmcp_host_new(blob, len(blob), byref(handle), c_void_p())
        self.connected = False
        super().__init__(handle, HOST, callbacks, dispatcher)
        # A lazy server is started by the first call that needs it, inside
        # the library call: its process is spawned there, and a tool name
        # without its server's prefix waits there for every lazy server's
        # handshake. A host with one calls the queued functions through lib,
        # which releases the GIL; any other host keeps them held (HOLDS_GIL).
        servers = self.json_of(lib.lmcp_host_servers)
        lazy = isinstance(servers, dict) and any(s.get("start") == "lazy" for s in servers.values())
        dll = lib if lazy else lib_held
        # Each form's (tool, server, query) functions (_session: DONE,
        # QUEUED, BEGIN, SYNC); a query has no blocking form.
        self._forms = (
            (lib.lmcp_host_call_tool, lib.lmcp_host_call, lib.lmcp_host_query),
            (dll.lmcp_host_call_tool_queued, dll.lmcp_host_call_queued, dll.lmcp_host_query_queued),
            (dll.lmcp_host_call_tool_begin, dll.lmcp_host_call_begin, None),
            (lib.lmcp_host_call_tool_sync, lib.lmcp_host_call_sync, None),
        )

    def _form_fn(self, form: int, target: Optional[str]) -> Any:
        """A tool call (no target: the method is the tool's host name), a
        call to the target server, or a query of the host's."""
        tool_fn, server_fn, query_fn = self._forms[form]
        if isinstance(target, HostQuery):
            return query_fn
        return tool_fn if target is None else server_fn

    def _call_args(self, mb: bytes, pjson: Optional[bytes], ojson: Optional[bytes], target: Optional[str]) -> Tuple[Any, ...]:
        plen = len(pjson) if pjson else 0
        if isinstance(target, HostQuery):
            return (self.handle(), target.code, pjson, plen)
        olen = len(ojson) if ojson else 0
        if target is None:
            return (self.handle(), mb, pjson, plen, ojson, olen)
        return (self.handle(), target.encode(), mb, pjson, plen, ojson, olen)

    def connect(self) -> None:
        try:
            lib.lmcp_host_connect(self.handle(), c_void_p())
        except InvalidHandle as exc:
            self._lost_race(exc)
        self.connected = True

    def wait_ready_slice(self, ms: int) -> None:
        """One bounded lmcp_host_wait_ready: returns once every server is
        ready or has failed, raises TimeoutError naming those still
        connecting."""
        try:
            lib.lmcp_host_wait_ready(self.handle(), ms, c_void_p())
        except InvalidHandle as exc:
            self._lost_race(exc)

    def settled(self) -> bool:
        """Every server is ready or has failed (a wait of 0 ms; the error
        of a host whose every server failed is left to wait_ready_slice)."""
        try:
            self.wait_ready_slice(0)
        except TimeoutError:
            return False
        except LemonMCPError:
            pass  # every enabled server failed: settled
        return True

    def json_of(self, fn: Any) -> Any:
        """What one of the host's JSON-returning functions returns
        (lmcp_host_servers), decoded."""
        out = c_void_p()
        length = c_size_t()
        try:
            fn(self.handle(), out, byref(length), c_void_p())
        except InvalidHandle as exc:
            self._lost_race(exc)
        return _ffi.decode_json(_ffi.take_bytes(out, length.value))

    def tool_route(self, name: str) -> Any:
        """lmcp_host_tool_route, decoded: {"server", "original_name"}; a
        route only the servers' lists would tell raises NotFound."""
        out = c_void_p()
        length = c_size_t()
        try:
            lib.lmcp_host_tool_route(self.handle(), name.encode("utf-8"), out, byref(length), c_void_p())
        except InvalidHandle as exc:
            self._lost_race(exc)
        return _ffi.decode_json(_ffi.take_bytes(out, length.value))

    def approve(self, approval: bytes) -> None:
        """lmcp_host_approve of an encoded approval (lemonmcp._pins)."""
        try:
            lib.lmcp_host_approve(self.handle(), approval, len(approval), c_void_p())
        except InvalidHandle as exc:
            self._lost_race(exc)

    def close_started(self, ms: int) -> bool:
        """lmcp_host_close: True when every server's close finished within
        ms (teardown otherwise goes on in the background)."""
        if self._handle is None:
            return True
        self._closing = True
        try:
            lib.lmcp_host_close(self.handle(), ms, c_void_p())
            return True
        except TimeoutError:
            return False
        except (ClosedError, InvalidHandle):
            return True  # already gone






_Item = TypeVar("_Item")

#: A tool call as the session makes it: (tool name, arguments, options,
#: progress handler).
ToolRequest = Tuple[str, Optional[Mapping[str, Any]], Dict[str, Any], Optional[ProgressHandler]]
#: A call to one server: (method, params, options, progress handler, server).
ServerRequest = Tuple[str, Optional[Mapping[str, Any]], Dict[str, Any], Optional[ProgressHandler], str]
#: A query as the session makes it: (method, params, options, progress
#: handler, target), the arguments of its calls.
QueryRequest = Tuple[str, Optional[Mapping[str, Any]], Dict[str, Any], None, HostQuery]


class HostBase:
    """What :class:`Host` and :class:`lemonmcp.aio.AsyncHost` share:
    construction, and the pure halves of the methods (building a request,
    reading its result)."""

    def __init__(
        self,
        config_or_path: Union[str, "os.PathLike[str]", Mapping[str, Any]],
        tool_prefix: str = "always",
        *,
        ready_timeout: Optional[float] = 30.0,
        strict: bool = False,
        inputs: Optional[Mapping[str, str]] = None,
        workspace_folder: Optional[Union[str, "os.PathLike[str]"]] = None,
        start: Optional[str] = None,
        only: Optional[Sequence[str]] = None,
        stdio: Optional[Mapping[str, Any]] = None,
        **options: Any,
    ) -> None:
        path: Optional[str] = None
        load_options: Dict[str, Any] = {}
        # The argument's type says which it is, never its content: a mapping
        # is the configuration (lmcp_host_new), a str or os.PathLike a
        # file's path (lmcp_host_new_file), "{x}.json" included.
        if (only is not None or stdio is not None) and isinstance(config_or_path, Mapping):
            raise TypeError("only= and stdio=: take a config file given by its path")
        config: Dict[str, Any]
        if not isinstance(config_or_path, Mapping):
            # An application's config file: read by the library, which names
            # the file in every message; config is what is laid over it.
            path = os.fspath(config_or_path)
            config = {}
            if tool_prefix != "always":
                config["tool_prefix"] = tool_prefix
            load_options = {"strict": strict, "inputs": inputs, "workspace_folder": workspace_folder, "start": start, "only": only,
                            "stdio": stdio}
        else:
            config = dict(config_or_path)
            if tool_prefix != "always" or "tool_prefix" not in config:
                config["tool_prefix"] = tool_prefix
            if strict:
                config["strict"] = True
            if start is not None:
                config["start"] = start
        if "on_request" in options:
            raise TypeError(
                "on_request: a Host takes the Client's handler keywords instead "
                "(sampling=, elicitation=, roots=, ...; params.server names the server)"
            )
        if "token_store" in options:
            raise TypeError(TOKEN_STORE_RETIRED)
        if "pin_store" in options:
            raise TypeError(
                'pin_store= is retired: write "pins": {"store": {"type": "app"}} and give store=(load, save), '
                "which answers store_load / store_save (docs/migrating.md)"
            )
        callbacks = Callbacks(**{k: options.pop(k) for k in CALLBACK_KEYWORDS if k in options})
        for key, value in options.items():
            dumps(value, key)  # a misspelt callback keyword is named here; the library judges the rest
        config.update(options)
        kinds = callbacks.kinds()
        if kinds:
            # Every server may ask what the host answers.
            defaults = config.get("defaults")
            defaults = dict(defaults) if isinstance(defaults, Mapping) else {}
            declare_handlers(defaults, kinds)
            config["defaults"] = defaults
        self.ready_timeout = ready_timeout
        self._session = HostSession(config, callbacks, self._make_dispatcher(), path, load_options)
        #: The members of the configuration the host ignored, one line each
        #: (also logged as warnings on the ``lemonmcp`` logger).
        self.warnings: List[str] = _host_file.warnings_of(self._session.handle())
        _host_file.log_warnings(self.warnings)
        self._failures_logged: Set[str] = set()

    def _make_dispatcher(self) -> Dispatcher:
        return Dispatcher()

    @property
    def closed(self) -> bool:
        """True once close() ran."""
        return self._session.released

    def _json(self, fn: Any) -> Any:
        return self._session.json_of(fn)

    def _servers(self) -> Dict[str, Dict[str, Any]]:
        result: Dict[str, Dict[str, Any]] = self._json(lib.lmcp_host_servers)
        return result

    def _pins(self) -> Dict[str, Dict[str, Any]]:
        result: Dict[str, Dict[str, Any]] = self._json(lib.lmcp_host_pins)
        return result

    def _approve(self, server: str, name: Optional[str], hash: str, kind: str) -> None:  # noqa: A002 - the ABI's word
        self._session.approve(_pins.approval(server, name, hash, kind))

    def _not_ready(self, timeout: Optional[float]) -> TimeoutError:
        waiting = sorted(n for n, s in self._servers().items() if s.get("state") == "connecting")
        return TimeoutError(f"after {timeout:g} s, still connecting: {', '.join(waiting) or '(none)'}")

    # ------------------------------------------------------ request building

    def _options(self, options: Dict[str, Any]) -> Tuple[Dict[str, Any], Optional[ProgressHandler]]:
        """A call's keyword options: every one a client's call takes."""
        return request_options(options, self._session.callbacks.on_progress is not None)

    def _tool_req(self, name: str, arguments: Optional[Mapping[str, Any]], options: Dict[str, Any]) -> ToolRequest:
        if not isinstance(name, str) or not name:
            raise InvalidArgument("name: expected a tool name")
        if arguments is not None and not isinstance(arguments, Mapping):
            raise InvalidArgument(f"arguments: expected a dict, got {arguments!r}")
        return (name, arguments, *self._options(options))

    def _server_req(self, server: str, method: str, params: Optional[Mapping[str, Any]], options: Dict[str, Any]) -> ServerRequest:
        return (method, params, *self._options(options), self._check_server(server))

    def _span(self, req: Tuple[Any, ...]) -> Optional[_otel.CallSpan]:
        """The call's span when OpenTelemetry is importable: a tool call
        (``(name, arguments, options)``) is a ``tools/call`` whose server
        and tool's own name come from its telemetry record; a call to a
        named server (``(method, params, options, None, server)``) names it."""
        if not _otel.ENABLED:
            return None
        if len(req) > 4:
            return _otel.CallSpan(req, None, self._session, req[4])
        return _otel.CallSpan(req, None, self._session, described=("tools/call", {"name": req[0]}))

    @staticmethod
    def _check_server(server: str) -> str:
        if not isinstance(server, str) or not server:
            raise InvalidArgument("server: expected a server name")
        return server

    @staticmethod
    def _query_req(query: HostQuery, args: Optional[Mapping[str, Any]] = None) -> QueryRequest:
        """A query as the session's calls take it (see :class:`HostQuery`);
        its method is the query's name as a plain str."""
        return str(query), args, {}, None, query

    def _search_req(self, query: str, limit: Optional[int], servers: Optional[Sequence[str]]) -> QueryRequest:
        return self._query_req(SEARCH_TOOLS, search_args(query, limit, servers))

    # ------------------------------------------------------ result readers

    @staticmethod
    def _tools(doc: Any) -> List[HostTool]:
        return [HostTool.from_host_json(t) for t in doc.get("tools", [])]

    @staticmethod
    def _prompts(doc: Any) -> List[HostPrompt]:
        return _with_server(doc, "prompts", Prompt.from_json, HostPrompt)

    @staticmethod
    def _resources(doc: Any) -> List[HostResource]:
        return _with_server(doc, "resources", Resource.from_json, HostResource)


def _with_server(doc: Any, key: str, read: Callable[[Any], Any], make: Callable[..., _Item]) -> List[_Item]:
    """The entries of doc[key], each read as a client's entry and made into
    its host twin with ``server``."""
    return [make(**{**read(x).__dict__, "server": str(x.get("server", ""))}) for x in doc.get(key, [])]


class Host(HostBase):
    """Many named MCP servers from one ``mcpServers`` configuration.

    ``config_or_path`` is a dict (a JSON text: ``json.loads`` it), or the
    path (a str or ``os.PathLike``) of a config file
    as Claude Desktop, Claude Code, Cursor, VS Code, Cline, Roo Code or
    Windsurf write it: the library reads a path itself (messages name the
    file), ignores the members it does not use with one warning each, logged
    on the ``lemonmcp`` logger and kept in :attr:`warnings` (``strict=True``
    makes them errors), resolves ``${input:id}`` from ``inputs`` and
    ``${workspaceFolder}`` from ``workspace_folder`` (default: the file's
    project). ``start="lazy"`` starts each server on its first use;
    ``only=["name"]`` runs only those servers of the file, under the file's
    pins, filters and other host options; ``stdio={"env": {...}, "cwd":
    dir, "env_inherit": "all"}`` is laid over how each of them starts (a
    server reached by URL refuses it).
    ``tool_prefix``: ``"always"`` (``server__tool``), ``"on_collision"`` or
    ``"never"``; the file's own value is kept when the argument is left at
    its default. Other keyword options are top-level host fields
    (``defaults={...}``) and the callbacks of :class:`lemonmcp.Client`:
    ``on_event(kind, payload)`` (every server's events, with
    ``payload["server"]``, and "list_changed"), ``on_log``,
    ``on_notification``, ``on_progress``, ``on_closed``; and the handlers of
    the servers' requests, ``sampling(params)``, ``elicitation(params)``,
    ``roots`` (a list, or a callable), ``review``, ``authorize``: each is
    declared under ``defaults.handlers`` so every server may ask, and
    ``params.server`` names the server that asked (see
    :class:`RequestParams`). ``store``: the application's store, for every
    store ``{"type": "app"}`` (``"pins": {"store": {"type": "app"}}``, a
    server's ``auth.token_store``): an object with ``load(collection, key)
    -> (document, version) | None`` and ``save(collection, key,
    expected_version, document) -> version | StoreConflict(document,
    version)``, or a ``(load, save)`` pair, answering ``store_load`` and
    ``store_save`` (each may return an awaitable; it must not wait for
    :meth:`pins` or :meth:`approve` of the same host). As for a client, event callbacks run on a
    library thread, each app request on a thread of its own; what a
    callback raises is logged (logger "lemonmcp") and a handler's exception
    becomes an error reply to the server.

    Entering the context connects and waits up to ``ready_timeout`` seconds
    for every server to be ready or to fail; leaving it closes and frees.
    A host that is never closed is freed when it is garbage collected.
    """

    # ------------------------------------------------------------ lifecycle

    def connect(self) -> "Host":
        """Start every enabled server in parallel (returns once started)."""
        self._session.connect()
        return self

    def wait_ready(self, timeout: Optional[float] = None) -> None:
        """Wait until every enabled server is ready or has failed once
        (:class:`TimeoutError` names those still connecting). Ctrl-C
        interrupts the wait. Each server that failed is logged once as a
        warning saying why; when every enabled server failed, the first
        one's error is raised (after the warnings)."""
        sess = self._session
        try:
            sess.wait_sliced(
                sess.wait_ready_slice,
                timeout,
                lambda: True,
                lambda: self._not_ready(timeout),
            )
        except TimeoutError:
            raise
        except LemonMCPError:
            _host_file.log_failed(self.servers, self._failures_logged)
            raise
        _host_file.log_failed(self.servers, self._failures_logged)

    def __enter__(self) -> "Host":
        try:
            if not self._session.connected:
                self.connect()
            self.wait_ready(self.ready_timeout)
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self, timeout: Optional[float] = None) -> None:
        """Close every server (processes reaped) and release the host.
        Idempotent."""
        sess = self._session
        if sess.released:
            return
        try:
            # The front sessions end before the servers (a host never
            # served has not loaded _serve, nor asyncio with it).
            served = sys.modules.get(__package__ + "._serve")
            if served is not None:
                served.stop_served(self)
            sess.close_started(wait_ms(timeout))
        finally:
            sess.release()

    # ------------------------------------------------------------- queries

    def tool_route(self, name: str) -> Optional[Tuple[str, str]]:
        """(server, the server's own name of the tool) that
        :meth:`call_tool` sends ``name`` to, when the library knows it
        without asking a server (from the last :meth:`list_tools`, or the
        ``server__`` prefix, read against that server's last list: a held
        tool's name included); None when only the lists would tell;
        InvalidArgument naming both when the name is the host's name of two
        tools of the server. Never blocks, starts nothing."""
        if not isinstance(name, str) or not name:
            raise InvalidArgument("name: expected a tool name")
        try:
            route = self._session.tool_route(name)
        except NotFound:
            return None
        return str(route["server"]), str(route["original_name"])

    def servers(self) -> Dict[str, Dict[str, Any]]:
        """Each server: {"state", "restarts", "enabled", "start"?, "era"?,
        "protocol_version"?, "transport"?, and when not ready "last_error"?,
        "cause"?, "exit_code"?, "signal"?, "stderr_tail"?, "durations"? (its
        per-method call-duration histograms, kept once an OpenTelemetry SDK
        is installed: docs/telemetry.md)}. Never blocks."""
        return self._servers()

    def pins(self) -> Dict[str, Dict[str, Any]]:
        """With the host option ``"pins"``, each server's pinned
        definitions: ``{server: {"instructions": {..}, "tools": {name:
        {"status", "hash", "pinned_hash"?, "findings", "held"?, "reason"?,
        "offered"?, "pinned"?}}, "prompts": {..}, "resources": {..}}}``
        (lmcp_host_pins; docs/host.md). Lists every ready server first, so
        it may block while a stale list is fetched. Raises InvalidState
        without "pins"."""
        return self._pins()

    def approve(self, server: str, name: Optional[str] = None, *, hash: str, kind: str = "tool") -> None:  # noqa: A002
        """Pins exactly ``hash`` for the ``kind`` ("tool", "prompt",
        "resource", "instructions": no name) ``name`` of ``server``, as
        :meth:`pins` or a ``definition_changed`` event showed it
        (lmcp_host_approve). Raises InvalidState when the server no longer
        offers that hash: an approval is bound to what was shown."""
        self._approve(server, name, hash, kind)

    def list_tools(self) -> List[HostTool]:
        """Every ready server's tools, named by ``tool_prefix``. Blocks
        while a stale list is fetched; Ctrl-C interrupts the wait."""
        return self._tools(self._session.call_blocking(*self._query_req(LIST_TOOLS)))

    def list_prompts(self) -> List[HostPrompt]:
        """Every ready server's prompts, each with ``.server``."""
        return self._prompts(self._session.call_blocking(*self._query_req(LIST_PROMPTS)))

    def list_resources(self) -> List[HostResource]:
        """Every ready server's resources, each with ``.server``."""
        return self._resources(self._session.call_blocking(*self._query_req(LIST_RESOURCES)))

    def search_tools(
        self, query: str, *, limit: Optional[int] = None, servers: Optional[Sequence[str]] = None
    ) -> List[ToolSearchResult]:
        """Rank every ready server's tools against ``query`` (a few words:
        "create a github issue"): at most ``limit`` (default 10, at most 100)
        results, best first, only ``servers``' tools when given. Each result's
        ``name`` is callable with :meth:`call_tool`. An empty query, one of
        only common words, or a bad option raises :class:`InvalidArgument`; an
        unknown server :class:`NotFound`."""
        return parse_results(self._session.call_blocking(*self._search_req(query, limit, servers)))

    # --------------------------------------------------------------- calls

    def call_tool(self, name: str, arguments: Optional[Mapping[str, Any]] = None, **options: Any) -> CallToolResult:
        """Call a tool by the name :meth:`list_tools` gives it. ``options``
        are those of :meth:`lemonmcp.Client.call_tool` (``timeout``,
        ``progress``, ``meta``, ``trace``, ``task``, ...; see
        :func:`lemonmcp.call_options`), and ``fail_if_restarting`` fails the
        call at once while its server restarts. Ctrl-C cancels the call and
        raises KeyboardInterrupt."""
        return CallToolResult.from_json(self._run(self._tool_req(name, arguments, options)))

    def call(self, server: str, method: str, params: Optional[Mapping[str, Any]] = None, **options: Any) -> Any:
        """Send any request to one named server; returns the result JSON.
        ``options`` as for :meth:`call_tool`."""
        return self._run(self._server_req(server, method, params, options))

    def _run(self, req: Tuple[Any, ...]) -> Any:
        return _otel.traced(req, self._span(req), self._session.call_blocking)

    # ------------------------------------------------------------- serving

    def serve(self, *, fds: Optional[Tuple[int, int]] = None, http: Optional[str] = None, **options: Any) -> "_serve.Server":
        """Serve this host as one MCP server (docs/gateway.md): over stdio
        on ``fds`` (read, write; default: this process's stdin and stdout),
        or over Streamable HTTP at ``http`` ("127.0.0.1:0" picks a port;
        the returned server's ``url`` says which). Returns once serving;
        ``options`` are the library's serving options (authentication,
        sessions: docs/gateway.md), passed as they are. Each front client's
        sampling, elicitation and roots are its own: a server's request
        goes to the front session whose call caused it, when the host lets
        its servers ask (``defaults={"handlers":
        lemonmcp.RELAYED_HANDLERS}`` at construction). While served,
        the host's own event and request callbacks are the gateway's."""
        from . import _serve

        return _serve.serve(self, fds, http, options)
