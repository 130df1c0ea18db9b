"""The blocking client."""

from __future__ import annotations

from types import TracebackType
from typing import Any, Mapping, Optional, Type, Union

from . import _otel, types  # types: lemonmcp.types, the typed results (TracebackType is the stdlib's)
from ._base import (
    ClientBase,
    Request,
    read_complete_result,
    read_prompt_result,
    read_resource_result,
    read_tool_result,
)

__all__ = ["Client"]

class Client(ClientBase):
    """A blocking MCP client: one connection to one server.

    Create it with :meth:`stdio`, :meth:`http`, :meth:`sse` or
    ``Client(config_dict, **options)``. As a context manager it connects and
    waits until the server is ready, and closes on exit::

        with Client.stdio("my-server", ["--flag"]) as c:
            print(c.call_tool("echo", {"text": "hi"}).text)

    Keyword options (every field of the C configuration):
    ``client_info``, ``protocol``, ``timeouts``, ``limits``, ``handlers``,
    ``sampling_policy``, ``capabilities``, ``result_format`` as dicts, or
    flat: ``client_name``, ``client_version``, ``client_title``,
    ``protocol_mode``, ``protocol_versions``, ``ready_ms``, ``call_ms``,
    ``max_total_ms``, ``reset_timeout_on_progress``, ``app_request_ms``,
    ``close_grace_ms``, ``max_message_bytes``, ``max_pages``,
    ``sampling_mode``, ``sampling_max_tokens``, ``sampling_allowed_models``,
    ``sampling_max_messages``, ``sampling_max_text_chars``, and in seconds
    ``ready_timeout``, ``call_timeout``, ``close_grace``,
    ``app_request_timeout``.

    Callbacks (plain callables; event callbacks run on library threads):
    ``on_notification(Notification)``, ``on_log(LogRecord)``,
    ``on_progress(Progress)``, ``on_closed(Closed)``,
    ``on_sampling_denied(payload)``, ``on_event(kind, payload)``; host
    requests (each on a thread of its own) ``roots`` (a list, or a callable
    returning one), ``sampling(params) -> result``, ``elicitation(params) ->
    result``, ``review({"summary", "server"}) -> bool | (bool, reason) |
    {"approved": ...}`` (for ``sampling_policy`` mode "reviewed_model").
    A host handler may return a ``concurrent.futures.Future`` to answer later;
    an exception becomes an error reply to the server (raise
    ``PolicyDenied``/``ProtocolError(code=...)`` to choose the error).

    OAuth (HTTP transports): ``auth`` (a dict, see
    :func:`lemonmcp.auth_config`) configures the library's OAuth 2.1 client;
    ``authorize(request) -> {"redirect_url": ...} | {"code", "state",
    "iss"?} | redirect URL string`` runs the browser step of the
    authorization code flow (it adds ``handlers.authorization``; open
    ``request["authorization_url"]`` and report where the authorization
    server redirected); ``store`` (``load(collection, key) -> (document,
    version) | None`` and ``save(collection, key, expected_version,
    document) -> version | StoreConflict(document, version)``, an object or
    a ``(load, save)`` pair) is the application's store, which
    ``auth.token_store`` ``{"type": "app"}`` keeps the grant in (processes
    sharing it share the grant); a failed load or save fails the refresh.
    What these raise is never shown or logged (only the exception's type):
    it may hold a secret. A server that needs authorization the library could not get
    fails with ``AuthRequired``, whose ``metadata`` is what discovery found.

    Per-call options (every method): ``timeout`` (seconds) or
    ``timeout_ms``, ``reset_timeout_on_progress``, ``max_total``/
    ``max_total_ms``, ``progress`` (a callable receiving this call's
    Progress events, or True), ``wait_ready``, ``meta`` (merged into
    ``_meta``).
    """

    # ------------------------------------------------------ lifecycle

    def connect(self) -> None:
        """Start the transport and the handshake; returns at once."""
        self._session.connect()

    def wait_ready(self, timeout: Optional[float] = None) -> types.ServerInfo:
        """Block until the server is ready (or the handshake fails: the
        library's error is raised). ``timeout`` in seconds; None waits as long
        as the configuration's ``timeouts.ready_ms``."""
        return self._session.wait_ready_blocking(timeout)

    def open(self, timeout: Optional[float] = None) -> types.ServerInfo:
        """connect() then wait_ready(); on failure the client is closed."""
        try:
            self.connect()
            return self.wait_ready(timeout)
        except BaseException:
            self.close()
            raise

    def close(self, timeout: Optional[float] = None) -> None:
        """Shut down gracefully (pending calls fail with ClosedError, a stdio
        server is stopped and reaped) and free the handle. Idempotent.
        ``timeout`` bounds the wait, in seconds (teardown then goes on in the
        background)."""
        self._session.close_blocking(timeout)

    def __enter__(self) -> "Client":
        state = self.state
        if state == "new":
            self.open()
        elif state == "connecting":
            try:
                self.wait_ready()
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

    # ------------------------------------------------------ the generic call

    def call(self, method: str, params: Optional[Mapping[str, Any]] = None, **options: Any) -> Any:
        """Send any request and return its raw result (a dict).

        Blocks, but Ctrl-C cancels the call (the server is told) and raises
        KeyboardInterrupt; the client stays usable."""
        opts, handler = self._options(dict(options))
        return self._run((method, params, opts, handler))

    def _run(self, req: Request) -> Any:
        # See HandleSession.call_blocking: the calling thread waits in poll()
        # on its completion queue, so Ctrl-C interrupts it.
        if not _otel.ENABLED:
            return self._session.call_blocking(*req)
        return _otel.traced(req, self._span(req), self._session.call_blocking)

    # ------------------------------------------------------ typed helpers

    def list_tools(self, cursor: Optional[str] = None, *, all_pages: Optional[bool] = None, **options: Any) -> types.Page[types.Tool]:
        """tools/list: every tool (or one page with ``all_pages=False``)."""
        return self._tools(self._run(self._list_req("tools/list", cursor, all_pages, options)))

    def call_tool(self, name: str, arguments: Optional[Mapping[str, Any]] = None, **options: Any) -> types.CallToolResult:
        """tools/call. A result with ``is_error`` is returned, not raised."""
        return read_tool_result(self._run(self._tool_req(name, arguments, options)))

    def list_resources(
        self, cursor: Optional[str] = None, *, all_pages: Optional[bool] = None, **options: Any
    ) -> types.Page[types.Resource]:
        return self._resources(self._run(self._list_req("resources/list", cursor, all_pages, options)))

    def list_resource_templates(
        self, cursor: Optional[str] = None, *, all_pages: Optional[bool] = None, **options: Any
    ) -> types.Page[types.ResourceTemplate]:
        return self._templates(self._run(self._list_req("resources/templates/list", cursor, all_pages, options)))

    def read_resource(self, uri: str, **options: Any) -> types.ReadResourceResult:
        """resources/read. ``verify={"digest": ..., "size": ..., "frontmatter":
        {...}}`` has the library check the content first (see
        :func:`lemonmcp.call_options`): a mismatch raises ``ProtocolError``."""
        return read_resource_result(self._run(self._uri_req("resources/read", uri, options)))

    def subscribe(self, uri: str, **options: Any) -> None:
        """resources/subscribe: updates arrive as notifications."""
        self._run(self._uri_req("resources/subscribe", uri, options))

    def unsubscribe(self, uri: str, **options: Any) -> None:
        self._run(self._uri_req("resources/unsubscribe", uri, options))

    def list_prompts(self, cursor: Optional[str] = None, *, all_pages: Optional[bool] = None, **options: Any) -> types.Page[types.Prompt]:
        return self._prompts(self._run(self._list_req("prompts/list", cursor, all_pages, options)))

    def get_prompt(self, name: str, arguments: Optional[Mapping[str, str]] = None, **options: Any) -> types.GetPromptResult:
        return read_prompt_result(self._run(self._prompt_req(name, arguments, options)))

    def complete(
        self,
        ref: Union[str, Mapping[str, Any]],
        argument: str,
        value: str,
        *,
        context: Optional[Mapping[str, str]] = None,
        **options: Any,
    ) -> types.CompleteResult:
        """completion/complete. ``ref`` is a prompt name, a resource (template)
        URI, or a ref object."""
        return read_complete_result(self._run(self._complete_req(ref, argument, value, context, options)))

    def set_logging_level(self, level: str, **options: Any) -> None:
        """logging/setLevel; the server's log messages arrive as
        "notifications/message" notifications."""
        self._run(self._level_req(level, options))

    def ping(self, **options: Any) -> None:
        self._run(self._req("ping", None, options))
