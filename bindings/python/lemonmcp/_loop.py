"""A session's calls and waits from asyncio, shared by
:class:`~lemonmcp.aio.AsyncClient` and :class:`~lemonmcp.aio.AsyncHost`.

A call's completion goes to the running loop's completion queue
(:func:`~lemonmcp._queue.loop_queue`), whose descriptor the loop watches:
no library thread enters Python for it, and a burst of completions costs
one wake-up. Of the calls made by the tasks a drain resumed (several calls
completed together, each task starting its next), the first starts at once
and the others together once those tasks have run, inside one
lmcp_client_hold_sends: their requests reach a stdio server in one write,
which wakes it once. A loop
that cannot watch a descriptor gets completions through the done callback
instead (:meth:`LoopDispatcher.settle`). A wait for a
state (ready, closed) sleeps on the loop until an event of the session
wakes it (its ready waiters), re-checking now and then. Nothing here runs
on an executor thread.
"""

from __future__ import annotations

import asyncio
from typing import Any, Callable, List, Mapping, Optional, Tuple

from ._codec import result_of
from ._dispatch import LoopDispatcher, ProgressHandler
from ._queue import LoopQueue, loop_queue, next_tag
from ._session import HandleSession, encode_call

__all__ = ["LoopCaller"]


def _wake(fut: "asyncio.Future[None]") -> None:
    if not fut.done():
        fut.set_result(None)


class _Pending:
    """A call of a burst: its caller's future and tag, its encoded inputs,
    and its id once started (0 before)."""

    __slots__ = ("fut", "tag", "mb", "pjson", "ojson", "target", "call_id")

    def __init__(
        self,
        fut: "asyncio.Future[Tuple[int, bytes]]",
        tag: int,
        inputs: Tuple[bytes, Optional[bytes], Optional[bytes]],
        target: Optional[str],
    ) -> None:
        self.fut = fut
        self.tag = tag
        self.mb, self.pjson, self.ojson = inputs
        self.target = target
        self.call_id = 0


class LoopCaller:
    """Runs one session's calls on whichever loop awaits them."""

    __slots__ = ("sess", "dispatcher", "_lq", "_lq_loop", "_burst", "_burst_loop")

    def __init__(self, sess: HandleSession, dispatcher: LoopDispatcher) -> None:
        self.sess = sess
        self.dispatcher = dispatcher
        # The completion queue of the loop the last call ran on.
        self._lq: Optional[LoopQueue] = None
        self._lq_loop: Optional[asyncio.AbstractEventLoop] = None
        # The loop whose turn has opened a burst, and the calls waiting to
        # be started together (_start_burst).
        self._burst: List[_Pending] = []
        self._burst_loop: Optional[asyncio.AbstractEventLoop] = None

    def bind_loop(self) -> asyncio.AbstractEventLoop:
        """The running loop; user callbacks run on the first one (until it
        closes)."""
        loop = asyncio.get_running_loop()
        if self.dispatcher.loop is None or self.dispatcher.loop.is_closed():
            self.dispatcher.loop = loop
        return loop

    async def run(
        self,
        method: str,
        params: Optional[Mapping[str, Any]],
        opts: Mapping[str, Any],
        handler: Optional[ProgressHandler] = None,
        target: Optional[str] = None,
    ) -> Any:
        """Make a call and return its result (or raise its error).
        Cancelling the awaiting task cancels the call."""
        loop = asyncio.get_running_loop()
        bound = self.dispatcher.loop
        if bound is not loop and (bound is None or bound.is_closed()):
            self.dispatcher.loop = loop  # bind_loop, inlined: it runs on every call
        lq = self._lq if self._lq_loop is loop else self._loop_queue(loop)
        if lq is None:
            return await self._run_with_callback(method, params, opts, handler, target)
        fut: "asyncio.Future[Tuple[int, bytes]]" = loop.create_future()
        tag = next_tag()
        waiting = lq.waiting
        sess = self.sess
        # In a turn of tasks a drain resumed, the first call goes at once (the
        # server has work while the others gather) and opens a burst; the
        # next ones join it, started once those tasks have all run.
        in_burst_turn = handler is None and lq.bursting and sess.holds_sends
        if in_burst_turn and self._burst_loop is loop:
            item = _Pending(fut, tag, encode_call(method, params, opts), target)
            waiting[tag] = fut
            self._burst.append(item)
            try:
                status, data = await fut
            except asyncio.CancelledError:
                waiting.pop(tag, None)
                if item.call_id:  # started: cancel it (before, the burst skips it)
                    sess.cancel(item.call_id)
                raise
            return result_of(status, data)
        if in_burst_turn and self._burst_loop is None:
            self._burst_loop = loop
            loop.call_soon(self._start_burst, lq)
        waiting[tag] = fut
        try:
            call_id = sess.start_queued(method, params, opts, lq.queue.handle, tag, handler, target)
        except BaseException:
            waiting.pop(tag, None)
            raise
        try:
            status, data = await fut
        except asyncio.CancelledError:
            waiting.pop(tag, None)
            sess.cancel(call_id)
            raise
        finally:
            if handler is not None:
                sess.finish_queued(call_id)
        return result_of(status, data)

    def _start_burst(self, lq: LoopQueue) -> None:
        """Start the calls of the burst, their requests held and sent
        together; a call that cannot start fails its caller's future."""
        burst, self._burst, self._burst_loop = self._burst, [], None
        sess = self.sess
        held = sess.hold_sends() if len(burst) > 1 else None
        try:
            for item in burst:
                fut = item.fut
                if fut.done():  # its task was cancelled before the start
                    continue
                try:
                    item.call_id = sess.start_encoded_queued(item.mb, item.pjson, item.ojson, lq.queue.handle, item.tag, item.target)
                except Exception as exc:  # the caller's error, as a direct start raises it
                    lq.waiting.pop(item.tag, None)
                    fut.set_exception(exc)
        finally:
            if held is not None:
                sess.release_sends(held)

    def _loop_queue(self, loop: asyncio.AbstractEventLoop) -> Optional[LoopQueue]:
        lq = loop_queue(loop)
        self._lq, self._lq_loop = lq, loop
        return lq

    async def _run_with_callback(
        self,
        method: str,
        params: Optional[Mapping[str, Any]],
        opts: Mapping[str, Any],
        handler: Optional[ProgressHandler],
        target: Optional[str],
    ) -> Any:
        """run for a loop that cannot watch a descriptor: completions come
        through the done callback and call_soon_threadsafe."""
        fut: "asyncio.Future[Tuple[int, bytes]]" = self.bind_loop().create_future()
        settle = self.dispatcher.settle

        def complete(call_id: int, status: int, data: bytes) -> None:
            settle(fut, status, data)

        call_id = self.sess.start_call(method, params, opts, complete, handler, target)
        try:
            status, data = await fut
        except asyncio.CancelledError:
            self.sess.cancel(call_id)
            raise
        return result_of(status, data)

    async def wait_until(
        self, settled: Callable[[], bool], timeout: Optional[float], expired: Callable[[], BaseException]
    ) -> None:
        """Sleep on the loop until ``settled()`` (checked at each of the
        session's state events, and every half second), or raise
        ``expired()`` after ``timeout`` seconds (None: no limit)."""
        loop = self.bind_loop()
        sess = self.sess
        deadline = None if timeout is None else loop.time() + timeout
        while True:
            fut: "asyncio.Future[None]" = loop.create_future()

            def wake(fut: "asyncio.Future[None]" = fut) -> None:
                try:
                    loop.call_soon_threadsafe(_wake, fut)
                except RuntimeError:
                    pass

            sess.add_ready_waiter(wake)
            try:
                if settled():
                    return
                left = 0.5 if deadline is None else min(0.5, deadline - loop.time())
                if left <= 0:
                    raise expired()
                try:
                    await asyncio.wait_for(fut, left)
                except asyncio.TimeoutError:
                    pass  # re-check: the wake-up is only a hint
            finally:
                sess.remove_ready_waiter(wake)
