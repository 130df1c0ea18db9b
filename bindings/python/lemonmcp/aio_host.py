"""The asyncio host: :class:`lemonmcp.Host` with coroutines.

    async with lemonmcp.aio.AsyncHost("mcp.json") as host:
        tools = await host.list_tools()
        result = await host.call_tool("files__read_file", {"path": "/tmp/x"})

Calls complete through the loop's completion queue and waits sleep on the
loop until the host's events wake them, as for
:class:`lemonmcp.aio.AsyncClient` (``_loop``): no executor thread is used
but by :meth:`AsyncHost.close`, as by the Client's.
Callbacks and handlers run on the loop and may be coroutine functions.
"""

from __future__ import annotations

import asyncio
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from . import _host_file, _otel, _serve
from ._config import wait_ms
from ._dispatch import Dispatcher, LoopDispatcher
from ._loop import LoopCaller
from ._tool_search import parse_results
from .errors import TimeoutError
from .host import (
    LIST_PROMPTS,
    LIST_RESOURCES,
    LIST_TOOLS,
    HostBase,
    HostPrompt,
    HostResource,
    HostTool,
    ToolSearchResult,
)
from .types import CallToolResult

__all__ = ["AsyncHost"]


class AsyncHost(HostBase):
    """``AsyncHost(config_or_path, tool_prefix="always", **options)``: the
    arguments of :class:`lemonmcp.Host`.

    The lists (:meth:`list_tools`, ...) are the library's cached lists; a
    list that is stale (after list_changed or a restart) is fetched again
    by the library while the loop runs on."""

    _dispatcher: LoopDispatcher

    def __init__(self, config_or_path: Any, tool_prefix: str = "always", **options: Any) -> None:
        super().__init__(config_or_path, tool_prefix, **options)
        self._caller = LoopCaller(self._session, self._dispatcher)

    def _make_dispatcher(self) -> Dispatcher:
        self._dispatcher = LoopDispatcher()
        return self._dispatcher

    async def __aenter__(self) -> "AsyncHost":
        try:
            if not self._session.connected:
                await self.connect()
            await self.wait_ready(self.ready_timeout)
        except BaseException:
            await self.close()
            raise
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def connect(self) -> "AsyncHost":
        """Start every enabled server in parallel (returns once started)."""
        self._caller.bind_loop()
        self._session.connect()
        return self

    async def wait_ready(self, timeout: Optional[float] = None) -> None:
        """Wait until every enabled server is ready or has failed once. Each
        server that failed is logged once as a warning saying why, as by
        :meth:`lemonmcp.Host.wait_ready`."""
        sess = self._session
        await self._caller.wait_until(sess.settled, timeout, lambda: self._not_ready(timeout))
        # A failed server's exit report (status, last stderr lines) comes a
        # moment after the failure: wait for it on the loop, not in log_failed.
        def reported() -> bool:
            return not _host_file.exit_reports_pending(self._servers, self._failures_logged)

        try:
            await self._caller.wait_until(reported, _host_file.EXIT_REPORT_WAIT_S, TimeoutError)
        except TimeoutError:
            pass  # logged without it
        _host_file.log_failed(self._servers, self._failures_logged, wait_s=0)
        sess.wait_ready_slice(0)  # every enabled server failed: the first one's error

    async def close(self, timeout: Optional[float] = None) -> None:
        """Close every server (processes reaped) and release the host, as
        :meth:`lemonmcp.Host.close`; the blocking part runs in the loop's
        default executor."""
        sess = self._session
        if sess.released:
            return
        # Not on the loop: lmcp_host_close has no form that completes later,
        # and a timeout of 0 does not start the close in the background but
        # cuts every server's close grace short (its process group is killed
        # at once). An executor thread keeps the grace without blocking the
        # loop, as AsyncClient.close does.
        loop = asyncio.get_running_loop()
        try:
            if _serve.serving(self):  # a server's stop waits for its calls
                await loop.run_in_executor(None, _serve.stop_served, self)
            await loop.run_in_executor(None, sess.close_started, wait_ms(timeout))
        finally:
            sess.release()

    async def servers(self) -> Dict[str, Dict[str, Any]]:
        """As :meth:`lemonmcp.Host.servers`."""
        return self._servers()

    async def pins(self) -> Dict[str, Dict[str, Any]]:
        """As :meth:`lemonmcp.Host.pins` (in the loop's executor: it may
        fetch lists)."""
        return await asyncio.get_running_loop().run_in_executor(None, self._pins)

    async def approve(self, server: str, name: Optional[str] = None, *, hash: str, kind: str = "tool") -> None:  # noqa: A002
        """As :meth:`lemonmcp.Host.approve`."""
        self._approve(server, name, hash, kind)

    async def list_tools(self) -> List[HostTool]:
        return self._tools(await self._caller.run(*self._query_req(LIST_TOOLS)))

    async def search_tools(
        self, query: str, *, limit: Optional[int] = None, servers: Optional[Sequence[str]] = None
    ) -> List[ToolSearchResult]:
        """As :meth:`lemonmcp.Host.search_tools`."""
        return parse_results(await self._caller.run(*self._search_req(query, limit, servers)))

    async def list_prompts(self) -> List[HostPrompt]:
        return self._prompts(await self._caller.run(*self._query_req(LIST_PROMPTS)))

    async def list_resources(self) -> List[HostResource]:
        return self._resources(await self._caller.run(*self._query_req(LIST_RESOURCES)))

    async def call_tool(self, name: str, arguments: Optional[Mapping[str, Any]] = None, **options: Any) -> CallToolResult:
        """As :meth:`lemonmcp.Host.call_tool`, with the same options."""
        return CallToolResult.from_json(await self._run(self._tool_req(name, arguments, options)))

    async def call(self, server: str, method: str, params: Optional[Mapping[str, Any]] = None, **options: Any) -> Any:
        """As :meth:`lemonmcp.Host.call`."""
        return await self._run(self._server_req(server, method, params, options))

    async def _run(self, req: Tuple[Any, ...]) -> Any:
        return await _otel.traced_async(req, self._span(req), self._caller.run)

    async def serve(
        self, *, fds: Optional[Tuple[int, int]] = None, http: Optional[str] = None, **options: Any
    ) -> _serve.AsyncServer:
        """As :meth:`lemonmcp.Host.serve`; the server's waits run in the
        loop's executor."""
        return _serve.AsyncServer(_serve.serve(self, fds, http, options))
