"""One client handle and everything that flows through it.

``_Session`` owns an ``lmcp_client *`` and is shared by :class:`Client` and
:class:`AsyncClient`; what differs between them is how a completion reaches
the waiting caller and on which thread user callbacks run (a ``_Dispatcher``).

Callbacks from C. There is one ctypes thunk per callback type for the whole
process (module globals, alive as long as the module), and ``user_data`` is an
integer token into a registry:

- the event and host-request registrations map their token to a *weak*
  reference to the session, so an un-closed client can still be garbage
  collected; the registration's ``destroy`` removes the token;
- a call maps its token to its completion function; the done callback, which
  runs exactly once, pops it.

A thunk never lets an exception reach C, never assumes which thread it runs
on, and does nothing once the interpreter is shutting down. At exit every
handle still alive is freed and the library's last callbacks (cancelled
completions, destroys) are awaited briefly, so no library thread enters
Python while it is being torn down.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import ctypes
import inspect
import itertools
import json
import logging
import os
import threading
import time
import weakref
from ctypes import byref, c_int32, c_size_t, c_uint64, c_void_p
from typing import (
    Any,
    Awaitable,
    Callable,
    Dict,
    Iterator,
    List,
    Mapping,
    Optional,
    Sequence,
    Tuple,
    Union,
)
from contextlib import contextmanager

from . import _ffi
from ._ffi import lib
from .errors import (
    E_CLOSED,
    E_INTERNAL,
    E_UNSUPPORTED,
    OK,
    ClosedError,
    InvalidArgument,
    InternalError,
    InvalidHandle,
    LemonMCPError,
    NotFound,
    TimeoutError,
    error_from_status,
)
from .types import Closed, LogRecord, Notification, Progress, ServerInfo

log = logging.getLogger("lemonmcp")

JSONObject = Dict[str, Any]
Completion = Callable[[int, int, bytes], None]
ProgressHandler = Callable[[Progress], Any]
HostHandler = Callable[[JSONObject], Any]

HOST_KINDS = ("roots", "sampling", "elicitation", "review", "authorize", "token_load", "token_save")

#: The library's own questions about OAuth (not the server's requests): their
#: payload is the whole request object, and what their handlers raise is
#: never repeated anywhere (it may hold a token, a code or a secret).
AUTH_KINDS = ("authorize", "token_load", "token_save")

TokenLoad = Callable[[JSONObject], Any]
TokenSave = Callable[[JSONObject], Any]


# One encoder for every input: json.dumps with non-default arguments would
# build a new encoder per call, which costs more than the C call itself.
_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def dumps(value: Any, field: str) -> bytes:
    """JSON-encode an input, naming the field when it cannot be encoded."""
    try:
        return _ENCODER.encode(value).encode("utf-8")
    except (TypeError, ValueError) as exc:
        raise InvalidArgument(f"{field}: not JSON-serializable: {exc}") from None


def outcome(status: int, data: bytes) -> Tuple[bool, Any]:
    """Decode a completion: (True, result) or (False, exception)."""
    if status == OK:
        try:
            return True, (json.loads(data) if data else None)
        except ValueError as exc:  # the library promises JSON
            return False, error_from_status(E_INTERNAL, {"message": f"undecodable result: {exc}"})
    payload: Any
    try:
        payload = json.loads(data) if data else {}
    except ValueError:
        payload = {"message": data.decode("utf-8", "replace")}
    if not isinstance(payload, dict) or not payload.get("message"):
        payload = dict(payload) if isinstance(payload, dict) else {}
        payload["message"] = _ffi.status_string(status)
    return False, error_from_status(status, payload)


# ------------------------------------------------------------------ registry


class _Registry:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.changed = threading.Condition(self.lock)
        # Tokens travel as void *user_data: any integer is fine (the
        # library never treats user_data as a pointer). 0 is kept for NULL.
        self.tokens = itertools.count(1)
        self.done: Dict[int, Completion] = {}
        self.targets: Dict[int, "weakref.ReferenceType[_Session]"] = {}
        self.live: Dict[int, Any] = {}  # session token -> handle not yet freed
        self.shutting_down = False
        self.forked = False  # this process is a fork() child of the one that loaded the library

    def token(self) -> int:
        with self.lock:
            return next(self.tokens)

    def add_done(self, fn: Completion) -> int:
        with self.lock:
            t = next(self.tokens)
            self.done[t] = fn
            return t

    def pop_done(self, token: int) -> Optional[Completion]:
        with self.lock:
            fn = self.done.pop(token, None)
            if not self.done:
                self.changed.notify_all()
            return fn

    def target(self, token: int) -> Optional["_Session"]:
        ref = self.targets.get(token)
        return ref() if ref is not None else None

    def drop_target(self, token: int) -> None:
        with self.lock:
            self.targets.pop(token, None)
            self.changed.notify_all()


_reg = _Registry()


_tls = threading.local()  # .sessions: sessions whose callback this thread is running


def _enter_callback(sess: "_Session") -> None:
    stack = getattr(_tls, "sessions", None)
    if stack is None:
        stack = _tls.sessions = []
    stack.append(sess)


def _leave_callback() -> None:
    stack = getattr(_tls, "sessions", None)
    if stack:
        stack.pop()


def in_callback_of(sess: "_Session") -> bool:
    """True on a library thread that is running one of sess's callbacks."""
    return any(s is sess for s in getattr(_tls, "sessions", None) or ())


def _report(where: str) -> None:
    try:
        log.exception("lemonmcp: unexpected error in %s", where)
    except BaseException:  # pragma: no cover - logging itself broken
        pass


def _on_event(user_data: Optional[int], kind: Optional[bytes], ptr: Optional[int], length: int) -> None:
    try:
        if _reg.shutting_down:
            return
        sess = _reg.target(user_data or 0)
        if sess is None:
            return
        data = ctypes.string_at(ptr, length) if ptr else b""
        _enter_callback(sess)
        try:
            sess._event((kind or b"").decode("utf-8", "replace"), data)
        finally:
            _leave_callback()
    except BaseException:
        _report("the event callback")


def _on_host_request(
    user_data: Optional[int], request_id: int, kind: Optional[bytes], ptr: Optional[int], length: int
) -> None:
    try:
        if _reg.shutting_down:
            return
        sess = _reg.target(user_data or 0)
        if sess is None:
            return
        data = ctypes.string_at(ptr, length) if ptr else b""
        _enter_callback(sess)
        try:
            sess._host_request(int(request_id), (kind or b"").decode("utf-8", "replace"), data)
        finally:
            _leave_callback()
    except BaseException:
        _report("the host-request callback")


def _on_done(user_data: Optional[int], call_id: int, status: int, ptr: Optional[int], length: int) -> None:
    try:
        fn = _reg.pop_done(user_data or 0)
        if fn is None:
            return
        data = ctypes.string_at(ptr, length) if ptr else b""
        fn(int(call_id), int(status), data)
    except BaseException:
        _report("a completion callback")


def _on_destroy(user_data: Optional[int]) -> None:
    try:
        _reg.drop_target(user_data or 0)
    except BaseException:
        _report("a destroy callback")


# The process-wide thunks. They must outlive every registration and call that
# names them, so they live as long as this module.
_EVENT_THUNK = _ffi.EVENT_CB(_on_event)
_HOST_THUNK = _ffi.HOST_REQUEST_CB(_on_host_request)
_DONE_THUNK = _ffi.DONE_CB(_on_done)
_DESTROY_THUNK = _ffi.DESTROY_CB(_on_destroy)


def _free_handle(token: int) -> None:
    """Finalizer of a session: free its handle unless already freed."""
    with _reg.lock:
        handle = _reg.live.pop(token, None)
    if handle is not None and not _reg.shutting_down and not _reg.forked:
        lib.lmcp_client_free(handle)


def _after_fork_in_child() -> None:
    # The Go runtime does not survive fork(): in the child, no library call
    # may be made, not even the frees at exit.
    _reg.forked = True


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


@atexit.register
def _at_exit() -> None:
    """Free every live handle, then wait (bounded) for the library's last
    callbacks so none enters Python during interpreter teardown."""
    if _reg.forked:
        return
    with _reg.lock:
        handles = list(_reg.live.values())
        _reg.live.clear()
    for h in handles:
        try:
            lib.lmcp_client_free(h)
        except BaseException:  # pragma: no cover
            pass
    deadline = time.monotonic() + 3.0
    with _reg.lock:
        while _reg.done or _reg.targets:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            _reg.changed.wait(min(remaining, 0.05))
        _reg.shutting_down = True


# ---------------------------------------------------------------- dispatch


class _Dispatcher:
    """Runs user callbacks. The blocking client runs them right on the
    library thread that delivered the event."""

    def deliver(self, fn: Callable[..., Any], *args: Any) -> None:
        try:
            result = fn(*args)
            if inspect.isawaitable(result):
                _run_awaitable_in_thread(result)
        except BaseException:
            log.exception("lemonmcp: a callback raised")

    def answer(self, run: Callable[[], None]) -> None:
        """Run a host-request answer: on its own thread, so a handler that
        asks a person does not hold up the library's threads."""
        threading.Thread(target=run, name="lemonmcp-host-request", daemon=True).start()


def _run_awaitable_in_thread(aw: Awaitable[Any]) -> Any:
    async def wrap() -> Any:
        return await aw

    return asyncio.run(wrap())


class _LoopDispatcher(_Dispatcher):
    """Runs user callbacks on the asyncio loop the client was connected on;
    awaitables they return become tasks."""

    def __init__(self) -> None:
        self.loop: Optional[asyncio.AbstractEventLoop] = None
        self._tasks: "set[asyncio.Future[Any]]" = set()

    def _run(self, fn: Callable[..., Any], args: Sequence[Any]) -> None:
        try:
            result = fn(*args)
            if inspect.isawaitable(result):
                task = asyncio.ensure_future(result)
                self._tasks.add(task)
                task.add_done_callback(self._finished)
        except BaseException:
            log.exception("lemonmcp: a callback raised")

    def _finished(self, task: "asyncio.Future[Any]") -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("lemonmcp: a callback task failed", exc_info=task.exception())

    def soon(self, fn: Callable[..., Any], *args: Any) -> bool:
        loop = self.loop
        if loop is None or loop.is_closed():
            return False
        try:
            loop.call_soon_threadsafe(fn, *args)
            return True
        except RuntimeError:  # the loop closed meanwhile
            return False

    def deliver(self, fn: Callable[..., Any], *args: Any) -> None:
        if not self.soon(self._run, fn, args):
            super().deliver(fn, *args)

    def answer(self, run: Callable[[], None]) -> None:
        if not self.soon(run):
            super().answer(run)


# ------------------------------------------------------------------ session


class _Call:
    __slots__ = ("call_id", "finished", "progress")

    def __init__(self, progress: Optional[ProgressHandler]) -> None:
        self.call_id = 0
        self.finished = False
        self.progress = progress


class Callbacks:
    """The plain callables a client was given."""

    def __init__(
        self,
        on_notification: Optional[Callable[[Notification], Any]] = None,
        on_log: Optional[Callable[[LogRecord], Any]] = None,
        on_progress: Optional[Callable[[Progress], Any]] = None,
        on_closed: Optional[Callable[[Closed], Any]] = None,
        on_event: Optional[Callable[[str, Any], Any]] = None,
        roots: Union[None, HostHandler, Sequence[Any]] = None,
        sampling: Optional[HostHandler] = None,
        elicitation: Optional[HostHandler] = None,
        review: Optional[HostHandler] = None,
        on_sampling_denied: Optional[Callable[[JSONObject], Any]] = None,
        authorize: Optional[HostHandler] = None,
        token_store: Any = None,
    ) -> None:
        for name, value in (
            ("on_notification", on_notification),
            ("on_log", on_log),
            ("on_progress", on_progress),
            ("on_closed", on_closed),
            ("on_event", on_event),
            ("sampling", sampling),
            ("elicitation", elicitation),
            ("review", review),
            ("on_sampling_denied", on_sampling_denied),
            ("authorize", authorize),
        ):
            if value is not None and not callable(value):
                raise InvalidArgument(f"{name}: expected a callable, got {value!r}")
        self.on_notification = on_notification
        self.on_log = on_log
        self.on_progress = on_progress
        self.on_closed = on_closed
        self.on_event = on_event
        self.roots_list: Optional[List[JSONObject]] = None
        self.roots_fn: Optional[HostHandler] = None
        if roots is not None:
            if callable(roots):
                self.roots_fn = roots
            else:
                self.roots_list = normalize_roots(roots, "roots")
        self.sampling = sampling
        self.elicitation = elicitation
        self.review = review
        self.on_sampling_denied = on_sampling_denied
        self.authorize = authorize
        self.token_load: Optional[TokenLoad] = None
        self.token_save: Optional[TokenSave] = None
        if token_store is not None:
            self.token_load, self.token_save = token_store_pair(token_store)

    def kinds(self) -> List[str]:
        out = []
        if self.roots_fn is not None or self.roots_list is not None:
            out.append("roots")
        if self.sampling is not None:
            out.append("sampling")
        if self.elicitation is not None:
            out.append("elicitation")
        if self.authorize is not None:
            out.append("authorization")
        return out

    @property
    def host_token_store(self) -> bool:
        return self.token_load is not None


def token_store_pair(store: Any) -> Tuple[TokenLoad, TokenSave]:
    """``token_store=``: an object with ``load(key) -> record | None`` and
    ``save(record) -> None`` methods, or a ``(load, save)`` pair."""
    if isinstance(store, tuple) and len(store) == 2:
        load, save = store
    else:
        load = getattr(store, "load", None)
        save = getattr(store, "save", None)
    if not callable(load) or not callable(save):
        raise InvalidArgument(
            "token_store: expected an object with load(key) and save(record) methods, or a (load, save) pair, "
            f"got {type(store).__name__}"
        )
    return load, save


def normalize_roots(roots: Any, field: str) -> List[JSONObject]:
    """Roots as MCP wants them: ``[{"uri": "file:///...", "name"?}]``. Plain
    strings are URIs when they contain "://", else local paths."""
    if isinstance(roots, Mapping) and "roots" in roots:
        roots = roots["roots"]
    if isinstance(roots, (str, bytes)) or not isinstance(roots, (list, tuple)):
        raise InvalidArgument(f"{field}: expected a list of roots, got {roots!r}")
    out: List[JSONObject] = []
    for i, r in enumerate(roots):
        if isinstance(r, os.PathLike):
            r = os.fspath(r)
        if isinstance(r, str):
            if "://" in r:
                out.append({"uri": r})
            else:
                from pathlib import Path

                out.append({"uri": Path(r).resolve().as_uri()})
        elif isinstance(r, Mapping) and isinstance(r.get("uri"), str):
            out.append(dict(r))
        else:
            raise InvalidArgument(f"{field}[{i}]: expected a URI, a path or {{'uri': ...}}, got {r!r}")
    return out


class _Session:
    def __init__(self, config: Mapping[str, Any], callbacks: Callbacks, dispatcher: _Dispatcher) -> None:
        self.config: JSONObject = dict(config)
        self.callbacks = callbacks
        self.dispatcher = dispatcher
        self._cond = threading.Condition(threading.RLock())
        self._users = 0
        self._handle: Any = None
        self._progress: Dict[int, _Call] = {}
        self._registering = 0
        self._early: Dict[int, List[Progress]] = {}
        self._ready_waiters: List[Callable[[], None]] = []
        self.server_info: Optional[ServerInfo] = None
        self.closed: Optional[Closed] = None
        self.closed_event = threading.Event()
        self.failure: Optional[JSONObject] = None
        self.connected = False

        blob = dumps(self.config, "config")
        handle = _ffi.ClientHandle()
        lib.lmcp_client_new(blob, len(blob), handle, c_void_p())
        self._token = _reg.token()
        with _reg.lock:
            _reg.live[self._token] = handle
        self._handle = handle
        self._finalizer = weakref.finalize(self, _free_handle, self._token)
        self._finalizer.atexit = False  # _at_exit frees what is left
        me = weakref.ref(self)
        ev_token = _reg.token()
        host_token = _reg.token()
        with _reg.lock:
            _reg.targets[ev_token] = me
            _reg.targets[host_token] = me
        # destroy runs even when the registration fails, dropping the token.
        lib.lmcp_client_set_event_handler(handle, _EVENT_THUNK, ev_token, _DESTROY_THUNK, c_void_p())
        lib.lmcp_client_set_host_request_handler(handle, _HOST_THUNK, host_token, _DESTROY_THUNK, c_void_p())

    # --------------------------------------------------------- handle use

    def acquire(self) -> Any:
        """The handle, counted as in use until :meth:`done_using`, so that
        free never races a call in progress."""
        if _reg.forked:
            raise InternalError(
                "lemonmcp cannot be used in a fork() child of the process that loaded it "
                "(use multiprocessing's 'spawn' or 'forkserver' start method)"
            )
        with self._cond:
            h = self._handle
            if h is None:
                raise ClosedError(self._closed_message(), status=E_CLOSED)
            self._users += 1
            return h

    def done_using(self) -> None:
        with self._cond:
            self._users -= 1
            if self._users == 0 and self._handle is None:
                self._cond.notify_all()  # release() may be waiting

    @contextmanager
    def use(self) -> Iterator[Any]:
        h = self.acquire()
        try:
            yield h
        finally:
            self.done_using()

    def _closed_message(self) -> str:
        if self.closed is not None and self.closed.reason:
            return f"the client is closed ({self.closed.reason})"
        return "the client is closed"

    @property
    def released(self) -> bool:
        return self._handle is None

    def release(self) -> None:
        """Free the handle (once); waits for C calls in progress to return."""
        with self._cond:
            h = self._handle
            if h is None:
                return
            self._handle = None
            deadline = time.monotonic() + 30.0
            while self._users:
                left = deadline - time.monotonic()
                if left <= 0:
                    log.warning("lemonmcp: a library call did not return; the handle is left unfreed")
                    return
                self._cond.wait(left)
        with _reg.lock:
            _reg.live.pop(self._token, None)
        self._finalizer.detach()
        if _reg.forked:
            return
        if in_callback_of(self):
            # lmcp_client_free must not run inside one of this client's own
            # callbacks: hand it to a thread of ours (free never blocks).
            threading.Thread(target=lib.lmcp_client_free, args=(h,), name="lemonmcp-free", daemon=True).start()
        else:
            lib.lmcp_client_free(h)

    # --------------------------------------------------------- lifecycle

    def state(self) -> int:
        with self._cond:
            if self._handle is None:
                return _ffi.STATE_CLOSED
        st = c_int32()
        try:
            with self.use() as h:
                lib.lmcp_client_state(h, byref(st))
        except (ClosedError, InvalidHandle):
            return _ffi.STATE_CLOSED
        return int(st.value)

    def connect(self) -> None:
        with self.use() as h:
            lib.lmcp_client_connect(h, c_void_p())
        self.connected = True

    def wait_ready_slice(self, ms: int) -> None:
        """One bounded lmcp_client_wait_ready; raises on anything but ready."""
        with self.use() as h:
            lib.lmcp_client_wait_ready(h, ms, c_void_p())

    def wait_ready_blocking(self, timeout: Optional[float]) -> ServerInfo:
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            if deadline is None:
                ms = 200
            else:
                ms = max(0, min(200, int((deadline - time.monotonic()) * 1000)))
            try:
                self.wait_ready_slice(ms)
                break
            except TimeoutError:
                if self.state() not in (_ffi.STATE_CONNECTING, _ffi.STATE_READY):
                    raise  # timeouts.ready_ms ran out: the handshake failed
                if deadline is not None and time.monotonic() >= deadline:
                    raise TimeoutError(f"the server was not ready within {timeout:g} s") from None
        return self.fetch_server_info()

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
                _report("a ready waiter")

    def fetch_server_info(self) -> ServerInfo:
        out = c_void_p()
        n = c_size_t()
        with self.use() as h:
            lib.lmcp_client_server_info(h, out, byref(n), c_void_p())
        info = ServerInfo.from_json(_ffi.decode_json(_ffi.take_bytes(out, n.value)))
        self.server_info = info
        return info

    def close_blocking(self, timeout: Optional[float]) -> None:
        """lmcp_client_close, a short wait for the "closed" event, then free."""
        with self._cond:
            if self._handle is None:
                return
        before = self.state()
        ms = -1 if timeout is None else max(0, int(timeout * 1000))
        try:
            with self.use() as h:
                lib.lmcp_client_close(h, ms, c_void_p())
        except (TimeoutError, ClosedError, InvalidHandle):
            pass  # teardown goes on in the background / already gone
        if before != _ffi.STATE_NEW and self.connected and not in_callback_of(self):
            # The "closed" event follows close; keep it (reason, exit code)
            # unless this thread is the one that would deliver it.
            self.closed_event.wait(0.5)
        self.release()

    # --------------------------------------------------------- calls

    def start_call(
        self,
        method: str,
        params: Optional[Mapping[str, Any]],
        options: Mapping[str, Any],
        complete: Completion,
        progress: Optional[ProgressHandler] = None,
    ) -> int:
        """lmcp_client_call; ``complete(call_id, status, data)`` runs exactly
        once on a library thread when this returns."""
        if type(method) is not str or not method:
            raise InvalidArgument("method: expected a non-empty string")
        pjson: Optional[bytes] = None
        if type(params) is dict:  # the common case first: no copy
            pjson = dumps(params, "params")
        elif params is not None:
            if not isinstance(params, Mapping):
                raise InvalidArgument(f"params: expected an object, got {params!r}")
            pjson = dumps(dict(params), "params")
        ojson = dumps(dict(options), "options") if options else None
        call = _Call(progress)

        def done(call_id: int, status: int, data: bytes) -> None:
            with self._cond:
                call.finished = True
                self._progress.pop(call_id, None)
            complete(call_id, status, data)

        token = _reg.add_done(done)
        cid = c_uint64()
        if progress is not None:
            with self._cond:
                self._registering += 1
        ok = False
        try:
            h = self.acquire()
            try:
                lib.lmcp_client_call(
                    h,
                    method.encode("utf-8"),
                    pjson,
                    len(pjson) if pjson else 0,
                    ojson,
                    len(ojson) if ojson else 0,
                    _DONE_THUNK,
                    token,
                    byref(cid),
                    c_void_p(),
                )
            finally:
                self.done_using()
            ok = True
        finally:
            if not ok:
                _reg.pop_done(token)
            early: List[Progress] = []
            if progress is not None:
                with self._cond:
                    self._registering -= 1
                    if ok:
                        call.call_id = cid.value
                        early = self._early.pop(cid.value, [])
                        if not call.finished:
                            self._progress[cid.value] = call
                    if self._registering == 0:
                        self._early.clear()
        if progress is not None:
            for p in early:
                self.dispatcher.deliver(progress, p)
        return int(cid.value)

    def call_sync(self, method: str, params: Optional[Mapping[str, Any]], options: Mapping[str, Any]) -> Any:
        """lmcp_client_call_sync: the whole call on this thread, no hop to a
        library thread and back. Not interruptible: only for threads that
        never receive KeyboardInterrupt (every thread but the main one)."""
        if type(method) is not str or not method:
            raise InvalidArgument("method: expected a non-empty string")
        pjson: Optional[bytes] = None
        if type(params) is dict:
            pjson = dumps(params, "params")
        elif params is not None:
            if not isinstance(params, Mapping):
                raise InvalidArgument(f"params: expected an object, got {params!r}")
            pjson = dumps(dict(params), "params")
        ojson = dumps(dict(options), "options") if options else None
        out = c_void_p()
        n = c_size_t()
        h = self.acquire()
        try:
            lib.lmcp_client_call_sync(
                h,
                method.encode("utf-8"),
                pjson,
                len(pjson) if pjson else 0,
                ojson,
                len(ojson) if ojson else 0,
                out,
                byref(n),
                c_void_p(),
            )
        finally:
            self.done_using()
        data = _ffi.take_bytes(out, n.value)
        return json.loads(data) if data else None

    def cancel(self, call_id: int) -> bool:
        """lmcp_client_cancel; False when the call already finished."""
        try:
            with self.use() as h:
                lib.lmcp_client_cancel(h, call_id)
            return True
        except (NotFound, ClosedError, InvalidHandle):
            return False

    def notify(self, method: str, params: Optional[Mapping[str, Any]]) -> None:
        if not isinstance(method, str) or not method:
            raise InvalidArgument("method: expected a non-empty string")
        if params is not None and not isinstance(params, Mapping):
            raise InvalidArgument(f"params: expected an object, got {params!r}")
        pjson = dumps(dict(params), "params") if params is not None else None
        with self.use() as h:
            lib.lmcp_client_notify(h, method.encode("utf-8"), pjson, len(pjson) if pjson else 0, c_void_p())

    def respond(self, request_id: int, status: int, body: Optional[Mapping[str, Any]]) -> bool:
        """lmcp_client_respond; False when the request is gone (expired,
        answered) or the client is closed."""
        blob = dumps(dict(body), "result") if body is not None else None
        try:
            with self.use() as h:
                lib.lmcp_client_respond(h, request_id, status, blob, len(blob) if blob else 0, c_void_p())
            return True
        except (NotFound, ClosedError, InvalidHandle):
            return False

    # --------------------------------------------------------- events

    def _event(self, kind: str, data: bytes) -> None:
        payload: Any = json.loads(data) if data else {}
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
        elif kind == "ready":
            if isinstance(payload, dict) and isinstance(payload.get("server"), dict):
                self.server_info = ServerInfo.from_json(payload["server"])
            self._wake_ready_waiters()
        elif kind == "failed":
            self.failure = payload if isinstance(payload, dict) else {}
            self._wake_ready_waiters()
        elif kind == "sampling_denied":
            if cb.on_sampling_denied is not None:
                self.dispatcher.deliver(cb.on_sampling_denied, payload)
        elif kind == "closed":
            closed = Closed.from_json(payload)
            self.closed = closed
            self.closed_event.set()
            self._wake_ready_waiters()
            if cb.on_closed is not None:
                self.dispatcher.deliver(cb.on_closed, closed)

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

    # --------------------------------------------------------- host requests

    def _host_request(self, request_id: int, kind: str, data: bytes) -> None:
        payload: Any = json.loads(data) if data else {}
        if not isinstance(payload, dict):
            payload = {}
        if kind == "review" or kind in AUTH_KINDS:
            # No params: the review handler sees {"summary", "server"},
            # never the request's text; the OAuth questions are the
            # library's own, their payload is the request itself.
            params: Any = payload
        else:
            params = payload.get("params")
            if not isinstance(params, dict):
                params = {}
        cb = self.callbacks
        if kind == "roots" and cb.roots_list is not None and cb.roots_fn is None:
            self.respond(request_id, OK, {"roots": list(cb.roots_list)})
            return
        handler: Optional[HostHandler] = {
            "roots": cb.roots_fn,
            "sampling": cb.sampling,
            "elicitation": cb.elicitation,
            "review": cb.review,
            "authorize": cb.authorize,
            "token_load": cb.token_load,
            "token_save": cb.token_save,
        }.get(kind)
        if handler is None:
            self.respond(
                request_id,
                E_UNSUPPORTED,
                {"code": -32601, "message": f"the client has no {kind or 'such'} handler"},
            )
            return
        self.dispatcher.answer(lambda: self._answer(request_id, kind, handler, params))

    def _answer(self, request_id: int, kind: str, handler: HostHandler, params: JSONObject) -> None:
        """Run a host handler (on the dispatcher's thread or loop) and send
        its answer now or, for a future/awaitable, when it resolves."""
        try:
            result = handler(params)
        except BaseException as exc:
            self._reply_error(request_id, kind, exc)
            return
        if isinstance(result, concurrent.futures.Future):
            result.add_done_callback(lambda f: self._reply_future(request_id, kind, f))
            return
        if inspect.isawaitable(result):
            loop = getattr(self.dispatcher, "loop", None)
            if isinstance(self.dispatcher, _LoopDispatcher) and loop is not None and not loop.is_closed():
                task = asyncio.ensure_future(result)
                task.add_done_callback(lambda f: self._reply_future(request_id, kind, f))
                return
            try:
                result = _run_awaitable_in_thread(result)
            except BaseException as exc:
                self._reply_error(request_id, kind, exc)
                return
        self._reply_value(request_id, kind, result)

    def _reply_future(self, request_id: int, kind: str, fut: Any) -> None:
        try:
            if fut.cancelled():
                raise LemonMCPError("the host cancelled the request", status=E_INTERNAL)
            exc = fut.exception()
            if exc is not None:
                self._reply_error(request_id, kind, exc)
                return
            self._reply_value(request_id, kind, fut.result())
        except BaseException as exc:
            self._reply_error(request_id, kind, exc)

    def _reply_value(self, request_id: int, kind: str, result: Any) -> None:
        try:
            if kind == "roots" and not isinstance(result, Mapping):
                result = {"roots": normalize_roots(result, "roots() result")}
            elif kind == "roots":
                result = {**result, "roots": normalize_roots(result, "roots() result")}
            elif kind == "review" and isinstance(result, bool):
                result = {"approved": result}
            elif kind == "review" and isinstance(result, tuple) and len(result) == 2:
                approved, reason = result  # (False, "why")
                result = {"approved": bool(approved)}
                if reason:
                    result["reason"] = str(reason)
            elif kind == "authorize" and isinstance(result, str):
                result = {"redirect_url": result}  # where the browser ended up
            elif kind == "token_load" and result is None:
                result = {}  # nothing stored
            elif kind == "token_save":
                result = {}  # whatever save() returned: the answer is {}
            if not isinstance(result, Mapping):
                raise InvalidArgument(f"the {kind} handler returned {type(result).__name__}, expected a dict")
            self.respond(request_id, OK, result)
        except BaseException as exc:
            self._reply_error(request_id, kind, exc)

    def _reply_error(self, request_id: int, kind: str, exc: BaseException) -> None:
        """An exception in a host handler becomes an error reply. The text of
        a LemonMCPError is sent (the host chose it); any other exception is
        logged here and the server only learns that the handler failed.

        The OAuth questions (AUTH_KINDS) are stricter: their handlers see
        tokens, codes and secrets, and an exception's text may repeat one,
        so it is neither sent nor logged (only its type is), and no
        traceback is logged. A LemonMCPError still chooses the status."""
        body: JSONObject
        if kind in AUTH_KINDS:
            status = exc.status if isinstance(exc, LemonMCPError) and exc.status != OK else E_INTERNAL
            if not isinstance(exc, Exception):
                log.warning("lemonmcp: the %s handler was interrupted (%s)", kind, type(exc).__name__)
            else:
                log.error("lemonmcp: the %s handler raised %s (its message is not shown: it may hold a secret)",
                          kind, type(exc).__name__)
            body = {"message": f"the client's {kind} handler failed"}
        elif isinstance(exc, LemonMCPError):
            status = exc.status if exc.status != OK else E_INTERNAL
            body = {"message": exc.message or f"the {kind} handler failed"}
            if exc.code is not None:
                body["code"] = exc.code
            if exc.data is not None:
                body["data"] = exc.data
        else:
            if not isinstance(exc, Exception):  # SystemExit, KeyboardInterrupt...
                log.warning("lemonmcp: the %s handler was interrupted: %r", kind, exc)
            else:
                log.error("lemonmcp: the %s handler raised", kind, exc_info=exc)
            status = E_INTERNAL
            body = {"message": f"the client's {kind} handler failed"}
        try:
            self.respond(request_id, status, body)
        except BaseException:
            _report("an error reply")
