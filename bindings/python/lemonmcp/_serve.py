"""The host served as one MCP server: ``Host.serve`` and
``AsyncHost.serve`` (docs/gateway.md).

    with lemonmcp.Host("mcp.json") as host:
        with host.serve(http="127.0.0.1:0") as server:
            print(server.url)                # http://127.0.0.1:PORT/mcp
            server.wait()                    # until stopped (Ctrl-C: KeyboardInterrupt)

The serving loop is the library's (``lmcp_server_*``): the protocol, the
sessions, the relay of each server's requests to the front client whose
call caused them, and the HTTP front's checks all live there. This module
only starts it, waits for it and stops it; the options are the library's,
passed as they are (docs/gateway.md names them), so a misspelt one is the
library's error naming it.

A server holds its host: the host is closed only after the servers it
serves are stopped (``Host.close`` stops them first, bounded).
"""

from __future__ import annotations

import asyncio
import sys
import threading
import time
import weakref
from ctypes import byref, c_void_p
from typing import Any, Dict, Mapping, Optional, Tuple

from . import _ffi
from ._callbacks import DESTROY_THUNK, EVENT_THUNK, HOST_THUNK, registry
from ._codec import dumps
from ._config import wait_ms
from ._ffi import lib
from .errors import ClosedError, InvalidArgument, InvalidHandle, LemonMCPError, TimeoutError

__all__ = ["Server", "AsyncServer", "serve", "stop_served", "RELAYED_HANDLERS"]

#: The host config's ``defaults.handlers`` that lets every server ask what
#: a front client may answer (sampling, elicitation, roots): give it to a
#: host you serve (``Host(config, defaults={"handlers": RELAYED_HANDLERS})``);
#: the gateway relays each request to the front session whose call caused
#: it. Without it a server's request is refused by the host.
RELAYED_HANDLERS: Dict[str, Any] = {"sampling": {}, "elicitation": {"form": True, "url": True}, "roots": {}}

#: A wait is taken in slices this long, so that Ctrl-C is seen between them.
_SLICE_MS = 200
#: How long Host.close gives the servers it serves to end their calls.
STOP_GRACE_S = 5.0


def _fds(fds: Optional[Tuple[int, int]]) -> Tuple[int, int]:
    """The (read, write) pair a stdio front serves on: the given one, else
    the process's stdin and stdout."""
    if fds is None:
        return sys.stdin.fileno(), sys.stdout.fileno()
    if (not isinstance(fds, (tuple, list)) or len(fds) != 2
            or not all(isinstance(fd, int) and not isinstance(fd, bool) and fd >= 0 for fd in fds)):
        raise InvalidArgument(f"fds: expected a pair of file descriptors (read, write), got {fds!r}")
    return int(fds[0]), int(fds[1])


class Server:
    """A host being served (an ``lmcp_server``): on a pair of file
    descriptors (a stdio front: the front client writes requests to the
    first and reads the second) or over Streamable HTTP at :attr:`url`.

    :meth:`wait` blocks until serving ends (a stdio front's input closed,
    :meth:`stop`); :meth:`stop` ends it gracefully, letting the calls in
    flight finish for at most its timeout. Leaving the ``with`` block
    stops and frees it."""

    def __init__(self, host: Any, options: Mapping[str, Any]) -> None:
        """A server of ``host`` not serving yet (:meth:`serve_fds`,
        :meth:`serve_http` start it): it takes the host's server requests
        from now on, so a host connected after it lets its servers ask."""
        blob = dumps(dict(options), "options")
        handle = _ffi.ServerHandle()
        lib.lmcp_server_new(host._session.handle(), blob, len(blob), byref(handle), c_void_p())
        # The gateway holds the host's event handler now: the host keeps
        # hearing its events (on_event, its servers' log lines) through it.
        sess = host._session
        lib.lmcp_server_set_event_handler(handle, EVENT_THUNK, registry.add_target(sess), DESTROY_THUNK, c_void_p())
        self._handle: Any = handle
        self._lock = threading.Lock()
        #: The front's URL (``http://HOST:PORT/mcp``) when served over HTTP.
        self.url: Optional[str] = None
        self._host = host  # the host outlives its server
        _served(host).add(self)

    def serve_fds(self, fds: Optional[Tuple[int, int]] = None) -> "Server":
        """Serve on (read, write) descriptors (default: stdin, stdout); the
        library serves on its own duplicates."""
        in_fd, out_fd = _fds(fds)
        lib.lmcp_server_serve_fds(self._h(), in_fd, out_fd, c_void_p())
        return self

    def serve_http(self, addr: str) -> "Server":
        """Serve Streamable HTTP on ``addr`` (HOST:PORT); :attr:`url` says
        where once this returns (listening)."""
        if not isinstance(addr, str) or not addr:
            raise InvalidArgument(f"http: expected an address HOST:PORT, got {addr!r}")
        out = c_void_p()
        lib.lmcp_server_serve_http(self._h(), addr.encode(), byref(out), c_void_p())
        self.url = _ffi.take_bytes(out).decode("utf-8")
        return self

    def _h(self) -> Any:
        h = self._handle
        if h is None:
            raise ClosedError("the server was closed")
        return h

    @property
    def closed(self) -> bool:
        return self._handle is None

    def wait_slice(self, ms: int) -> bool:
        """One bounded lmcp_server_wait: True once serving ended."""
        try:
            lib.lmcp_server_wait(self._h(), ms, c_void_p())
            return True
        except TimeoutError:
            return False
        except InvalidHandle:
            return True

    def wait(self, timeout: Optional[float] = None) -> bool:
        """Block until serving ends: True, or False after ``timeout``
        seconds (None: no limit). Ctrl-C interrupts the wait
        (KeyboardInterrupt; the server goes on)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            ms = _SLICE_MS if deadline is None else max(0, min(_SLICE_MS, int((deadline - time.monotonic()) * 1000)))
            if self.wait_slice(ms):
                return True
            if deadline is not None and time.monotonic() >= deadline:
                return False

    def stop(self, timeout: Optional[float] = None) -> None:
        """End serving: no new session or call is taken, the calls in
        flight may finish for ``timeout`` seconds (None: the library's
        bound), then every front session is closed and its server calls
        cancelled. Idempotent."""
        h = self._handle
        if h is None:
            return
        try:
            lib.lmcp_server_stop(h, wait_ms(timeout), c_void_p())
        except (ClosedError, InvalidHandle):
            pass  # already ended

    def close(self, timeout: Optional[float] = None) -> None:
        """:meth:`stop`, then free the server. Idempotent."""
        try:
            self.stop(timeout)
        finally:
            self._release()

    def _release(self) -> None:
        with self._lock:
            h, self._handle = self._handle, None
        if h is not None:
            lib.lmcp_server_free(h)
            host = getattr(self, "_host", None)
            if host is not None:
                _served(host).discard(self)
                _give_back(host)

    def __enter__(self) -> "Server":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __del__(self) -> None:  # a server never closed is freed with the object
        try:
            self._release()
        except Exception:  # pragma: no cover - interpreter shutdown
            pass


class AsyncServer:
    """:class:`Server` for asyncio: the waits run in the loop's default
    executor, so the loop runs on."""

    def __init__(self, server: Server) -> None:
        self._server = server
        self.url = server.url

    @property
    def closed(self) -> bool:
        return self._server.closed

    async def wait(self, timeout: Optional[float] = None) -> bool:
        """As :meth:`Server.wait`; cancelling the awaiting task leaves the
        server running."""
        deadline = None if timeout is None else time.monotonic() + timeout
        loop = asyncio.get_running_loop()
        while True:
            ms = _SLICE_MS if deadline is None else max(0, min(_SLICE_MS, int((deadline - time.monotonic()) * 1000)))
            if await loop.run_in_executor(None, self._server.wait_slice, ms):
                return True
            if deadline is not None and time.monotonic() >= deadline:
                return False

    async def stop(self, timeout: Optional[float] = None) -> None:
        await asyncio.get_running_loop().run_in_executor(None, self._server.stop, timeout)

    async def close(self, timeout: Optional[float] = None) -> None:
        await asyncio.get_running_loop().run_in_executor(None, self._server.close, timeout)

    async def __aenter__(self) -> "AsyncServer":
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()


def _give_back(host: Any) -> None:
    """The host's event and request handlers were the gateway's while it
    served, and a freed server leaves none: the host's session gets its own
    back (its progress, events and callbacks), as it installed them."""
    sess = host._session
    if sess.released:
        return
    try:
        handle = sess.handle()
        sess.kind.set_event_handler(handle, EVENT_THUNK, registry.add_target(sess), DESTROY_THUNK, c_void_p())
        sess.kind.set_app_request_handler(handle, HOST_THUNK, registry.add_target(sess), DESTROY_THUNK, c_void_p())
    except LemonMCPError:
        pass  # the host is closing: nothing more to deliver


# Each host's live servers, so that closing the host stops them first.
_SERVED: "weakref.WeakKeyDictionary[Any, weakref.WeakSet[Server]]" = weakref.WeakKeyDictionary()
_SERVED_LOCK = threading.Lock()


def _served(host: Any) -> "weakref.WeakSet[Server]":
    with _SERVED_LOCK:
        found = _SERVED.get(host)
        if found is None:
            found = _SERVED[host] = weakref.WeakSet()
        return found


def serving(host: Any) -> bool:
    """Whether ``host`` has a server not yet closed."""
    with _SERVED_LOCK:
        return bool(_SERVED.get(host))


def stop_served(host: Any, timeout: Optional[float] = STOP_GRACE_S) -> None:
    """Close every server of ``host`` (Host.close calls it first)."""
    with _SERVED_LOCK:
        servers = list(_SERVED.get(host, ()))
    for server in servers:
        server.close(timeout)


def serve(host: Any, fds: Optional[Tuple[int, int]], http: Optional[str], options: Dict[str, Any]) -> Server:
    """What Host.serve does (the host must be open)."""
    if host.closed:
        raise ClosedError("the host was closed")
    if http is not None and fds is not None:
        raise InvalidArgument("serve: give fds= or http=, not both")
    if http is None:
        _fds(fds)  # a bad pair is named before anything starts
    server = Server(host, options)
    try:
        return server.serve_fds(fds) if http is None else server.serve_http(http)
    except BaseException:
        server.close()
        raise
