"""The asyncio host: :class:`lemonmcp.Host` with coroutines.

    async with lemonmcp.aio.AsyncHost("mcp.json") as host:
        tools = await host.list_tools()
        result = await host.call_tool("files__read_file", {"path": "/tmp/x"})

Calls complete through the loop's completion queue and waits sleep on the
loop until the host's events wake them, as for
:class:`lemonmcp.aio.AsyncClient` (``_loop``): no executor thread is used.
Callbacks and handlers run on the loop and may be coroutine functions.
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from ._dispatch import Dispatcher, LoopDispatcher
from ._ffi import lib
from ._loop import LoopCaller
from .errors import TimeoutError
from .host import HostBase, HostPrompt, HostResource, HostTool, ToolSearchResult
from .types import CallToolResult

__all__ = ["AsyncHost"]


class AsyncHost(HostBase):
    """``AsyncHost(config_or_path, tool_prefix="always", **options)``: the
    arguments of :class:`lemonmcp.Host`.

    The lists (:meth:`list_tools`, ...) are the library's cached lists; a
    list that is stale (after list_changed or a restart) is fetched again
    inside the call, on the loop's thread."""

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
        """Wait until every enabled server is ready or has failed once."""
        sess = self._session
        await self._caller.wait_until(sess.settled, timeout, lambda: self._not_ready(timeout))

    async def close(self, timeout: Optional[float] = None) -> None:
        """Close every server and release the host: the close starts at
        once, and the loop waits (up to ``timeout`` seconds, None: 10 s)
        until every server reported it closed."""
        sess = self._session
        if sess.released:
            return
        try:
            if not sess.close_started(0):
                wait = 10.0 if timeout is None else timeout
                try:
                    await self._caller.wait_until(lambda: not sess.closing(), wait, lambda: TimeoutError())
                except TimeoutError:
                    pass  # teardown goes on in the background
        finally:
            sess.release()

    async def servers(self) -> Dict[str, Dict[str, Any]]:
        """As :meth:`lemonmcp.Host.servers`."""
        return self._servers()

    async def list_tools(self) -> List[HostTool]:
        return self._tools(self._json(lib.lmcp_host_list_tools))

    async def search_tools(
        self, query: str, *, limit: Optional[int] = None, servers: Optional[Sequence[str]] = None
    ) -> List[ToolSearchResult]:
        """As :meth:`lemonmcp.Host.search_tools`."""
        return self._search(query, limit, servers)

    async def list_prompts(self) -> List[HostPrompt]:
        return self._prompts(self._json(lib.lmcp_host_list_prompts))

    async def list_resources(self) -> List[HostResource]:
        return self._resources(self._json(lib.lmcp_host_list_resources))

    async def call_tool(
        self,
        name: str,
        arguments: Optional[Mapping[str, Any]] = None,
        *,
        timeout: Optional[float] = None,
        fail_if_restarting: bool = False,
    ) -> CallToolResult:
        return CallToolResult.from_json(await self._run(self._tool_req(name, arguments, timeout, fail_if_restarting)))

    async def call(self, server: str, method: str, params: Optional[Mapping[str, Any]] = None, *, timeout: Optional[float] = None) -> Any:
        opts = self._call_options(timeout, False)
        return await self._run((method, params, opts, None, self._check_server(server)))

    async def _run(self, req: Tuple[Any, ...]) -> Any:
        span = self._span(req)
        if span is None:
            return await self._caller.run(*req)
        with span as traced:
            result = await self._caller.run(*traced)
            span.result(result)
        return result
