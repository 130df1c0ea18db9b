"""Where the host's Python callables run, and how app requests are answered.

A ``Dispatcher`` decides on which thread user callbacks run: the blocking
client runs event callbacks on the library thread that delivered them and
each app-request answer on a thread of its own; the asyncio client
(``LoopDispatcher``) runs both on its event loop, and also resolves call
futures there, waking the loop once per batch of completions.

App requests (roots, sampling, elicitation, review, and the library's own
OAuth question authorize, and the application store's store_load /
store_save) go from
:func:`handle_app_request` to the host's callable and back to the library
with ``lmcp_client_respond``: a value, a ``concurrent.futures.Future`` or an
awaitable that resolves to one, or an exception that becomes an error reply.

``store=`` (:func:`app_store_handlers`) answers the application's store
(``{"type": "app"}``, grants and pins alike): ``load(collection, key)``
and ``save(collection, key, expected_version, document)``, a
compare-and-save. Its answers are never ``{}``: a store that failed or
answered something else fails that request.
"""

from __future__ import annotations

import collections.abc
import concurrent.futures
import logging
import os
import threading
import types
from typing import (
    TYPE_CHECKING,
    Any,
    Awaitable,
    Callable,
    Dict,
    List,
    Mapping,
    Optional,
    Protocol,
    Sequence,
    Tuple,
    Union,
)

from ._callbacks import report
from ._codec import JSONObject, loads
from .errors import E_INTERNAL, E_UNSUPPORTED, OK, InvalidArgument, LemonMCPError
from .types import Closed, LogRecord, Notification, Progress, StoreConflict

if TYPE_CHECKING:
    import asyncio  # the blocking client and the command line never load it

log = logging.getLogger("lemonmcp")


def _is_awaitable(x: Any) -> bool:
    """inspect.isawaitable, without importing inspect (and asyncio) into
    every process that only makes blocking calls."""
    return isinstance(x, collections.abc.Awaitable) or (
        isinstance(x, types.GeneratorType) and bool(x.gi_code.co_flags & 0x100)  # CO_ITERABLE_COROUTINE
    )

HostHandler = Callable[[JSONObject], Any]
ProgressHandler = Callable[[Progress], Any]

HOST_KINDS = (
    "roots",
    "sampling",
    "elicitation",
    "review",
    "authorize",
    "store_load",
    "store_save",
)

#: The library's own questions about OAuth (not the server's requests): their
#: payload is the whole request object, and what their handlers raise is
#: never repeated anywhere (it may hold a token, a code or a secret).
AUTH_KINDS = ("authorize",)

#: The library's questions to the application's store ({"type": "app"},
#: docs/app-requests.md): store_load {"collection", "key"} and store_save
#: {"collection", "key", "expected_version", "document"}, answered by
#: app_store_handlers from ``store=``.
STORE_KINDS = ("store_load", "store_save")


class RequestParams(Dict[str, Any]):
    """The params of a server's request, as a host's handler receives them:
    the request's params (a dict), and ``server``, the name of the host's
    server that asked (a client's handlers get a plain dict)."""

    server: str

    def __init__(self, params: Mapping[str, Any], server: str) -> None:
        super().__init__(params)
        self.server = server


class Answering(Protocol):
    """What answers app requests: a client's or a host's session."""

    callbacks: "Callbacks"
    dispatcher: "Dispatcher"

    def respond(self, request_id: int, status: int, body: Optional[Mapping[str, Any]]) -> bool: ...


# ---------------------------------------------------------------- dispatchers


class Dispatcher:
    """Runs user callbacks. The blocking client runs them right on the
    library thread that delivered the event."""

    def deliver(self, fn: Callable[..., Any], *args: Any) -> None:
        try:
            result = fn(*args)
            if _is_awaitable(result):
                run_awaitable_in_thread(result)
        except BaseException:
            log.exception("lemonmcp: a callback raised")

    def answer(self, run: Callable[[], None]) -> None:
        """Run a app-request answer: on its own thread, so a handler that
        asks a person does not hold up the library's threads."""
        threading.Thread(target=run, name="lemonmcp-app-request", daemon=True).start()


def run_awaitable_in_thread(aw: Awaitable[Any]) -> Any:
    import asyncio

    async def wrap() -> Any:
        return await aw

    return asyncio.run(wrap())


Settled = Tuple[int, bytes]  # a completion's status and data


class LoopDispatcher(Dispatcher):
    """Runs user callbacks on the asyncio loop the client was connected on;
    awaitables they return become tasks. Completions reach their futures
    through one queue: the first completion of a batch wakes the loop
    (``call_soon_threadsafe``), the ones that arrive before the loop runs
    ride along, so 16 calls in flight cost far fewer wake-ups than 16."""

    def __init__(self) -> None:
        self.loop: Optional[asyncio.AbstractEventLoop] = None
        self._tasks: "set[asyncio.Future[Any]]" = set()
        self._lock = threading.Lock()
        # loop -> completions waiting for that loop's one scheduled _drain
        self._settled: "Dict[asyncio.AbstractEventLoop, List[Tuple[asyncio.Future[Settled], int, bytes]]]" = {}

    def _run(self, fn: Callable[..., Any], args: Sequence[Any]) -> None:
        try:
            result = fn(*args)
            if _is_awaitable(result):
                import asyncio

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

    def settle(self, fut: "asyncio.Future[Settled]", status: int, data: bytes) -> None:
        """From a library thread: resolve fut with (status, data) on its loop.
        Completions queue per loop (a client may be awaited from more than one
        loop), and only the first of a batch wakes that loop."""
        loop = fut.get_loop()
        with self._lock:
            batch = self._settled.get(loop)
            if batch is not None:  # a wake-up is already on its way
                batch.append((fut, status, data))
                return
            self._settled[loop] = [(fut, status, data)]
        try:
            loop.call_soon_threadsafe(self._drain, loop)
        except RuntimeError:  # the loop is closed: nobody is waiting any more
            with self._lock:
                self._settled.pop(loop, None)

    def _drain(self, loop: asyncio.AbstractEventLoop) -> None:
        with self._lock:
            batch = self._settled.pop(loop, ())
        for fut, status, data in batch:
            if not fut.done():
                fut.set_result((status, data))


# ------------------------------------------------------------------ callbacks


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
        store: Any = None,
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
        self.store_load: Optional[HostHandler] = None
        self.store_save: Optional[HostHandler] = None
        if store is not None:
            self.store_load, self.store_save = app_store_handlers(store)

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
    def app_store(self) -> bool:
        return self.store_load is not None

    def handler(self, kind: str) -> Optional[HostHandler]:
        """The host's callable for a app-request kind, if it gave one."""
        table: Dict[str, Optional[HostHandler]] = {
            "roots": self.roots_fn,
            "sampling": self.sampling,
            "elicitation": self.elicitation,
            "review": self.review,
            "authorize": self.authorize,
            "store_load": self.store_load,
            "store_save": self.store_save,
        }
        return table.get(kind)


def store_pair(store: Any, option: str, methods: str) -> Tuple[Callable[..., Any], Callable[..., Any]]:
    """An application's store (``store=``): an object
    with ``load`` and ``save`` methods (``methods`` says their arguments, for
    the error), or a ``(load, save)`` pair."""
    if isinstance(store, tuple) and len(store) == 2:
        load, save = store
    else:
        load = getattr(store, "load", None)
        save = getattr(store, "save", None)
    if not callable(load) or not callable(save):
        raise InvalidArgument(
            f"{option}: expected an object with {methods} methods, or a (load, save) pair, got {type(store).__name__}"
        )
    return load, save


class StoreFailed(LemonMCPError):
    """A token store's method raised or answered a value of another shape.
    The binding writes its message from type names and versions only (never
    a value: a record holds tokens), so it is the one message of a failed
    OAuth question that is logged and sent."""

    def __init__(self, message: str) -> None:
        super().__init__(message, status=E_INTERNAL)


def _is_version(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _shape(value: Any) -> str:
    """A value's shape for an error: its type (and a tuple's length), never
    its content."""
    if isinstance(value, tuple):
        return f"a tuple of {len(value)}"
    return type(value).__name__


def _store_call(method: str, call: Callable[[], Any], answer: Callable[[Any], JSONObject], option: str) -> Any:
    """Call a versioned store's method and turn its result into the answer,
    now or, for a future or an awaitable, when it resolves. An exception
    becomes :class:`StoreFailed` naming the method and the exception's type
    (its text may hold a token)."""

    def failed(exc: BaseException) -> StoreFailed:
        return StoreFailed(f"the {option}'s {method} raised {type(exc).__name__}")

    try:
        result = call()
    except Exception as exc:
        raise failed(exc) from None
    if isinstance(result, concurrent.futures.Future):
        out: "concurrent.futures.Future[JSONObject]" = concurrent.futures.Future()

        def resolved(f: "concurrent.futures.Future[Any]") -> None:
            try:
                if f.cancelled():
                    raise StoreFailed(f"the {option}'s {method} was cancelled")
                exc = f.exception()
                if exc is not None:
                    raise failed(exc)
                out.set_result(answer(f.result()))
            except BaseException as exc:
                out.set_exception(exc)

        result.add_done_callback(resolved)
        return out
    if _is_awaitable(result):
        pending = result

        async def resolve() -> JSONObject:
            try:
                value = await pending
            except Exception as exc:
                raise failed(exc) from None
            return answer(value)

        return resolve()
    return answer(result)


def app_store_handlers(store: Any) -> Tuple[HostHandler, HostHandler]:
    """``store=``, the application's store ({"type": "app"}): ``load(collection,
    key) -> (document, version) | None`` and ``save(collection, key,
    expected_version, document) -> version | StoreConflict(document,
    version)``, a compare-and-save on the application's storage (either may
    be async), as the handlers of store_load and store_save. The document
    is opaque: keep it as it is."""
    load, save = store_pair(
        store, "store", "load(collection, key) and save(collection, key, expected_version, document)"
    )

    def where(payload: JSONObject) -> Tuple[str, str]:
        collection, key = payload.get("collection"), payload.get("key")
        if not isinstance(collection, str) or not isinstance(key, str):
            raise StoreFailed("the library's store request names no collection and key")
        return collection, key

    def store_load(payload: JSONObject) -> Any:
        collection, key = where(payload)
        return _store_call("load", lambda: load(collection, key), document_load_answer, "store")

    def store_save(payload: JSONObject) -> Any:
        collection, key = where(payload)
        expected, document = payload.get("expected_version"), payload.get("document")
        if not isinstance(expected, int) or not _is_version(expected) or not isinstance(document, dict):
            raise StoreFailed("the library's store_save has no expected_version and document")
        return _store_call(
            "save",
            lambda: save(collection, key, expected, document),
            lambda result: document_save_answer(result, expected),
            "store",
        )

    return store_load, store_save


def document_load_answer(result: Any) -> JSONObject:
    """The store_load answer from what ``load`` returned: ``(document,
    version)`` or None."""
    if result is None:
        return {"version": 0}
    if isinstance(result, tuple) and len(result) == 2:
        document, version = result
        if _is_version(version) and version == 0:
            return {"version": 0}
        if isinstance(document, Mapping) and _is_version(version) and version > 0:
            return {"version": version, "document": dict(document)}
    raise StoreFailed(f"the store's load returned {_shape(result)}, expected (document, version) or None")


def document_save_answer(result: Any, expected: int) -> JSONObject:
    """The store_save answer from what ``save`` returned: the new version,
    or a :class:`StoreConflict`."""
    if isinstance(result, StoreConflict):
        if result.document is None and result.version == 0:
            return {"conflict": True, "version": 0}
        if isinstance(result.document, Mapping) and _is_version(result.version) and result.version > 0:
            return {"conflict": True, "version": result.version, "document": dict(result.document)}
        raise StoreFailed("the store's save returned a StoreConflict without a document and a version >= 1")
    if _is_version(result) and result > expected:
        return {"version": result}
    raise StoreFailed(
        f"the store's save returned {_shape(result)}, expected a version above expected_version "
        f"{expected} or StoreConflict(document, version)"
    )


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


# -------------------------------------------------------------- app requests


def handle_app_request(sess: Answering, request_id: int, kind: str, data: bytes) -> None:
    """A app request from the library (on a library thread): answer roots
    from the list at once, refuse a kind without a handler, else run the
    handler through the dispatcher."""
    payload: Any = loads(data) if data else {}
    if not isinstance(payload, dict):
        payload = {}
    if kind == "review" or kind in AUTH_KINDS or kind in STORE_KINDS:
        # No params: the review handler sees {"summary", "server"}, never
        # the request's text; the OAuth and pin store questions are the
        # library's own, their payload is the request itself.
        params: Any = payload
    else:
        params = payload.get("params")
        if not isinstance(params, dict):
            params = {}
        server = payload.get("server")
        if isinstance(server, str):  # a host's request: which server asked
            params = RequestParams(params, server)
    cb = sess.callbacks
    if kind == "roots" and cb.roots_list is not None and cb.roots_fn is None:
        sess.respond(request_id, OK, {"roots": list(cb.roots_list)})
        return
    handler = cb.handler(kind)
    if handler is None:
        sess.respond(
            request_id,
            E_UNSUPPORTED,
            {"code": -32601, "message": f"the client has no {kind or 'such'} handler"},
        )
        return
    sess.dispatcher.answer(lambda: _answer(sess, request_id, kind, handler, params))


def _answer(sess: Answering, request_id: int, kind: str, handler: HostHandler, params: JSONObject) -> None:
    """Run a host handler (on the dispatcher's thread or loop) and send its
    answer now or, for a future/awaitable, when it resolves."""
    try:
        result = handler(params)
    except BaseException as exc:
        _reply_error(sess, request_id, kind, exc)
        return
    if isinstance(result, concurrent.futures.Future):
        result.add_done_callback(lambda f: _reply_future(sess, request_id, kind, f))
        return
    if _is_awaitable(result):
        disp = sess.dispatcher
        if isinstance(disp, LoopDispatcher) and disp.loop is not None and not disp.loop.is_closed():
            import asyncio

            task = asyncio.ensure_future(result)
            task.add_done_callback(lambda f: _reply_future(sess, request_id, kind, f))
            return
        try:
            result = run_awaitable_in_thread(result)
        except BaseException as exc:
            _reply_error(sess, request_id, kind, exc)
            return
    _reply_value(sess, request_id, kind, result)


def _reply_future(sess: Answering, request_id: int, kind: str, fut: Any) -> None:
    try:
        if fut.cancelled():
            raise LemonMCPError("the host cancelled the request", status=E_INTERNAL)
        exc = fut.exception()
        if exc is not None:
            _reply_error(sess, request_id, kind, exc)
            return
        _reply_value(sess, request_id, kind, fut.result())
    except BaseException as exc:
        _reply_error(sess, request_id, kind, exc)


def _reply_value(sess: Answering, request_id: int, kind: str, result: Any) -> None:
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
        elif kind in STORE_KINDS:
            # Already the answer (document_load_answer, document_save_answer).
            if not isinstance(result, Mapping) or not _is_version(result.get("version")):
                raise StoreFailed(f"the {kind} answer has no version")
        if not isinstance(result, Mapping):
            raise InvalidArgument(f"the {kind} handler returned {type(result).__name__}, expected a dict")
        sess.respond(request_id, OK, result)
    except BaseException as exc:
        _reply_error(sess, request_id, kind, exc)


def _reply_error(sess: Answering, request_id: int, kind: str, exc: BaseException) -> None:
    """An exception in a host handler becomes an error reply. The text of a
    LemonMCPError is sent (the host chose it); any other exception is logged
    here and the server only learns that the handler failed.

    The OAuth questions (AUTH_KINDS) are stricter: their handlers see tokens,
    codes and secrets, and an exception's text may repeat one, so it is
    neither sent nor logged (only its type is), and no traceback is logged.
    A LemonMCPError still chooses the status."""
    body: JSONObject
    if isinstance(exc, StoreFailed):  # its message holds no value: shown
        log.error("lemonmcp: %s (no value is shown: a record holds tokens)", exc.message)
        body = {"message": exc.message}
        status = E_INTERNAL
    elif kind in AUTH_KINDS:
        status = exc.status if isinstance(exc, LemonMCPError) and exc.status != OK else E_INTERNAL
        if not isinstance(exc, Exception):
            log.warning("lemonmcp: the %s handler was interrupted (%s)", kind, type(exc).__name__)
        else:
            log.error(
                "lemonmcp: the %s handler raised %s (its message is not shown: it may hold a secret)",
                kind,
                type(exc).__name__,
            )
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
        sess.respond(request_id, status, body)
    except BaseException:
        report("an error reply")
