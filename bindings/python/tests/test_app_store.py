"""store=, the application's store ({"type": "app"}): load(collection, key)
and save(collection, key, expected_version, document), a compare-and-save
that processes sharing one grant answer from their own database. End to end
against the strict oauthfixture (single-use refresh tokens: a reuse revokes
the grant, GET /_strict counts), and the answers the dispatcher gives to
store_load and store_save, which are never {}."""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import logging
import threading
import urllib.request
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Tuple, Union

import pytest

import lemonmcp
from lemonmcp import _dispatch
from lemonmcp.aio import AsyncHost
from lemonmcp.errors import OK, InvalidArgument, LemonMCPError
from lemonmcp.types import StoreConflict

from test_oauth import CLIENT_ID, CLIENT_SECRET, HTTP_S, READY_S, OAuthServer, open_client

WAIT_S = 60.0
SECRET = "s3cret-never-shown"

Document = Dict[str, Any]


class DictStore:
    """The application's database, in memory: (document, version) per
    collection and key, saved by compare-and-save under a lock. Every
    client sharing it is one process of the application."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.docs: Dict[Tuple[str, str], Tuple[Document, int]] = {}
        self.loads: List[Tuple[str, str]] = []

    def load(self, collection: str, key: str) -> Optional[Tuple[Document, int]]:
        with self.lock:
            self.loads.append((collection, key))
            return self.docs.get((collection, key))

    def save(self, collection: str, key: str, expected_version: int, document: Document) -> Union[int, StoreConflict]:
        with self.lock:
            stored = self.docs.get((collection, key))
            version = stored[1] if stored else 0
            if version != expected_version:
                return StoreConflict(stored[0] if stored else None, version)
            self.docs[(collection, key)] = (json.loads(json.dumps(document)), version + 1)
            return version + 1

    def grants(self) -> Dict[str, Tuple[Document, int]]:
        """The grant records (the documents' bodies) by key."""
        with self.lock:
            return {k: (d["body"], v) for (c, k), (d, v) in self.docs.items() if c == "grants"}


class AsyncDictStore:
    """The same store through async methods (an asyncio database driver)."""

    def __init__(self, store: DictStore) -> None:
        self.store = store

    async def load(self, collection: str, key: str) -> Optional[Tuple[Document, int]]:
        await asyncio.sleep(0)
        return self.store.load(collection, key)

    async def save(self, collection: str, key: str, expected_version: int, document: Document) -> Any:
        await asyncio.sleep(0)
        return self.store.save(collection, key, expected_version, document)


def strict_stats(server: OAuthServer) -> Dict[str, Any]:
    with urllib.request.urlopen(server.base + "/_strict", timeout=HTTP_S) as r:
        data = json.loads(r.read())
    assert isinstance(data, dict)
    return data


def issued(token_request: Mapping[str, Any]) -> str:
    token = token_request["issued"]["access_token"]
    assert isinstance(token, str)
    return token


def bearers(server: OAuthServer) -> List[Optional[str]]:
    return [e["headers"].get("authorization") for e in server.log() if e["path"] == "/mcp"]


@pytest.fixture
def strict() -> Iterator[OAuthServer]:
    """Single-use refresh tokens, rt-0 valid from the start, a public
    client; the first tools/list revokes the access token every client holds
    (their tokens expire together)."""
    s = OAuthServer("-strict-refresh", "-initial-refresh-token", "rt-0", "-client-secret=", "-expire-method", "tools/list")
    yield s
    s.close()


@pytest.fixture
def oauth() -> Iterator[OAuthServer]:
    s = OAuthServer()
    yield s
    s.close()


APP = {"type": "app"}
PUBLIC = {"client_id": CLIENT_ID, "refresh_token": "rt-0", "token_store": APP}


# ---------------------------------------------------------------- configuration


def _http(**extra: Any) -> Dict[str, Any]:
    return {"transport": {"type": "streamable_http", "url": "http://127.0.0.1:1/mcp"}, **extra}


def test_the_retired_forms_name_what_to_write() -> None:
    with pytest.raises(TypeError, match=r"token_store= is retired: write auth\.token_store \{\"type\": \"app\"\}"):
        lemonmcp.Client(_http(), token_store=DictStore())
    with pytest.raises(TypeError, match=r"token_store= is retired"):
        lemonmcp.Host({"mcpServers": {}}, token_store=DictStore())
    for old, want in (("app", r'"app" is retired: write \{"type": "app"\}'), ("memory", r'"memory" is retired')):
        with pytest.raises(InvalidArgument, match=r"^config\.auth\.token_store: " + want):
            lemonmcp.Client(_http(auth={"token_store": old}))
    with pytest.raises(InvalidArgument, match=r"^store: expected an object with load\(collection, key\)"):
        lemonmcp.Client(_http(), store=object())


# ---------------------------------------------------------------- the answers


class InlineDispatcher(_dispatch.Dispatcher):
    def answer(self, run: Callable[[], None]) -> None:
        run()


class Answers:
    """A session that records its answers (status, body)."""

    def __init__(self, store: Any) -> None:
        self.callbacks = _dispatch.Callbacks(store=store)
        self.dispatcher: _dispatch.Dispatcher = InlineDispatcher()
        self.sent: List[Tuple[int, Optional[Mapping[str, Any]]]] = []

    def respond(self, request_id: int, status: int, body: Optional[Mapping[str, Any]]) -> bool:
        self.sent.append((status, body))
        return True

    def ask(self, kind: str, payload: Mapping[str, Any]) -> Tuple[int, Optional[Mapping[str, Any]]]:
        _dispatch.handle_app_request(self, 1, kind, json.dumps(payload).encode())
        assert len(self.sent) == 1
        return self.sent.pop()


DOC = {"body": {"access_token": "at-" + SECRET, "refresh_token": "rt-" + SECRET, "generation": 3}}
LOAD = {"collection": "grants", "key": "grant-1"}
SAVE = {**LOAD, "expected_version": 2, "document": DOC}


class Fixed:
    """A store answering fixed values (sync, async or a future)."""

    def __init__(self, loaded: Any = None, saved: Any = 3, how: str = "sync") -> None:
        self.loaded, self.saved, self.how = loaded, saved, how
        self.calls: List[Tuple[Any, ...]] = []

    def _give(self, value: Any) -> Any:
        if self.how == "async":

            async def later() -> Any:
                await asyncio.sleep(0)
                if isinstance(value, BaseException):
                    raise value
                return value

            return later()
        if self.how == "future":
            f: "concurrent.futures.Future[Any]" = concurrent.futures.Future()
            if isinstance(value, BaseException):
                f.set_exception(value)
            else:
                f.set_result(value)
            return f
        if isinstance(value, BaseException):
            raise value
        return value

    def load(self, collection: str, key: str) -> Any:
        self.calls.append(("load", collection, key))
        return self._give(self.loaded)

    def save(self, collection: str, key: str, expected_version: int, document: Document) -> Any:
        self.calls.append(("save", collection, key, expected_version, document))
        return self._give(self.saved)


HOWS = ["sync", "async", "future"]


@pytest.mark.parametrize("how", HOWS)
def test_answers_are_the_documented_json(how: str) -> None:
    s = Fixed(loaded=(dict(DOC), 2), saved=3, how=how)
    a = Answers(s)
    assert a.ask("store_load", LOAD) == (OK, {"version": 2, "document": DOC})
    assert a.ask("store_save", SAVE) == (OK, {"version": 3})
    # A host's "server" is not the document's.
    a.ask("store_save", {**SAVE, "server": "github"})
    save = ("save", "grants", "grant-1", 2, DOC)
    assert s.calls == [("load", "grants", "grant-1"), save, save]
    for loaded, want in ((None, {"version": 0}), ((None, 0), {"version": 0}), ((DOC, 0), {"version": 0})):
        assert Answers(Fixed(loaded=loaded, how=how)).ask("store_load", LOAD) == (OK, want)
    conflict = Answers(Fixed(saved=StoreConflict(dict(DOC), 5), how=how)).ask("store_save", SAVE)
    assert conflict == (OK, {"conflict": True, "version": 5, "document": DOC})
    gone = Answers(Fixed(saved=StoreConflict(None, 0), how=how)).ask("store_save", SAVE)
    assert gone == (OK, {"conflict": True, "version": 0})


BAD_SAVES: List[Tuple[Any, str]] = [
    ({}, "save returned dict"),
    (None, "save returned NoneType"),
    (True, "save returned bool"),
    (2, "save returned int, expected a version above expected_version 2"),
    ("saved", "save returned str"),
    ((DOC, 3), "save returned a tuple of 2"),
    (StoreConflict(dict(DOC), 0), "returned a StoreConflict without"),
    (StoreConflict(None, 4), "returned a StoreConflict without"),
    (OSError("disk full writing " + SECRET), "save raised OSError"),
]


@pytest.mark.parametrize("how", HOWS)
@pytest.mark.parametrize("saved,why", BAD_SAVES)
def test_a_save_is_never_answered_empty(how: str, saved: Any, why: str, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="lemonmcp")
    status, body = Answers(Fixed(saved=saved, how=how)).ask("store_save", SAVE)
    assert status != OK and body is not None
    message = str(body["message"])
    assert message.startswith("the store's ") and why in message
    assert f"lemonmcp: {message}" in caplog.text  # the store method is named in the log
    assert SECRET not in message + caplog.text


BAD_LOADS: List[Tuple[Any, str]] = [
    ({}, "load returned dict"),
    (DOC, "load returned dict"),
    ((DOC, -1), "load returned a tuple of 2"),
    ((DOC,), "load returned a tuple of 1"),
    ([DOC, 1], "load returned list"),
    (OSError("db down " + SECRET), "load raised OSError"),
]


@pytest.mark.parametrize("how", HOWS)
@pytest.mark.parametrize("loaded,why", BAD_LOADS)
def test_a_bad_load_is_an_error(how: str, loaded: Any, why: str, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="lemonmcp")
    status, body = Answers(Fixed(loaded=loaded, how=how)).ask("store_load", LOAD)
    assert status != OK and body is not None
    assert str(body["message"]).startswith("the store's ") and why in str(body["message"])
    assert SECRET not in str(body) + caplog.text


# ---------------------------------------------------------------- end to end


def test_clients_sharing_a_store_redeem_once(strict: OAuthServer) -> None:
    store = DictStore()
    c1 = open_client(strict.mcp, store=store, auth=PUBLIC)
    try:
        c2 = open_client(strict.mcp, store=(store.load, store.save), auth=PUBLIC)
        try:
            [t1] = strict.token_requests()  # c2 adopted c1's grant from the store
            [(key, (record, version))] = store.grants().items()
            assert key and all(c == "grants" and k == key for c, k in store.loads)
            assert record["access_token"] == issued(t1)

            # Both meet the 401 of their shared, revoked token at once: one
            # redeems, the other adopts what it stored.
            with concurrent.futures.ThreadPoolExecutor(2) as pool:
                calls = [pool.submit(c.list_tools) for c in (c1, c2)]
                for f in calls:
                    f.result(timeout=WAIT_S)
        finally:
            c2.close()
    finally:
        c1.close()
    [_, t2] = strict.token_requests()
    assert t2["form"]["refresh_token"] == t1["issued"]["refresh_token"]
    stats = strict_stats(strict)
    assert (stats["redemptions"], stats["reuses"], stats["revocations"]) == (2, 0, 0)
    [(_, (record, new_version))] = store.grants().items()
    assert record["access_token"] == issued(t2) and new_version > version
    assert bearers(strict)[-1] == "Bearer " + issued(t2)


def test_async_clients_with_an_async_store_redeem_once(strict: OAuthServer) -> None:
    shared = DictStore()

    async def main() -> None:
        def client() -> lemonmcp.AsyncClient:
            return lemonmcp.AsyncClient.http(
                strict.mcp,
                fallback_sse=False,
                ready_timeout=READY_S,
                call_timeout=READY_S,
                store=AsyncDictStore(shared),
                auth=PUBLIC,
            )

        async with client() as c1:
            async with client() as c2:
                assert len(strict.token_requests()) == 1
                await asyncio.gather(c1.list_tools(), c2.list_tools())

    asyncio.run(asyncio.wait_for(main(), WAIT_S))
    assert len(strict.token_requests()) == 2
    stats = strict_stats(strict)
    assert (stats["redemptions"], stats["reuses"], stats["revocations"]) == (2, 0, 0)


def _host_config(server: OAuthServer) -> Dict[str, Any]:
    # Two servers of one host on the same resource: two clients of one
    # grant, under the library's default key.
    srv = {"type": "http", "url": server.mcp}
    return {"servers": {"a": srv, "b": srv}, "defaults": {"auth": PUBLIC}}


def test_a_hosts_servers_share_a_store(strict: OAuthServer) -> None:
    store = DictStore()
    # Starting, each server lists its tools: both meet the 401 of their
    # shared, revoked token; one redeems, the other adopts.
    with lemonmcp.Host(_host_config(strict), store=store, ready_timeout=READY_S) as h:
        assert {t.server for t in h.list_tools()} == {"a", "b"}
    assert len(strict.token_requests()) == 2 and len(store.grants()) == 1
    stats = strict_stats(strict)
    assert (stats["redemptions"], stats["reuses"], stats["revocations"]) == (2, 0, 0)


def test_an_async_hosts_servers_share_an_async_store(strict: OAuthServer) -> None:
    store = DictStore()

    async def main() -> None:
        async with AsyncHost(_host_config(strict), store=AsyncDictStore(store), ready_timeout=READY_S) as h:
            assert {t.server for t in await h.list_tools()} == {"a", "b"}

    asyncio.run(asyncio.wait_for(main(), WAIT_S))
    assert len(strict.token_requests()) == 2 and len(store.grants()) == 1


class Broken:
    """A store that fails one way (the document it is given holds tokens,
    and the exceptions repeat a secret)."""

    def __init__(self, load: Any, save: Any) -> None:
        self._load, self._save = load, save

    def load(self, collection: str, key: str) -> Any:
        if isinstance(self._load, BaseException):
            raise self._load
        return self._load

    def save(self, collection: str, key: str, expected_version: int, document: Document) -> Any:
        if isinstance(self._save, BaseException):
            raise self._save
        return self._save


@pytest.mark.parametrize(
    "store,logged",
    [
        (Broken(OSError("db down " + SECRET), 1), "the store's load raised OSError"),
        (Broken(("garbage", 1), 1), "the store's load returned a tuple of 2"),
        (Broken(None, {}), "the store's save returned dict"),
        (Broken(None, "saved"), "the store's save returned str"),
        (Broken(None, KeyError(SECRET)), "the store's save raised KeyError"),
    ],
)
def test_a_failing_store_fails_without_a_token_request(
    oauth: OAuthServer, store: Broken, logged: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="lemonmcp")
    auth = {"client_id": CLIENT_ID, "client_secret": CLIENT_SECRET, "token_store": APP}
    c = lemonmcp.Client.http(oauth.mcp, fallback_sse=False, ready_timeout=READY_S, store=store, auth=auth)
    try:
        with pytest.raises(LemonMCPError) as ei:
            c.open(timeout=READY_S)
    finally:
        c.close()
    assert oauth.token_requests() == [], "a token was requested without a working store"
    assert logged in caplog.text
    assert SECRET not in caplog.text + str(ei.value) + repr(ei.value.raw)


class Breaking(DictStore):
    """A store that works until ``fail`` is set, then fails one way."""

    def __init__(self, how: str) -> None:
        super().__init__()
        self.how = how
        self.fail = False

    def load(self, collection: str, key: str) -> Optional[Tuple[Document, int]]:
        if self.fail and self.how == "load raises":
            raise OSError("db down " + SECRET)
        return super().load(collection, key)

    def save(self, collection: str, key: str, expected_version: int, document: Document) -> Any:
        if self.fail and self.how == "save answers {}":
            return {}
        if self.fail and self.how == "save raises":
            raise OSError("disk full writing " + str(document["body"].get("refresh_token")))
        return super().save(collection, key, expected_version, document)


@pytest.mark.parametrize("how", ["load raises", "save answers {}", "save raises"])
def test_a_store_failing_at_refresh_fails_that_refresh_without_redeeming(
    strict: OAuthServer, how: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="lemonmcp")
    store = Breaking(how)
    c = open_client(strict.mcp, store=store, auth=PUBLIC)
    try:
        [t1] = strict.token_requests()
        store.fail = True
        with pytest.raises(LemonMCPError) as ei:
            c.list_tools()  # the 401: a refresh the store cannot record
    finally:
        c.close()
    assert strict.token_requests() == [t1], "a refresh token was redeemed without a working store"
    rt = t1["issued"]["refresh_token"]
    assert SECRET not in caplog.text + str(ei.value) and rt not in caplog.text + str(ei.value)
    assert "the store's " in caplog.text
