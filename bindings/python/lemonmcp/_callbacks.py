"""Callbacks from C: the process-wide ctypes thunks and the registry their
``user_data`` tokens index.

There is one ctypes thunk per callback type for the whole process (module
globals, alive as long as the module), and ``user_data`` is an integer token
into the registry (the library never dereferences it):

- the event and app-request registrations map their token to a *weak*
  reference to the session (a :class:`Target`: a client's or a host's), so
  an un-closed client or host can still be garbage collected; the
  registration's ``destroy`` removes the token;
- a call maps its token to its completion function; the done callback, which
  runs exactly once, pops it.

A thunk never lets an exception reach C, never assumes which thread it runs
on, and does nothing once the interpreter is shutting down. At exit every
handle still alive is freed and the library's last callbacks (cancelled
completions, destroys) are awaited briefly, so no library thread enters
Python while it is being torn down.

Library threads keep their Python thread state. ctypes enters Python from a
foreign thread with ``PyGILState_Ensure`` and leaves with
``PyGILState_Release``, which creates and destroys a thread state (and, since
3.11, maps and unmaps its frame stack) on every callback: that was half the
binding's CPU time per completion. The first callback on a library thread
takes one more ``PyGILState_Ensure`` that is never released, so the thread
keeps its state; the library runs callbacks on a bounded set of threads.
"""

from __future__ import annotations

import atexit
import ctypes
import itertools
import logging
import os
import threading
import time
import weakref
from typing import Any, Callable, Dict, Optional, Protocol, Tuple

from . import _ffi

log = logging.getLogger("lemonmcp")

#: A call's completion: ``complete(call_id, status, data)``.
Completion = Callable[[int, int, bytes], None]
#: A handle's free function (``lmcp_client_free``, ``lmcp_host_free``).
FreeFn = Callable[[Any], None]


class Target(Protocol):
    """What the event and app-request thunks reach: a handle's session."""

    def on_event(self, kind: str, data: bytes) -> None: ...

    def on_app_request(self, request_id: int, kind: str, data: bytes) -> None: ...


class _Registry:
    """What the thunks look up. Completions are added and popped without a
    lock (single dict operations are atomic under the GIL); the lock guards
    the rest and the exit-time wait."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.changed = threading.Condition(self.lock)
        # Tokens travel as void *user_data: any integer is fine. 0 is kept
        # for NULL. next() on a count is atomic under the GIL.
        self.tokens = itertools.count(1)
        self.done: Dict[int, Completion] = {}
        self.targets: Dict[int, "weakref.ReferenceType[Target]"] = {}
        self.live: Dict[int, Tuple[Any, FreeFn]] = {}  # session token -> handle not yet freed, its free
        self.exiting = False  # _at_exit waits for the last callbacks
        self.shutting_down = False
        self.forked = False  # this process is a fork() child of the one that loaded the library

    def token(self) -> int:
        return next(self.tokens)

    def add_done(self, fn: Completion) -> int:
        t = next(self.tokens)
        self.done[t] = fn
        return t

    def pop_done(self, token: int) -> Optional[Completion]:
        fn = self.done.pop(token, None)
        if self.exiting and not self.done:
            with self.lock:
                self.changed.notify_all()
        return fn

    def add_target(self, sess: Target) -> int:
        t = next(self.tokens)
        with self.lock:
            self.targets[t] = weakref.ref(sess)
        return t

    def target(self, token: int) -> Optional[Target]:
        ref = self.targets.get(token)
        return ref() if ref is not None else None

    def drop_target(self, token: int) -> None:
        with self.lock:
            self.targets.pop(token, None)
            self.changed.notify_all()


registry = _Registry()


class _ThreadState(threading.local):
    pinned = False  # this library thread keeps its Python thread state
    sessions: "tuple[Target, ...]" = ()  # sessions whose callback this thread is running


_tls = _ThreadState()

try:
    _gil_ensure: Optional[Any] = ctypes.pythonapi.PyGILState_Ensure
    _gil_ensure.restype = ctypes.c_int  # type: ignore[union-attr]
    _gil_ensure.argtypes = ()  # type: ignore[union-attr]
except (AttributeError, OSError):  # pragma: no cover - no CPython C API
    _gil_ensure = None


def _pin_thread_state() -> None:
    """Keep this library thread's Python thread state (see the module doc)."""
    _tls.pinned = True
    if _gil_ensure is not None:
        _gil_ensure()


def in_callback_of(sess: Target) -> bool:
    """True on a library thread that is running one of sess's callbacks."""
    return any(s is sess for s in _tls.sessions)


def report(where: str) -> None:
    try:
        log.exception("lemonmcp: unexpected error in %s", where)
    except BaseException:  # pragma: no cover - logging itself broken
        pass


def _to_session(
    where: str,
    enter: Callable[[Any, str, bytes], None],
    user_data: Optional[int],
    kind: Optional[bytes],
    ptr: Optional[int],
    length: int,
) -> None:
    """The prologue of the trampolines that a session's callbacks enter by:
    pin the thread's state, find the session (gone: nothing to do), copy
    the payload, and mark this thread as running the session's callback
    (in_callback_of) while ``enter(session, kind, data)`` runs; an error is
    reported as one of ``where``."""
    try:
        if not _tls.pinned:
            _pin_thread_state()
        if registry.shutting_down:
            return
        sess = registry.target(user_data or 0)
        if sess is None:
            return
        data = ctypes.string_at(ptr, length) if ptr else b""
        outer = _tls.sessions
        _tls.sessions = outer + (sess,)
        try:
            enter(sess, (kind or b"").decode("utf-8", "replace"), data)
        finally:
            _tls.sessions = outer
    except BaseException:
        report(where)


def _enter_event(sess: Any, kind: str, data: bytes) -> None:
    sess.on_event(kind, data)


def _on_event(user_data: Optional[int], kind: Optional[bytes], ptr: Optional[int], length: int) -> None:
    _to_session("the event callback", _enter_event, user_data, kind, ptr, length)


def _on_app_request(
    user_data: Optional[int], request_id: int, kind: Optional[bytes], ptr: Optional[int], length: int
) -> None:
    def enter(sess: Any, k: str, data: bytes) -> None:
        sess.on_app_request(request_id, k, data)

    _to_session("the app-request callback", enter, user_data, kind, ptr, length)


def _on_done(user_data: Optional[int], call_id: int, status: int, ptr: Optional[int], length: int) -> None:
    try:
        if not _tls.pinned:
            _pin_thread_state()
        fn = registry.pop_done(user_data or 0)
        if fn is None:
            return
        fn(call_id, status, ctypes.string_at(ptr, length) if ptr else b"")
    except BaseException:
        report("a completion callback")


def _on_destroy(user_data: Optional[int]) -> None:
    try:
        registry.drop_target(user_data or 0)
    except BaseException:
        report("a destroy callback")


# The process-wide thunks. They must outlive every registration and call that
# names them, so they live as long as this module.
EVENT_THUNK = _ffi.EVENT_CB(_on_event)
HOST_THUNK = _ffi.APP_REQUEST_CB(_on_app_request)
DONE_THUNK = _ffi.DONE_CB(_on_done)
DESTROY_THUNK = _ffi.DESTROY_CB(_on_destroy)


# ------------------------------------------------------------ handles alive


def track_handle(handle: Any, free: FreeFn) -> int:
    """Note a new handle and its free function so that exit frees it;
    returns its token."""
    token = next(registry.tokens)
    with registry.lock:
        registry.live[token] = (handle, free)
    return token


def untrack_handle(token: int) -> Optional[Tuple[Any, FreeFn]]:
    """The handle noted under token and its free (None when already
    untracked)."""
    with registry.lock:
        return registry.live.pop(token, None)


def free_handle(token: int) -> None:
    """Finalizer of a session: free its handle unless already freed."""
    entry = untrack_handle(token)
    if entry is not None and not registry.shutting_down and not registry.forked:
        handle, free = entry
        free(handle)


def free_off_thread(free: FreeFn, handle: Any) -> None:
    """A handle must not be freed inside one of its own callbacks (the free
    would wait for them): hand it to a thread of ours (free never blocks)."""
    threading.Thread(target=free, args=(handle,), name="lemonmcp-free", daemon=True).start()


def _after_fork_in_child() -> None:
    # The Go runtime does not survive fork(): in the child, no library call
    # may be made, not even the frees at exit.
    registry.forked = True


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


@atexit.register
def _at_exit() -> None:
    """Free every live handle, then wait (bounded) for the library's last
    callbacks so none enters Python during interpreter teardown."""
    if registry.forked:
        return
    with registry.lock:
        handles = list(registry.live.values())
        registry.live.clear()
        registry.exiting = True
    for h, free in handles:
        try:
            free(h)
        except BaseException:  # pragma: no cover
            pass
    deadline = time.monotonic() + 3.0
    with registry.lock:
        while registry.done or registry.targets:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            registry.changed.wait(min(remaining, 0.05))
        registry.shutting_down = True
