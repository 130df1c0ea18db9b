"""The application's store answered by the Python binding, for the store's
contract (appstore_test.go, TestAppStoreContractThroughBindings): the
library's store_load / store_save requests go through the binding's own
dispatcher (lemonmcp._dispatch.handle_app_request, as the library's app
request callback calls it) to ``store=(load, save)``, the compare-and-save
of docs/migrating.md over a dict.

    python pyappstore.py

Reads one request a line, {"kind", "payload"}, and writes the binding's
answer a line, {"status", "answer"}, until its input ends.
"""

from __future__ import annotations

import json
import sys
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

import lemonmcp
from lemonmcp import _dispatch

docs: Dict[Tuple[str, str], Tuple[Any, int]] = {}


def load(collection: str, key: str) -> Optional[Tuple[Any, int]]:
    return docs.get((collection, key))


def save(collection: str, key: str, expected_version: int, document: Any) -> Any:
    current = docs.get((collection, key))
    version = current[1] if current else 0
    if version != expected_version:
        return lemonmcp.StoreConflict(current[0] if current else None, version)
    docs[(collection, key)] = (document, version + 1)
    return version + 1


class Inline(_dispatch.Dispatcher):
    """Answers on the reading thread: one request at a time."""

    def answer(self, run: Callable[[], None]) -> None:
        run()


class Session:
    """What the dispatcher answers through: the binding's callbacks, and
    the replies it would give lmcp_client_respond."""

    def __init__(self) -> None:
        self.callbacks = _dispatch.Callbacks(store=(load, save))
        self.dispatcher: _dispatch.Dispatcher = Inline()
        self.replies: List[Tuple[int, Optional[Mapping[str, Any]]]] = []

    def respond(self, request_id: int, status: int, body: Optional[Mapping[str, Any]]) -> bool:
        self.replies.append((status, body))
        return True


def main() -> None:
    sess = Session()
    for n, line in enumerate(sys.stdin, 1):
        req = json.loads(line)
        _dispatch.handle_app_request(sess, n, req["kind"], json.dumps(req["payload"]).encode())
        [(status, body)] = sess.replies
        sess.replies.clear()
        print(json.dumps({"status": status, "answer": body}), flush=True)


if __name__ == "__main__":
    main()
