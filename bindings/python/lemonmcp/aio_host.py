"""The asyncio host: :class:`lemonmcp.Host` with coroutines.

    async with lemonmcp.aio.AsyncHost("mcp.json") as host:
        tools = await host.list_tools()
        result = await host.call_tool("files__read_file", {"path": "/tmp/x"})

Each method runs the host's blocking call in the loop's default executor (the
library releases the GIL and bounds every wait), so the event loop never
blocks.
"""

from __future__ import annotations

import asyncio
import functools
from types import TracebackType
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Type, TypeVar

from .host import Host, HostPrompt, HostResource, HostTool, ToolSearchResult
from .types import CallToolResult

__all__ = ["AsyncHost"]

T = TypeVar("T")


class AsyncHost:
    """``AsyncHost(config_or_path, tool_prefix="always", **options)``: the
    arguments of :class:`lemonmcp.Host`."""

    def __init__(self, config_or_path: Any, tool_prefix: str = "always", **options: Any) -> None:
        self._host = Host(config_or_path, tool_prefix, **options)

    async def _run(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(None, functools.partial(fn, *args, **kwargs))

    async def __aenter__(self) -> "AsyncHost":
        await self._run(self._host.__enter__)
        return self

    async def __aexit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        await self.close()

    async def connect(self) -> "AsyncHost":
        await self._run(self._host.connect)
        return self

    async def wait_ready(self, timeout: Optional[float] = None) -> None:
        await self._run(self._host.wait_ready, timeout)

    async def servers(self) -> Dict[str, Dict[str, Any]]:
        return await self._run(self._host.servers)

    async def list_tools(self) -> List[HostTool]:
        return await self._run(self._host.list_tools)

    async def search_tools(
        self, query: str, *, limit: Optional[int] = None, servers: Optional[Sequence[str]] = None
    ) -> List[ToolSearchResult]:
        return await self._run(self._host.search_tools, query, limit=limit, servers=servers)

    async def list_prompts(self) -> List[HostPrompt]:
        return await self._run(self._host.list_prompts)

    async def list_resources(self) -> List[HostResource]:
        return await self._run(self._host.list_resources)

    async def call_tool(
        self,
        name: str,
        arguments: Optional[Mapping[str, Any]] = None,
        *,
        timeout: Optional[float] = None,
        fail_if_restarting: bool = False,
    ) -> CallToolResult:
        return await self._run(self._host.call_tool, name, arguments, timeout=timeout, fail_if_restarting=fail_if_restarting)

    async def call(self, server: str, method: str, params: Optional[Mapping[str, Any]] = None, *, timeout: Optional[float] = None) -> Any:
        return await self._run(self._host.call, server, method, params, timeout=timeout)

    async def close(self, timeout: Optional[float] = None) -> None:
        await self._run(self._host.close, timeout)
