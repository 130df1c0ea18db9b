"""A program serving its own lemonmcp.Host on its stdin and stdout, for
test_serve.py: ``python serve_worker.py CONFIG [sync|async]``. The front
client (the test's lemonmcp.Client) starts it; when the client closes our
stdin, serving ends, the host closes and the program exits 0."""

from __future__ import annotations

import asyncio
import sys

import lemonmcp
import lemonmcp.aio
from lemonmcp._serve import RELAYED_HANDLERS


def run_sync(config: str) -> None:
    with lemonmcp.Host(config, ready_timeout=30, defaults={"handlers": RELAYED_HANDLERS}) as host:
        server = host.serve()  # this process's stdin and stdout
        server.wait()
        server.close()


async def run_async(config: str) -> None:
    async with lemonmcp.aio.AsyncHost(config, ready_timeout=30, defaults={"handlers": RELAYED_HANDLERS}) as host:
        server = await host.serve(fds=(0, 1))
        await server.wait()
        await server.close()


if __name__ == "__main__":
    if sys.argv[2] == "async":
        asyncio.run(run_async(sys.argv[1]))
    else:
        run_sync(sys.argv[1])
