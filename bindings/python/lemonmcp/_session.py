"""One handle of the library (a client's or a host's): its lifecycle, the
calls made on it, and the events and requests it delivers.

:class:`HandleSession` is what a client and a host share: it owns the
handle (freed by close, or by a finalizer when its owner is collected),
registers the event and app-request callbacks (the thunks and the token
registry live in ``_callbacks``), makes calls whose completions go to a
completion queue (``_queue``) or a done callback, routes progress to the
call that asked for it, and answers app requests (``_dispatch``). The C
functions it calls for each kind of handle are a :class:`HandleKind`.
:class:`Session` adds what only a client has (``lmcp_client_*``: state,
handshake, server info, notifications); ``host.py`` adds the host's.

A session is shared by the blocking and the asyncio front (:class:`Client`
and :class:`AsyncClient`, :class:`Host` and :class:`AsyncHost`); what
differs between them is how a completion reaches the waiting caller and on
which thread user callbacks run (a :class:`~lemonmcp._dispatch.Dispatcher`).
The JSON encoding of every input is ``_codec``'s.

Close and free may race calls from other threads: the library makes every
export safe against a concurrent free (a late call returns
LMCP_E_INVALID_HANDLE and no callback starts after free returns), so the
session keeps no in-use count. A call that loses the race raises
:class:`ClosedError`, like a call made after close.
"""

from __future__ import annotations

import ctypes
import threading
import time
import weakref
from ctypes import byref, c_int, c_int32, c_size_t, c_uint64, c_void_p
from typing import Any, Callable, Dict, List, Mapping, NamedTuple, NoReturn, Optional, Tuple

from . import _ffi
from ._callbacks import (
    DESTROY_THUNK,
    DONE_THUNK,
    EVENT_THUNK,
    HOST_THUNK,
    Completion,
    FreeFn,
    free_handle,
    free_off_thread,
    in_callback_of,
    registry,
    report,
    track_handle,
    untrack_handle,
)
from ._codec import JSONObject, dumps, encode_object, loads, result_of
from ._config import wait_ms
from ._dispatch import Callbacks, Dispatcher, ProgressHandler, handle_app_request
from ._ffi import lib, lib_held
from ._queue import WAKE_MS, next_tag, thread_waiter
from .errors import (
    E_CLOSED,
    ClosedError,
    InternalError,
    InvalidArgument,
    InvalidHandle,
    InvalidState,
    LemonMCPError,
    NotFound,
    TimeoutError,
)
from .types import Closed, LogRecord, Notification, Progress, ServerInfo

__all__ = ["HandleKind", "CLIENT", "HOST", "HandleSession", "Session"]

# Method names as the library takes them (NUL-terminated bytes), encoded once.
_METHOD_BYTES: Dict[str, bytes] = {}


def method_bytes(method: str) -> bytes:
    b = _METHOD_BYTES.get(method)
    if b is not None:
        return b
    if type(method) is not str or not method:
        raise InvalidArgument("method: expected a non-empty string")
    b = method.encode("utf-8")
    if len(_METHOD_BYTES) < 256:  # a handful of MCP methods; bounded anyway
        _METHOD_BYTES[method] = b
    return b


def encode_call(
    method: str, params: Optional[Mapping[str, Any]], options: Mapping[str, Any]
) -> Tuple[bytes, Optional[bytes], Optional[bytes]]:
    """A call's inputs as the library takes them: the method, the params
    and the options (None when there are none)."""
    return method_bytes(method), encode_object(params, "params"), dumps(options, "options") if options else None


# The forms of a call (HandleSession._form_fn): where its outcome goes.
DONE = 0  # a done callback (lmcp_client_call)
QUEUED = 1  # a completion queue (lmcp_client_call_queued)
BEGIN = 2  # an lmcp_sync_call, waited for in slices (lmcp_client_call_begin)
SYNC = 3  # the calling thread, blocked in C (lmcp_client_call_sync)

_MAIN_THREAD = threading.main_thread()
# PyErr_CheckSignals through PyDLL, which raises what a handler raised.
_check_signals = ctypes.pythonapi.PyErr_CheckSignals
_check_signals.argtypes = []
_check_signals.restype = c_int


class _SyncSlot:
    """An ``lmcp_sync_call`` and the out-parameters of its waits. Slots are
    reused (a pool: a call that a signal handler makes while the main
    thread waits for another takes a second one)."""

    __slots__ = ("call", "_done", "_out", "_n", "_err", "_args", "_status")
    _pool: "List[_SyncSlot]" = []

    def __init__(self) -> None:
        self.call = _ffi.SyncCall()
        self._done = c_int()
        self._out = c_void_p()
        self._n = c_size_t()
        self._err = c_void_p()
        # The instances themselves, not byref()s: for a POINTER argtype
        # ctypes passes an instance by reference at a fraction of what
        # checking a byref() object costs (~0.13 µs an argument).
        self._args = (self._done, self._out, self._n, self._err)
        self._status = 0

    @classmethod
    def take(cls) -> "_SyncSlot":
        try:
            return cls._pool.pop()  # atomic under the GIL
        except IndexError:
            return cls()

    def give_back(self) -> None:
        self._pool.append(self)

    def wait(self, ms: int) -> bool:
        """One slice of lmcp_sync_call_wait (the GIL released): True once
        the call is done."""
        self._status = lib.lmcp_sync_call_wait(self.call, ms, *self._args)
        return bool(self._done.value)

    def result(self) -> Any:
        """The done call's result, decoded once, or its error raised."""
        if self._status == 0:
            return loads(_ffi.take_bytes(self._out, self._n.value))
        return result_of(self._status, _ffi.take_bytes(self._err))

    def drop(self) -> None:
        """Release the done call's outcome unread."""
        _ffi.take_bytes(self._out)
        _ffi.take_bytes(self._err)


class HandleKind(NamedTuple):
    """The C functions a :class:`HandleSession` calls, for one kind of
    handle (the lmcp_client_* or the lmcp_host_* of the same job)."""

    noun: str  # "client" or "host", as messages name it
    free: FreeFn
    set_event_handler: Any
    set_app_request_handler: Any
    cancel: Any
    respond: Any
    # lmcp_client_hold_sends / release_sends: None for a host (its calls
    # go to many clients).
    hold_sends: Any
    release_sends: Any


CLIENT = HandleKind(
    "client",
    lib.lmcp_client_free,
    lib.lmcp_client_set_event_handler,
    lib.lmcp_client_set_app_request_handler,
    lib.lmcp_client_cancel,
    lib.lmcp_client_respond,
    lib_held.lmcp_client_hold_sends,
    lib_held.lmcp_client_release_sends,
)
HOST = HandleKind(
    "host",
    lib.lmcp_host_free,
    lib.lmcp_host_set_event_handler,
    lib.lmcp_host_set_app_request_handler,
    lib.lmcp_host_cancel,
    lib.lmcp_host_respond,
    None,
    None,
)


class _Call:
    """A call with a progress handler, while it runs."""

    __slots__ = ("call_id", "finished", "progress")

    def __init__(self, progress: ProgressHandler) -> None:
        self.call_id = 0
        self.finished = False
        self.progress = progress


class HandleSession:
    """What a client's and a host's session share (see the module doc)."""

    def __init__(self, handle: Any, kind: HandleKind, callbacks: Callbacks, dispatcher: Dispatcher) -> None:
        self.kind = kind
        self.callbacks = callbacks
        self.dispatcher = dispatcher
        self._cond = threading.Condition(threading.RLock())
        self._progress: Dict[int, _Call] = {}
        self._registering = 0
        self._early: Dict[int, List[Progress]] = {}
        self._ready_waiters: List[Callable[[], None]] = []
        self._closing = False  # close() has begun: racing calls see ClosedError
        # Calls started together send their requests together
        # (hold_sends): a client over stdio, the only transport that holds.
        self.holds_sends = False
        self._token = track_handle(handle, kind.free)
        self._handle: Any = handle
        self._finalizer = weakref.finalize(self, free_handle, self._token)
        self._finalizer.atexit = False  # the registry's exit hook frees what is left
        ev_token = registry.add_target(self)
        host_token = registry.add_target(self)
        # destroy runs even when the registration fails, dropping the token.
        kind.set_event_handler(handle, EVENT_THUNK, ev_token, DESTROY_THUNK, c_void_p())
        kind.set_app_request_handler(handle, HOST_THUNK, host_token, DESTROY_THUNK, c_void_p())

    # --------------------------------------------------------- the handle

    def handle(self) -> Any:
        """The handle, or ClosedError once released."""
        h = self._handle
        if h is None or registry.forked:
            self._refuse()
        return h

    def _refuse(self) -> NoReturn:
        if registry.forked:
            raise InternalError(
                "lemonmcp cannot be used in a fork() child of the process that loaded it "
                "(use multiprocessing's 'spawn' or 'forkserver' start method)"
            )
        raise ClosedError(self._closed_message(), status=E_CLOSED)

    def _lost_race(self, exc: LemonMCPError) -> NoReturn:
        """A call that raced close() got LMCP_E_INVALID_STATE (after
        close) or LMCP_E_INVALID_HANDLE (after free): to the caller that is
        a closed client or host, as for a call after close."""
        if self._handle is None or self._closing:
            raise ClosedError(self._closed_message(), status=E_CLOSED) from None
        raise exc

    def _closed_message(self) -> str:
        return f"the {self.kind.noun} is closed"

    @property
    def released(self) -> bool:
        return self._handle is None

    def release(self) -> None:
        """Free the handle (once). Calls racing it on other threads end with
        ClosedError; their completions arrive as LMCP_E_CANCELLED."""
        with self._cond:
            h = self._handle
            if h is None:
                return
            self._handle = None
        untrack_handle(self._token)
        self._finalizer.detach()
        if registry.forked:
            return
        if in_callback_of(self):
            free_off_thread(self.kind.free, h)
        else:
            self.kind.free(h)

    # --------------------------------------------------------- waiting

    def add_ready_waiter(self, wake: Callable[[], None]) -> None:
        with self._cond:
            self._ready_waiters.append(wake)

    def remove_ready_waiter(self, wake: Callable[[], None]) -> None:
        with self._cond:
            try:
                self._ready_waiters.remove(wake)
            except ValueError:
                pass

    def _wake_ready_waiters(self) -> None:
        with self._cond:
            waiters = list(self._ready_waiters)
        for w in waiters:
            try:
                w()
            except BaseException:
                report("a ready waiter")

    def wait_sliced(
        self,
        wait: Callable[[int], None],
        timeout: Optional[float],
        waiting: Callable[[], bool],
        expired: Callable[[], BaseException],
    ) -> None:
        """Block in slices of at most 200 ms of ``wait(ms)`` (a library wait
        that raises TimeoutError when its slice runs out), so that a signal
        (Ctrl-C) is taken between slices. Ends when a slice returns, raises
        what one more ``wait(0)`` says once ``waiting()`` is false, and raises
        ``expired()`` once ``timeout`` seconds (None: no limit) have passed."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            if deadline is None:
                ms = 200
            else:
                ms = max(0, min(200, int((deadline - time.monotonic()) * 1000)))
            try:
                wait(ms)
                return
            except TimeoutError:
                if not waiting():
                    # The state moved on after the slice ran out (the server
                    # died, the handshake failed, timeouts.ready_ms passed):
                    # a wait of 0 ms reports that state's own error (or
                    # returns, ready) rather than the slice's "not ready
                    # after 200 ms", which once made the command line exit
                    # 124 for a server that had died at startup.
                    wait(0)
                    return
                if deadline is not None and time.monotonic() >= deadline:
                    raise expired() from None

    # --------------------------------------------------------- calls

    def start_call(
        self,
        method: str,
        params: Optional[Mapping[str, Any]],
        options: Mapping[str, Any],
        complete: Completion,
        progress: Optional[ProgressHandler] = None,
        target: Optional[str] = None,
    ) -> int:
        """Make a call whose ``complete(call_id, status, data)`` runs exactly
        once on a library thread when this returns. ``target`` is what a
        kind of handle needs besides the method (a host's server)."""
        mb, pjson, ojson = encode_call(method, params, options)
        if progress is not None:
            return self._start_with_progress(mb, pjson, ojson, complete, progress, target)
        return self._done_call(mb, pjson, ojson, complete, target)

    def _done_call(
        self, mb: bytes, pjson: Optional[bytes], ojson: Optional[bytes], complete: Completion, target: Optional[str]
    ) -> int:
        """The call with a done callback: the call id, or raises (and
        complete never runs)."""
        token = registry.add_done(complete)
        try:
            return self._start(DONE, mb, pjson, ojson, (DONE_THUNK, token), target)
        except BaseException as exc:
            registry.pop_done(token)
            if isinstance(exc, (InvalidHandle, InvalidState)):
                self._lost_race(exc)
            raise

    def _start(
        self, form: int, mb: bytes, pjson: Optional[bytes], ojson: Optional[bytes], completion: Any, target: Optional[str]
    ) -> int:
        """Start a call in one of the kind's forms, whose C functions differ
        only in where the outcome goes (``completion``, the arguments after
        the options): DONE (a done callback and its token), QUEUED (a queue
        and a tag) or BEGIN (an lmcp_sync_call). Returns the call id, or
        raises."""
        cid = c_uint64()
        self._form_fn(form, target)(*self._call_args(mb, pjson, ojson, target), *completion, cid, c_void_p())
        return cid.value

    def _form_fn(self, form: int, target: Optional[str]) -> Any:
        """The kind's C function of a form (DONE, QUEUED, BEGIN, SYNC) for
        this target; None when the kind has none (SYNC and BEGIN of a
        host's query)."""
        raise NotImplementedError

    def _call_args(self, mb: bytes, pjson: Optional[bytes], ojson: Optional[bytes], target: Optional[str]) -> Tuple[Any, ...]:
        """The arguments every form of the kind's call takes first: the
        handle, what names the call, the params and options."""
        raise NotImplementedError

    def _start_with_progress(
        self,
        mb: bytes,
        pjson: Optional[bytes],
        ojson: Optional[bytes],
        complete: Completion,
        progress: ProgressHandler,
        target: Optional[str],
    ) -> int:
        """start_call for a call with its own progress handler: progress
        that arrives before the call id is known is kept and replayed."""
        call = _Call(progress)

        def done(call_id: int, status: int, data: bytes) -> None:
            with self._cond:
                call.finished = True
                self._progress.pop(call_id, None)
            complete(call_id, status, data)

        with self._cond:
            self._registering += 1
        cid: Optional[int] = None
        try:
            cid = self._done_call(mb, pjson, ojson, done, target)
        finally:
            early: List[Progress] = []
            with self._cond:
                self._registering -= 1
                if cid is not None:
                    call.call_id = cid
                    early = self._early.pop(cid, [])
                    if not call.finished:
                        self._progress[cid] = call
                if self._registering == 0:
                    self._early.clear()
        for p in early:
            self.dispatcher.deliver(progress, p)
        return cid

    def start_queued(
        self,
        method: str,
        params: Optional[Mapping[str, Any]],
        options: Mapping[str, Any],
        queue: Any,
        tag: int,
        progress: Optional[ProgressHandler] = None,
        target: Optional[str] = None,
    ) -> int:
        """A call whose completion, tagged tag, goes to queue (an lmcp_queue
        handle): the call id, or raises and nothing is queued. A call with
        its own progress handler stays registered until
        :meth:`finish_queued`, which whoever takes its completion calls."""
        mb, pjson, ojson = encode_call(method, params, options)
        if progress is None:
            return self.start_encoded_queued(mb, pjson, ojson, queue, tag, target)
        with self._cond:
            self._registering += 1
        cid: Optional[int] = None
        try:
            cid = self._start(QUEUED, mb, pjson, ojson, (queue, tag), target)
        except (InvalidHandle, InvalidState) as exc:
            self._lost_race(exc)
        finally:
            early: List[Progress] = []
            with self._cond:
                self._registering -= 1
                if cid is not None:
                    call = _Call(progress)
                    call.call_id = cid
                    early = self._early.pop(cid, [])
                    self._progress[cid] = call
                if self._registering == 0:
                    self._early.clear()
        for p in early:
            self.dispatcher.deliver(progress, p)
        return cid

    def start_encoded_queued(
        self, mb: bytes, pjson: Optional[bytes], ojson: Optional[bytes], queue: Any, tag: int, target: Optional[str]
    ) -> int:
        """start_queued for a call without a progress handler whose inputs
        are encoded already (encode_call)."""
        try:
            return self._start(QUEUED, mb, pjson, ojson, (queue, tag), target)
        except (InvalidHandle, InvalidState) as exc:
            self._lost_race(exc)

    def hold_sends(self) -> Any:
        """lmcp_client_hold_sends: the requests sent until release_sends go
        out in one write. Returns the handle held, for release_sends, or
        None when the kind cannot hold or the handle is gone (the calls then
        fail on their own)."""
        hold = self.kind.hold_sends
        h = self._handle
        if not self.holds_sends or hold is None or h is None or registry.forked:
            return None
        try:
            hold(h)
        except LemonMCPError:
            return None
        return h

    def release_sends(self, held: Any) -> None:
        """Ends the hold of hold_sends (held: what it returned), even when
        the session was closed meanwhile (the library answers a freed
        handle with an error, ignored here)."""
        try:
            self.kind.release_sends(held)
        except LemonMCPError:
            pass

    def finish_queued(self, call_id: int) -> None:
        """A queued call with a progress handler is over: no more progress
        goes to its handler."""
        with self._cond:
            self._progress.pop(call_id, None)

    def call_blocking(
        self,
        method: str,
        params: Optional[Mapping[str, Any]],
        options: Mapping[str, Any],
        progress: Optional[ProgressHandler] = None,
        target: Optional[str] = None,
        after_record: bool = False,
    ) -> Any:
        """Make a call and block until its result (or raise its error).

        The thread waits in the library, outside the Go runtime and with
        the GIL released, as a C host's blocking call does
        (lmcp_client_call_sync; docs/abi-cost.md), and the result is
        decoded once, here. The main thread, which takes the signals, waits
        in slices (lmcp_*_call_begin, then lmcp_sync_call_wait): a signal
        ends a slice at once, so Ctrl-C cancels the call and the handle
        stays usable. A call with its own progress handler, or a form
        without a blocking C function (a host's query), waits on this
        thread's completion queue instead (_queue.ThreadWaiter), and so
        does a call whose span reads its telemetry record (``after_record``):
        the queue delivers the record before the outcome, a wait in C may
        return before the record is delivered."""
        self.handle()  # a closed handle, or a fork() child, is refused before any library call
        if progress is None and not after_record and self._form_fn(SYNC, target) is not None:
            mb = method_bytes(method)
            pjson = encode_object(params, "params")
            ojson = dumps(options, "options") if options else None
            if threading.current_thread() is _MAIN_THREAD:
                return self._call_in_slices(mb, pjson, ojson, target)
            return self._call_sync(mb, pjson, ojson, target)
        return self._call_on_queue(method, params, options, progress, target)

    def _call_sync(self, mb: bytes, pjson: Optional[bytes], ojson: Optional[bytes], target: Optional[str]) -> Any:
        """The kind's blocking call (lmcp_client_call_sync, ...): waits in
        the library with the GIL released, over Streamable HTTP in its own
        read(2) (with many such threads the library adds Ps: docs/abi-cost.md,
        "Many threads blocking at once")."""
        out = c_void_p()
        n = c_size_t()
        try:
            self._form_fn(SYNC, target)(*self._call_args(mb, pjson, ojson, target), out, n, c_void_p())
        except (InvalidHandle, InvalidState) as exc:
            self._lost_race(exc)
        return loads(_ffi.take_bytes(out, n.value))

    def _call_in_slices(self, mb: bytes, pjson: Optional[bytes], ojson: Optional[bytes], target: Optional[str]) -> Any:
        """The main thread's blocking call: begun, then waited for in slices
        of WAKE_MS in C with the GIL released, the signals taken between
        them."""
        slot = _SyncSlot.take()
        try:
            try:
                call_id = self._start(BEGIN, mb, pjson, ojson, (slot.call,), target)
            except (InvalidHandle, InvalidState) as exc:
                self._lost_race(exc)
            try:
                while not slot.wait(WAKE_MS):
                    # Run the handlers of the signals that arrived: the
                    # interpreter may not notice them on its own when
                    # another thread ran Python meanwhile (as poll()'s
                    # wrapper does on EINTR, it asks).
                    _check_signals()
            except BaseException:  # KeyboardInterrupt, or what a signal handler raised
                self.cancel(call_id)
                slot.wait(-1)  # a cancelled call completes at once
                slot.drop()
                raise
            return slot.result()
        finally:
            slot.give_back()

    def _call_on_queue(
        self,
        method: str,
        params: Optional[Mapping[str, Any]],
        options: Mapping[str, Any],
        progress: Optional[ProgressHandler],
        target: Optional[str],
    ) -> Any:
        """call_blocking through this thread's completion queue: the thread
        waits in poll() on its descriptor (a signal interrupts it)."""
        waiter = thread_waiter()
        tag = next_tag()
        waiter.expect(tag)
        try:
            call_id = self.start_queued(method, params, options, waiter.queue.handle, tag, progress, target)
        except BaseException:
            waiter.forget(tag)
            raise
        try:
            rec = waiter.wait(tag)
        except BaseException:  # KeyboardInterrupt, or what a signal handler raised
            self.cancel(call_id)
            raise
        finally:
            if progress is not None:
                self.finish_queued(call_id)
        return result_of(rec[2], rec[3])

    def cancel(self, call_id: int) -> bool:
        """Cancel a call; False when the call already finished."""
        try:
            self.kind.cancel(self.handle(), call_id)
            return True
        except (NotFound, ClosedError, InvalidHandle):
            return False

    def respond(self, request_id: int, status: int, body: Optional[Mapping[str, Any]]) -> bool:
        """Answer a app request; False when the request is gone (expired,
        answered) or the handle is closed."""
        blob = encode_object(body, "result")
        try:
            self.kind.respond(self.handle(), request_id, status, blob, len(blob) if blob else 0, c_void_p())
            return True
        except (NotFound, ClosedError, InvalidHandle):
            return False

    # --------------------------------------------------------- from the library

    def on_app_request(self, request_id: int, kind: str, data: bytes) -> None:
        handle_app_request(self, request_id, kind, data)

    def on_event(self, kind: str, data: bytes) -> None:
        payload: Any = loads(data) if data else {}
        cb = self.callbacks
        if cb.on_event is not None:
            self.dispatcher.deliver(cb.on_event, kind, payload)
        if kind == "progress":
            self._route_progress(Progress.from_json(payload))
        elif kind == "log":
            if cb.on_log is not None:
                self.dispatcher.deliver(cb.on_log, LogRecord.from_json(payload))
        elif kind == "notification":
            if cb.on_notification is not None:
                self.dispatcher.deliver(cb.on_notification, Notification.from_json(payload))
        elif kind == "sampling_denied":
            if cb.on_sampling_denied is not None:
                self.dispatcher.deliver(cb.on_sampling_denied, payload)
        elif kind == "closed":
            closed = Closed.from_json(payload)
            self._state_event(kind, closed)
            self._wake_ready_waiters()
            if cb.on_closed is not None:
                self.dispatcher.deliver(cb.on_closed, closed)
        elif kind in ("ready", "failed", "restarting"):
            self._state_event(kind, payload)
            self._wake_ready_waiters()

    def _state_event(self, kind: str, payload: Any) -> None:
        """What the kind keeps of a "ready", "failed" or "restarting" event
        (its payload), or of "closed" (a Closed), before ready waiters
        wake."""

    def _route_progress(self, p: Progress) -> None:
        handler: Optional[ProgressHandler] = None
        with self._cond:
            call = self._progress.get(p.call_id)
            if call is not None:
                handler = call.progress
            elif self._registering:
                self._early.setdefault(p.call_id, []).append(p)
        if handler is not None:
            self.dispatcher.deliver(handler, p)
        if self.callbacks.on_progress is not None:
            self.dispatcher.deliver(self.callbacks.on_progress, p)


class Session(HandleSession):
    """A client's session: an ``lmcp_client *``."""

    def __init__(self, config: Mapping[str, Any], callbacks: Callbacks, dispatcher: Dispatcher) -> None:
        self.config: JSONObject = dict(config)
        self.server_info: Optional[ServerInfo] = None
        self.closed: Optional[Closed] = None
        self.closed_event = threading.Event()
        self.failure: Optional[JSONObject] = None
        self.connected = False
        blob = dumps(self.config, "config")
        handle = _ffi.ClientHandle()
        lib.lmcp_client_new(blob, len(blob), handle, c_void_p())
        super().__init__(handle, CLIENT, callbacks, dispatcher)
        transport = self.config.get("transport")
        self.holds_sends = isinstance(transport, dict) and transport.get("type") == "stdio"

    def _closed_message(self) -> str:
        if self.closed is not None and self.closed.reason:
            return f"the client is closed ({self.closed.reason})"
        return "the client is closed"

    # --------------------------------------------------------- lifecycle

    def state(self) -> int:
        h = self._handle
        if h is None:
            return _ffi.STATE_CLOSED
        st = c_int32()
        try:
            lib.lmcp_client_state(self.handle(), byref(st))
        except (ClosedError, InvalidHandle):
            return _ffi.STATE_CLOSED
        return int(st.value)

    def connect(self) -> None:
        try:
            lib.lmcp_client_connect(self.handle(), c_void_p())
        except (InvalidHandle, InvalidState) as exc:
            self._lost_race(exc)
        self.connected = True

    def wait_ready_slice(self, ms: int) -> None:
        """One bounded lmcp_client_wait_ready; raises on anything but ready."""
        try:
            lib.lmcp_client_wait_ready(self.handle(), ms, c_void_p())
        except (InvalidHandle, InvalidState) as exc:
            self._lost_race(exc)

    def wait_ready_blocking(self, timeout: Optional[float]) -> ServerInfo:
        # A TimeoutError while the client is neither connecting nor ready:
        # timeouts.ready_ms ran out, the handshake failed.
        self.wait_sliced(
            self.wait_ready_slice,
            timeout,
            lambda: self.state() in (_ffi.STATE_CONNECTING, _ffi.STATE_READY),
            lambda: TimeoutError(f"the server was not ready within {timeout:g} s"),
        )
        return self.fetch_server_info()

    def fetch_server_info(self) -> ServerInfo:
        out = c_void_p()
        n = c_size_t()
        try:
            lib.lmcp_client_server_info(self.handle(), out, byref(n), c_void_p())
        except (InvalidHandle, InvalidState) as exc:
            self._lost_race(exc)
        info = ServerInfo.from_json(_ffi.decode_json(_ffi.take_bytes(out, n.value)))
        self.server_info = info
        return info

    def close_blocking(self, timeout: Optional[float]) -> None:
        """lmcp_client_close, a short wait for the "closed" event, then free."""
        if self._handle is None:
            return
        before = self.state()
        self._closing = True
        ms = wait_ms(timeout)
        try:
            lib.lmcp_client_close(self.handle(), ms, c_void_p())
        except (TimeoutError, ClosedError, InvalidHandle):
            pass  # teardown goes on in the background / already gone
        if before != _ffi.STATE_NEW and self.connected and not in_callback_of(self):
            # The "closed" event follows close; keep it (reason, exit code)
            # unless this thread is the one that would deliver it.
            self.closed_event.wait(0.5)
        self.release()

    # --------------------------------------------------------- calls

    # Every form of lmcp_client_call: none blocks but SYNC (HOLDS_GIL).
    _FORMS = (lib_held.lmcp_client_call, lib_held.lmcp_client_call_queued, lib_held.lmcp_client_call_begin, lib.lmcp_client_call_sync)

    def _form_fn(self, form: int, target: Optional[str]) -> Any:
        return self._FORMS[form]

    def _call_args(self, mb: bytes, pjson: Optional[bytes], ojson: Optional[bytes], target: Optional[str]) -> Tuple[Any, ...]:
        return (self.handle(), mb, pjson, len(pjson) if pjson else 0, ojson, len(ojson) if ojson else 0)

    def notify(self, method: str, params: Optional[Mapping[str, Any]]) -> None:
        mb = method_bytes(method)
        pjson = encode_object(params, "params")
        try:
            lib.lmcp_client_notify(self.handle(), mb, pjson, len(pjson) if pjson else 0, c_void_p())
        except (InvalidHandle, InvalidState) as exc:
            self._lost_race(exc)

    # --------------------------------------------------------- from the library

    def _state_event(self, kind: str, payload: Any) -> None:
        if kind == "ready":
            if isinstance(payload, dict) and isinstance(payload.get("server"), dict):
                self.server_info = ServerInfo.from_json(payload["server"])
        elif kind == "failed":
            self.failure = payload if isinstance(payload, dict) else {}
        elif kind == "closed":
            self.closed = payload
            self.closed_event.set()
