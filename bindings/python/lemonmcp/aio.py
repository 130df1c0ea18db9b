"""The asyncio client."""

from __future__ import annotations

import asyncio
from types import TracebackType
from typing import Any, Mapping, Optional, Type, Union

from . import _ffi, _otel, types  # types: lemonmcp.types, the typed results (TracebackType is the stdlib's)
from ._base import (
    ClientBase,
    Request,
    read_complete_result,
    read_prompt_result,
    read_resource_result,
    read_tool_result,
)
from ._dispatch import Dispatcher, LoopDispatcher
from ._loop import LoopCaller
from .errors import TimeoutError

__all__ = ["AsyncClient"]


class AsyncClient(ClientBase):
    """The asyncio twin of :class:`lemonmcp.Client`: the same constructors,
    options and helpers, as coroutines. Completions resolve futures on the
    loop that awaits them: they wait in the loop's completion queue, whose
    descriptor the loop watches (``add_reader``), so any number of calls can
    be in flight at once and a burst of completions costs one wake-up::

        async with AsyncClient.stdio("my-server") as c:
            results = await asyncio.gather(*(c.call_tool("echo", {"text": str(i)}) for i in range(100)))

    Callbacks run on that loop; a callback (or host handler) may be a
    coroutine function, or return an awaitable, to answer later. Cancelling a
    task awaiting a call cancels the call.
    """

    _dispatcher: LoopDispatcher

    def __init__(self, config: Mapping[str, Any], **options: Any) -> None:
        super().__init__(config, **options)
        self._caller = LoopCaller(self._session, self._dispatcher)

    def _make_dispatcher(self) -> Dispatcher:
        self._dispatcher = LoopDispatcher()
        return self._dispatcher

    # ------------------------------------------------------ lifecycle

    async def connect(self) -> None:
        """Start the transport and the handshake; returns at once."""
        self._caller.bind_loop()
        self._session.connect()

    async def wait_ready(self, timeout: Optional[float] = None) -> types.ServerInfo:
        """Wait until the server is ready (or raise the handshake's error)."""
        sess = self._session
        await self._caller.wait_until(
            lambda: sess.state() != _ffi.STATE_CONNECTING,
            timeout,
            lambda: TimeoutError(f"the server was not ready within {timeout:g} s"),
        )
        # Not connecting any more: the library says how it ended.
        sess.wait_ready_slice(0)
        return sess.fetch_server_info()

    async def open(self, timeout: Optional[float] = None) -> types.ServerInfo:
        """connect() then wait_ready(); on failure the client is closed."""
        try:
            await self.connect()
            return await self.wait_ready(timeout)
        except BaseException:
            await self.close()
            raise

    async def close(self, timeout: Optional[float] = None) -> None:
        """Graceful shutdown (pending calls fail with ClosedError), then free.
        The blocking part runs in the loop's default executor."""
        if self._session.released:
            return
        # Not through the completion machinery: the library's close has no
        # form that completes later. lmcp_client_close blocks until the server
        # is gone (stdin closed, its close grace, then signals) or the
        # timeout passes, and a timeout of 0 does not start that in the
        # background: it cuts the grace short (the process group is killed at
        # once). An executor thread keeps the grace without blocking the loop.
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, self._session.close_blocking, timeout)

    async def __aenter__(self) -> "AsyncClient":
        state = self.state
        if state == "new":
            await self.open()
        elif state == "connecting":
            try:
                await self.wait_ready()
            except BaseException:
                await self.close()
                raise
        return self

    async def __aexit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        await self.close()

    # ------------------------------------------------------ the generic call

    async def call(self, method: str, params: Optional[Mapping[str, Any]] = None, **options: Any) -> Any:
        """Send any request and return its raw result (a dict)."""
        opts, handler = self._options(dict(options))
        return await self._run((method, params, opts, handler))

    async def _run(self, req: Request) -> Any:
        if not _otel.ENABLED:
            return await self._caller.run(*req)
        return await _otel.traced_async(req, self._span(req), self._caller.run)

    # ------------------------------------------------------ typed helpers

    async def list_tools(
        self, cursor: Optional[str] = None, *, all_pages: Optional[bool] = None, **options: Any
    ) -> types.Page[types.Tool]:
        return self._tools(await self._run(self._list_req("tools/list", cursor, all_pages, options)))

    async def call_tool(
        self, name: str, arguments: Optional[Mapping[str, Any]] = None, **options: Any
    ) -> types.CallToolResult:
        return read_tool_result(await self._run(self._tool_req(name, arguments, options)))

    async def list_resources(
        self, cursor: Optional[str] = None, *, all_pages: Optional[bool] = None, **options: Any
    ) -> types.Page[types.Resource]:
        return self._resources(await self._run(self._list_req("resources/list", cursor, all_pages, options)))

    async def list_resource_templates(
        self, cursor: Optional[str] = None, *, all_pages: Optional[bool] = None, **options: Any
    ) -> types.Page[types.ResourceTemplate]:
        return self._templates(
            await self._run(self._list_req("resources/templates/list", cursor, all_pages, options))
        )

    async def read_resource(self, uri: str, **options: Any) -> types.ReadResourceResult:
        """resources/read; ``verify`` as for :meth:`lemonmcp.Client.read_resource`."""
        return read_resource_result(await self._run(self._uri_req("resources/read", uri, options)))

    async def subscribe(self, uri: str, **options: Any) -> None:
        await self._run(self._uri_req("resources/subscribe", uri, options))

    async def unsubscribe(self, uri: str, **options: Any) -> None:
        await self._run(self._uri_req("resources/unsubscribe", uri, options))

    async def list_prompts(
        self, cursor: Optional[str] = None, *, all_pages: Optional[bool] = None, **options: Any
    ) -> types.Page[types.Prompt]:
        return self._prompts(await self._run(self._list_req("prompts/list", cursor, all_pages, options)))

    async def get_prompt(
        self, name: str, arguments: Optional[Mapping[str, str]] = None, **options: Any
    ) -> types.GetPromptResult:
        return read_prompt_result(await self._run(self._prompt_req(name, arguments, options)))

    async def complete(
        self,
        ref: Union[str, Mapping[str, Any]],
        argument: str,
        value: str,
        *,
        context: Optional[Mapping[str, str]] = None,
        **options: Any,
    ) -> types.CompleteResult:
        return read_complete_result(await self._run(self._complete_req(ref, argument, value, context, options)))

    async def set_logging_level(self, level: str, **options: Any) -> None:
        await self._run(self._level_req(level, options))

    async def ping(self, **options: Any) -> None:
        await self._run(self._req("ping", None, options))
from .aio_host import AsyncHost as AsyncHost  # noqa: E402  (the multi-server host)
