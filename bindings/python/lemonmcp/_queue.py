"""Completions without callbacks: the library's completion queues
(``lmcp_queue``, the QUEUE section of lemonmcp.h).

A call made with ``lmcp_client_call_queued`` completes into a queue; the
library never enters Python for it. The queue's descriptor (an eventfd) is
readable while completions wait, and one ``lmcp_queue_pop`` takes them all.
So a completion costs no GIL hand-off between a library thread and the
waiting thread, and a burst of completions costs one wake-up.

- :class:`ThreadWaiter`: the blocking client's calls, on any thread. One
  queue per thread (a thread makes one blocking call at a time); the thread
  waits in ``poll()`` on the descriptor, which a signal interrupts, so Ctrl-C
  raises KeyboardInterrupt at once, and a timeout wakes it regularly to
  notice a signal delivered to another thread.
- :class:`LoopQueue`: the asyncio client. One queue per event loop,
  registered with ``loop.add_reader``; each wake-up drains the queue and
  resolves the futures of the completed calls, on the loop's thread.

Completions are matched by tag (a number chosen before the call, so a
completion that is queued before ``lmcp_client_call_queued`` returns is
still recognised). A completion nobody waits for any more (its caller was
interrupted or cancelled) is dropped when it arrives.
"""

from __future__ import annotations

import itertools
import select
import struct
import threading
import weakref
from ctypes import byref, c_int, c_size_t, c_void_p, string_at
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple

from . import _ffi
from ._callbacks import registry
from ._ffi import lib, lib_held
from .errors import InternalError

if TYPE_CHECKING:
    import asyncio  # only the asyncio client's LoopQueue uses it, and loads it

__all__ = ["CompletionQueue", "ThreadWaiter", "LoopQueue", "thread_waiter", "loop_queue"]

#: One popped completion: (tag, call_id, status, json bytes).
Record = Tuple[int, int, int, bytes]

_RECORD = struct.Struct(_ffi.COMPLETION_LAYOUT)
_unpack = _RECORD.unpack_from
_RSIZE = _RECORD.size


def _free_queue(handle: Any) -> None:
    if not registry.forked:  # the Go runtime does not survive fork()
        lib.lmcp_queue_free(handle)


class CompletionQueue:
    """One ``lmcp_queue``: its handle, its descriptor, and pop. Popped from
    one thread at a time (the owner of the waiter or loop); freed when
    garbage collected or by :meth:`free`."""

    __slots__ = ("handle", "fd", "_batch", "_count", "_size", "_args", "_finalizer", "__weakref__")

    def __init__(self) -> None:
        if registry.forked:
            # Any library call would hang here: the Go runtime does not
            # survive fork() (a thread's first call makes its queue).
            raise InternalError(
                "lemonmcp cannot be used in a fork() child of the process that loaded it "
                "(use multiprocessing's 'spawn' or 'forkserver' start method)"
            )
        handle = _ffi.QueueHandle()
        fd = c_int(-1)
        lib.lmcp_queue_new(byref(handle), byref(fd), c_void_p())
        self.handle = handle
        self.fd = fd.value
        self._batch = c_void_p()
        self._count = c_size_t()
        self._size = c_size_t()
        # The out-parameters are reused by every pop (one thread pops),
        # passed as instances (cheaper than byref()s, see _session._SyncSlot).
        self._args = (self._batch, self._count, self._size)
        self._finalizer = weakref.finalize(self, _free_queue, handle)

    def pop(self) -> List[Record]:
        """Every waiting completion, oldest first (without blocking)."""
        lib_held.lmcp_queue_pop(self.handle, 0, *self._args)
        n = self._count.value
        if not n:
            return []
        base = self._batch.value or 0  # not NULL when n > 0
        try:
            blob = string_at(base, self._size.value)
        finally:
            lib_held.lmcp_free(base)
        out = []
        for i in range(n):
            tag, call_id, status, _, addr, length = _unpack(blob, i * _RSIZE)
            off = addr - base
            out.append((tag, call_id, status, blob[off : off + length]))
        return out

    def free(self) -> None:
        """Release the queue now (its waiting completions are dropped)."""
        self._finalizer()


# ------------------------------------------------------------ blocking calls

# How often a blocked caller wakes up, so that the main thread takes a
# KeyboardInterrupt even when the signal was delivered to another thread.
WAKE_MS = 100

_tags = itertools.count(1)  # next() on a count is atomic under the GIL


def next_tag() -> int:
    return next(_tags)


class ThreadWaiter:
    """A thread's queue for its blocking calls."""

    __slots__ = ("queue", "_poll", "_waiting", "_stash")

    def __init__(self) -> None:
        self.queue = CompletionQueue()
        self._poll = select.poll()
        self._poll.register(self.queue.fd, select.POLLIN)
        # Tags this thread waits for: more than one only when a signal
        # handler makes a call while the thread waits for another.
        self._waiting: "set[int]" = set()
        self._stash: Dict[int, Record] = {}

    def expect(self, tag: int) -> None:
        """Announce tag before the call is made."""
        self._waiting.add(tag)

    def forget(self, tag: int) -> None:
        """Nobody waits for tag any more (the call failed or was abandoned)."""
        self._waiting.discard(tag)
        self._stash.pop(tag, None)

    def wait(self, tag: int) -> Record:
        """Block until tag's completion is popped. Signals interrupt the wait
        (a KeyboardInterrupt propagates; the caller cancels the call)."""
        rec = self._stash.pop(tag, None)
        if rec is not None:
            self._waiting.discard(tag)
            return rec
        poll = self._poll.poll
        pop = self.queue.pop
        waiting = self._waiting
        try:
            while True:
                if not poll(WAKE_MS):
                    continue
                found: Optional[Record] = None
                for rec in pop():
                    t = rec[0]
                    if t == tag:
                        found = rec
                    elif t in waiting:
                        self._stash[t] = rec  # an outer wait's completion
                if found is not None:
                    return found
        finally:
            waiting.discard(tag)


class _ThreadWaiters(threading.local):
    waiter: Optional[ThreadWaiter] = None


_waiters = _ThreadWaiters()


def thread_waiter() -> ThreadWaiter:
    """This thread's waiter (created on first use, freed with the thread)."""
    w = _waiters.waiter
    if w is None:
        w = _waiters.waiter = ThreadWaiter()
    return w


# ------------------------------------------------------------ asyncio

Settled = Tuple[int, bytes]  # a completion's status and data


class LoopQueue:
    """An event loop's queue: completions resolve their futures on the loop
    in one drain per wake-up."""

    __slots__ = ("queue", "waiting", "bursting", "__weakref__")

    def __init__(self) -> None:
        self.queue = CompletionQueue()
        self.waiting: "Dict[int, asyncio.Future[Settled]]" = {}
        # Set from a drain that resolved several calls until the tasks it
        # resumed have run: the calls they make then start in a burst
        # (_loop.LoopCaller).
        self.bursting = False

    def drain(self) -> None:
        """The loop's reader: resolve every completed call's future."""
        waiting = self.waiting
        resolved = 0
        last: "Optional[asyncio.Future[Settled]]" = None
        for tag, _, status, data in self.queue.pop():
            fut = waiting.pop(tag, None)
            if fut is not None and not fut.done():
                fut.set_result((status, data))
                resolved += 1
                last = fut
        if resolved > 1 and last is not None and not self.bursting:
            self.bursting = True
            # On the loop (this module does not import asyncio); runs after
            # the resumed tasks, whose wake-ups were scheduled first.
            last.get_loop().call_soon(self._end_burst)

    def _end_burst(self) -> None:
        self.bursting = False


# One queue per loop, for as long as the loop lives. The loop is held weakly
# and the queue does not refer to it, so a dropped loop is collected and its
# queue freed with it.
_loop_queues: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Optional[LoopQueue]]" = weakref.WeakKeyDictionary()
_loop_lock = threading.Lock()


def loop_queue(loop: asyncio.AbstractEventLoop) -> Optional[LoopQueue]:
    """The running loop's queue, registered with add_reader on first use;
    None when the loop cannot watch a descriptor (then completions take the
    callback path)."""
    try:
        return _loop_queues[loop]
    except KeyError:
        pass
    with _loop_lock:
        if loop in _loop_queues:
            return _loop_queues[loop]
        lq: Optional[LoopQueue] = LoopQueue()
        assert lq is not None
        try:
            loop.add_reader(lq.queue.fd, lq.drain)
        except (NotImplementedError, AttributeError):
            lq.queue.free()
            lq = None
        _loop_queues[loop] = lq
        return lq
