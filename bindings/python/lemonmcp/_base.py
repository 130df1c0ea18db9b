"""What the blocking and the asyncio client share: construction from a
configuration, the transport constructors, state, and the pure halves of the
typed helpers (building a request, reading its result)."""

from __future__ import annotations

import os
from typing import Any, Callable, Dict, Mapping, Optional, Sequence, Tuple, Type, TypeVar, Union

from . import _ffi, _otel
from ._config import build_config, call_options, http_transport, stdio_transport
from ._dispatch import Callbacks, Dispatcher, ProgressHandler, normalize_roots
from ._session import Session
from .errors import InvalidArgument, InvalidState
from .types import (
    CallToolResult,
    Closed,
    CompleteResult,
    GetPromptResult,
    Page,
    Prompt,
    ReadResourceResult,
    Resource,
    ResourceTemplate,
    ServerInfo,
    Tool,
)

__all__ = ["ClientBase", "CALLBACK_KEYWORDS", "LOG_LEVELS", "TOKEN_STORE_RETIRED", "request_options"]

_C = TypeVar("_C", bound="ClientBase")
_T = TypeVar("_T")

#: Keyword arguments that are callbacks rather than configuration.
CALLBACK_KEYWORDS = (
    "on_notification",
    "on_log",
    "on_progress",
    "on_closed",
    "on_event",
    "roots",
    "sampling",
    "elicitation",
    "review",
    "on_sampling_denied",
    "authorize",
    "store",
)

#: What token_store= (an earlier release's) is now, for its refusal.
TOKEN_STORE_RETIRED = (
    'token_store= is retired: write auth.token_store {"type": "app"} and give store=(load, save), '
    "which answers store_load / store_save (docs/migrating.md)"
)

#: logging/setLevel levels (RFC 5424 names, as MCP uses them).
LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")

_CALL_OPTION_KEYS = (
    "timeout",
    "timeout_ms",
    "reset_timeout_on_progress",
    "max_total_ms",
    "max_total",
    "all_pages",
    "progress",
    "wait_ready",
    "meta",
    "verify",
    "no_cache",
    "task",
    "trace",
    "fail_if_restarting",
)

Request = Tuple[str, Optional[Mapping[str, Any]], Dict[str, Any], Optional[ProgressHandler]]


def request_options(options: Dict[str, Any], on_progress: bool) -> Tuple[Dict[str, Any], Optional[ProgressHandler]]:
    """A call's keyword options (``_CALL_OPTION_KEYS``, the same for a
    client's and a host's calls) as the library's options object, and the
    call's own progress callable if ``progress`` is one. ``on_progress``:
    the client or host has an ``on_progress`` callback, which wants every
    call's progress."""
    if not options and not on_progress:
        return {}, None  # the common case, kept cheap
    for key in options:
        if key not in _CALL_OPTION_KEYS:
            raise TypeError(f"unexpected keyword argument {key!r}")
    progress = options.pop("progress", None)
    handler: Optional[ProgressHandler] = None
    if callable(progress):
        handler = progress
        options["progress"] = True
    elif progress is not None:
        options["progress"] = progress
    elif on_progress:
        options["progress"] = True
    return call_options(**options), handler


class ClientBase:
    """Shared by :class:`lemonmcp.Client` and :class:`lemonmcp.AsyncClient`."""

    def __init__(self, config: Mapping[str, Any], **options: Any) -> None:
        if "token_store" in options:
            raise TypeError(TOKEN_STORE_RETIRED)
        cb_args = {k: options.pop(k) for k in CALLBACK_KEYWORDS if k in options}
        callbacks = Callbacks(**cb_args)
        cfg = build_config(base=config, handler_kinds=callbacks.kinds(), **options)
        self._session = Session(cfg, callbacks, self._make_dispatcher())

    def _make_dispatcher(self) -> Dispatcher:
        return Dispatcher()

    # ------------------------------------------------------ constructors

    @classmethod
    def stdio(
        cls: Type[_C],
        command: Union[str, "os.PathLike[str]"],
        args: Sequence[Union[str, "os.PathLike[str]"]] = (),
        *,
        env: Optional[Mapping[str, str]] = None,
        env_inherit: Optional[str] = None,
        cwd: Optional[Union[str, "os.PathLike[str]"]] = None,
        stderr: Optional[str] = "capture",
        **options: Any,
    ) -> _C:
        """A client for a server run as a subprocess speaking over stdio.

        ``command`` is run without a shell (looked up on PATH when it has no
        "/"), with ``args``. ``env`` adds variables to the inherited ones
        (``env_inherit``: "minimal" [default] or "all"). ``stderr``:
        "capture" (log events), "merge" or "discard". Other keyword
        arguments are configuration fields and callbacks (see the class).
        """
        t = stdio_transport(command, args, env=env, env_inherit=env_inherit, cwd=cwd, stderr=stderr)
        return cls({"transport": t}, **options)

    @classmethod
    def http(
        cls: Type[_C],
        url: str,
        headers: Optional[Mapping[str, str]] = None,
        *,
        fallback_sse: bool = True,
        **options: Any,
    ) -> _C:
        """A client for a Streamable HTTP server; with ``fallback_sse`` (the
        default) a server that only speaks the legacy HTTP+SSE transport works
        too (transport type "http")."""
        kind = "http" if fallback_sse else "streamable_http"
        return cls({"transport": http_transport(url, headers, type=kind)}, **options)

    @classmethod
    def sse(cls: Type[_C], url: str, headers: Optional[Mapping[str, str]] = None, **options: Any) -> _C:
        """A client for a server on the legacy HTTP+SSE transport."""
        return cls({"transport": http_transport(url, headers, type="sse")}, **options)

    # ------------------------------------------------------ state

    @property
    def config(self) -> Dict[str, Any]:
        """The configuration given to the library (a copy)."""
        return dict(self._session.config)

    @property
    def state(self) -> str:
        """"new", "connecting", "ready", "closing", "closed" or "failed"."""
        return _ffi.STATE_NAMES.get(self._session.state(), "unknown")

    @property
    def closed(self) -> bool:
        """True once close() ran or the handle was freed."""
        return self._session.released

    @property
    def closed_info(self) -> Optional[Closed]:
        """The "closed" event (reason, exit code, stderr tail), once it came."""
        return self._session.closed

    @property
    def server_info(self) -> ServerInfo:
        """What the handshake learned (server name/version/title,
        capabilities, instructions, protocol version, transport). Raises
        InvalidState before the client is ready."""
        info = self._session.server_info
        if info is not None:
            return info
        if self._session.released:
            raise InvalidState("the client was closed before it was ready")
        return self._session.fetch_server_info()

    def __repr__(self) -> str:
        t = self._session.config.get("transport", {})
        where = t.get("command") or t.get("url") or "?"
        return f"<{type(self).__module__.split('.')[0]}.{type(self).__name__} {t.get('type', '?')} {where!r} {self.state}>"

    # ------------------------------------------------------ small sync parts

    def cancel(self, call_id: int) -> bool:
        """Cancel an accepted call by id (e.g. from a Progress event); its
        caller gets Cancelled. False when the call already finished."""
        return self._session.cancel(call_id)

    def notify(self, method: str, params: Optional[Mapping[str, Any]] = None) -> None:
        """Send a notification to the server."""
        self._session.notify(method, params)

    def set_roots(self, roots: Sequence[Any]) -> None:
        """Replace the roots answered to roots/list and tell a legacy-era
        server (notifications/roots/list_changed) when connected; a
        2026-07-28 server asks for roots with each request that needs them,
        so there is nothing to tell it."""
        cb = self._session.callbacks
        if cb.roots_list is None and cb.roots_fn is None:
            raise InvalidState("roots: the client was created without roots; pass roots=[...] to the constructor")
        cb.roots_list = normalize_roots(roots, "roots")
        cb.roots_fn = None
        if self._session.state() == _ffi.STATE_READY and self.server_info.era != "modern":
            self._session.notify("notifications/roots/list_changed", None)

    # ------------------------------------------------------ request building

    def _span(self, req: Request) -> _otel.CallSpan:
        """A call's span, naming the protocol version (none before the
        handshake)."""
        info = self._session.server_info
        return _otel.CallSpan(req, info.protocol_version if info is not None else None, self._session)

    def _options(self, options: Dict[str, Any]) -> Tuple[Dict[str, Any], Optional[ProgressHandler]]:
        return request_options(options, self._session.callbacks.on_progress is not None)

    def _req(self, method: str, params: Optional[Dict[str, Any]], options: Dict[str, Any]) -> Request:
        opts, handler = self._options(options)
        return method, params, opts, handler

    def _list_req(self, method: str, cursor: Optional[str], all_pages: Optional[bool], options: Dict[str, Any]) -> Request:
        params: Optional[Dict[str, Any]] = None
        if cursor is not None:
            if not isinstance(cursor, str):
                raise InvalidArgument(f"cursor: expected a string, got {cursor!r}")
            params = {"cursor": cursor}
        if all_pages is None:
            all_pages = cursor is None
        options["all_pages"] = all_pages
        return self._req(method, params, options)

    @staticmethod
    def _page(raw: Any, key: str, make: Callable[[Any], _T]) -> Page[_T]:
        r = raw if isinstance(raw, dict) else {}
        items = r.get(key)
        cursor = r.get("nextCursor")
        return Page(
            [make(x) for x in items] if isinstance(items, list) else [],
            cursor if isinstance(cursor, str) and cursor else None,
            r,
        )

    def _tool_req(self, name: str, arguments: Optional[Mapping[str, Any]], options: Dict[str, Any]) -> Request:
        if not isinstance(name, str) or not name:
            raise InvalidArgument("name: expected a tool name")
        params: Dict[str, Any] = {"name": name}
        if type(arguments) is dict:  # the common case: encoded before this returns, no copy needed
            params["arguments"] = arguments
        elif arguments is not None:
            if not isinstance(arguments, Mapping):
                raise InvalidArgument(f"arguments: expected a dict, got {arguments!r}")
            params["arguments"] = dict(arguments)
        return self._req("tools/call", params, options)

    def _uri_req(self, method: str, uri: str, options: Dict[str, Any]) -> Request:
        if not isinstance(uri, str) or not uri:
            raise InvalidArgument("uri: expected a URI string")
        return self._req(method, {"uri": uri}, options)

    def _prompt_req(self, name: str, arguments: Optional[Mapping[str, str]], options: Dict[str, Any]) -> Request:
        if not isinstance(name, str) or not name:
            raise InvalidArgument("name: expected a prompt name")
        params: Dict[str, Any] = {"name": name}
        if arguments is not None:
            if not isinstance(arguments, Mapping):
                raise InvalidArgument(f"arguments: expected a dict of strings, got {arguments!r}")
            for k, v in arguments.items():
                if not isinstance(v, str):
                    raise InvalidArgument(f"arguments.{k}: prompt arguments are strings, got {v!r}")
            params["arguments"] = dict(arguments)
        return self._req("prompts/get", params, options)

    def _complete_req(
        self,
        ref: Union[str, Mapping[str, Any]],
        argument: str,
        value: str,
        context: Optional[Mapping[str, str]],
        options: Dict[str, Any],
    ) -> Request:
        if isinstance(ref, str):
            ref_obj: Dict[str, Any] = (
                {"type": "ref/resource", "uri": ref} if "://" in ref or "{" in ref else {"type": "ref/prompt", "name": ref}
            )
        elif isinstance(ref, Mapping):
            ref_obj = dict(ref)
        else:
            raise InvalidArgument(f"ref: expected a prompt name, a resource URI or a ref object, got {ref!r}")
        if not isinstance(argument, str) or not isinstance(value, str):
            raise InvalidArgument("argument: expected the argument's name and value as strings")
        params: Dict[str, Any] = {"ref": ref_obj, "argument": {"name": argument, "value": value}}
        if context is not None:
            params["context"] = {"arguments": dict(context)}
        return self._req("completion/complete", params, options)

    def _level_req(self, level: str, options: Dict[str, Any]) -> Request:
        if level not in LOG_LEVELS:
            raise InvalidArgument(f"level: expected one of {', '.join(LOG_LEVELS)}, got {level!r}")
        return self._req("logging/setLevel", {"level": level}, options)

    # result readers
    def _tools(self, raw: Any) -> Page[Tool]:
        return self._page(raw, "tools", Tool.from_json)

    def _resources(self, raw: Any) -> Page[Resource]:
        return self._page(raw, "resources", Resource.from_json)

    def _templates(self, raw: Any) -> Page[ResourceTemplate]:
        return self._page(raw, "resourceTemplates", ResourceTemplate.from_json)

    def _prompts(self, raw: Any) -> Page[Prompt]:
        return self._page(raw, "prompts", Prompt.from_json)


# re-exported result readers, for symmetry in the subclasses
read_tool_result = CallToolResult.from_json
read_resource_result = ReadResourceResult.from_json
read_prompt_result = GetPromptResult.from_json
read_complete_result = CompleteResult.from_json

