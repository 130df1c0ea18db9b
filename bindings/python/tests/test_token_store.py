"""token_store= in its two forms: a VersionedTokenStore (load(key) and
compare_and_save(key, record, expected_version), the versioned "app" store
that processes sharing one grant answer from their own database) and the
single-process load/save pair. End to end against the strict oauthfixture
(single-use refresh tokens: a reuse revokes the grant, GET /_strict counts),
and the answers the dispatcher gives a versioned token_save, which must
never be {} (the library's "saved")."""

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
from lemonmcp.types import TokenConflict, VersionedTokenStore

from test_oauth import CLIENT_ID, CLIENT_SECRET, HTTP_S, READY_S, OAuthServer, open_client

WAIT_S = 60.0
SECRET = "s3cret-never-shown"

Record = Dict[str, Any]


class DictStore:
    """The application's database, in memory: (record, version) per key,
    saved by compare-and-save under a lock. Every client sharing it is one
    process of the application."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.grants: Dict[str, Tuple[Record, int]] = {}
        self.loads: List[str] = []
        self.answers: List[Union[int, TokenConflict]] = []

    def load(self, key: str) -> Optional[Tuple[Record, int]]:
        with self.lock:
            self.loads.append(key)
            return self.grants.get(key)

    def compare_and_save(self, key: str, record: Record, expected_version: int) -> Union[int, TokenConflict]:
        with self.lock:
            stored = self.grants.get(key)
            version = stored[1] if stored else 0
            answer: Union[int, TokenConflict]
            if version != expected_version:
                answer = TokenConflict(stored[0] if stored else None, version)
            else:
                self.grants[key] = (dict(record), version + 1)
                answer = version + 1
            self.answers.append(answer)
            return answer


class AsyncDictStore:
    """The same store through async methods (an asyncio database driver)."""

    def __init__(self, store: DictStore) -> None:
        self.store = store

    async def load(self, key: str) -> Optional[Tuple[Record, int]]:
        await asyncio.sleep(0)
        return self.store.load(key)

    async def compare_and_save(self, key: str, record: Record, expected_version: int) -> Union[int, TokenConflict]:
        await asyncio.sleep(0)
        return self.store.compare_and_save(key, record, expected_version)


def _typed(store: VersionedTokenStore) -> VersionedTokenStore:
    return store  # mypy: both satisfy the protocol


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


PUBLIC = {"client_id": CLIENT_ID, "refresh_token": "rt-0"}


# ---------------------------------------------------------------- configuration


def _http(**extra: Any) -> Dict[str, Any]:
    return {"transport": {"type": "streamable_http", "url": "http://127.0.0.1:1/mcp"}, **extra}


@pytest.mark.parametrize(
    "auth,want",
    [
        ({}, {"type": "app"}),
        ({"token_store": "app"}, {"type": "app"}),
        ({"token_store": {"type": "app"}}, {"type": "app"}),
        ({"token_store": {"type": "app", "key": "user-42"}}, {"type": "app", "key": "user-42"}),
    ],
)
def test_a_versioned_store_sets_the_object_form(auth: Dict[str, Any], want: Dict[str, Any]) -> None:
    c = lemonmcp.Client(_http(auth=auth), token_store=DictStore())
    try:
        assert c.config["auth"]["token_store"] == want
    finally:
        c.close()


def test_store_forms_that_cannot_answer_are_refused() -> None:
    # A load/save pair cannot compare: the versioned form is refused for it.
    with pytest.raises(InvalidArgument, match=r"^config\.auth\.token_store: \{\"type\": \"app\"\} is the versioned"):
        lemonmcp.Client(_http(auth={"token_store": {"type": "app"}}), token_store=(lambda k: None, lambda r: None))
    # Another store beside an application's versioned store.
    for other in ("memory", {"type": "file", "path": "/tmp/x.json"}):
        with pytest.raises(InvalidArgument, match=r"^config\.auth\.token_store: conflicts with token_store="):
            lemonmcp.Client(_http(auth={"token_store": other}), token_store=DictStore())

    class Half:
        load = None

        def compare_and_save(self, key: str, record: Record, expected_version: int) -> int:
            return expected_version + 1

    with pytest.raises(InvalidArgument, match=r"^token_store: a versioned store needs load\(key\) and compare_and_save"):
        lemonmcp.Client(_http(), token_store=Half())


# ---------------------------------------------------------------- the dispatcher's answers


class InlineDispatcher(_dispatch.Dispatcher):
    def answer(self, run: Callable[[], None]) -> None:
        run()


class Answers:
    """A session that records its answers (status, body)."""

    def __init__(self, token_store: Any) -> None:
        self.callbacks = _dispatch.Callbacks(token_store=token_store)
        self.dispatcher: _dispatch.Dispatcher = InlineDispatcher()
        self.sent: List[Tuple[int, Optional[Mapping[str, Any]]]] = []

    def respond(self, request_id: int, status: int, body: Optional[Mapping[str, Any]]) -> bool:
        self.sent.append((status, body))
        return True

    def ask(self, kind: str, payload: Mapping[str, Any]) -> Tuple[int, Optional[Mapping[str, Any]]]:
        _dispatch.handle_app_request(self, 1, kind, json.dumps(payload).encode())
        assert len(self.sent) == 1
        return self.sent.pop()


RECORD = {"access_token": "at-" + SECRET, "refresh_token": "rt-" + SECRET, "generation": 3}
SAVE = {"key": "grant-1", "expected_version": 2, **RECORD}


class Fixed:
    """A versioned store answering fixed values (sync, async or a future)."""

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

    def load(self, key: str) -> Any:
        self.calls.append(("load", key))
        return self._give(self.loaded)

    def compare_and_save(self, key: str, record: Record, expected_version: int) -> Any:
        self.calls.append(("compare_and_save", key, record, expected_version))
        return self._give(self.saved)


HOWS = ["sync", "async", "future"]


@pytest.mark.parametrize("how", HOWS)
def test_versioned_answers_are_the_documented_json(how: str) -> None:
    stored = (dict(RECORD), 2)
    s = Fixed(loaded=stored, saved=3, how=how)
    a = Answers(s)
    assert a.ask("token_load", {"resource": "r", "key": "grant-1"}) == (OK, {"version": 2, "record": RECORD})
    assert a.ask("token_save", SAVE) == (OK, {"version": 3})
    # The store got the key, the record without key / expected_version
    # (nor a host's "server"), and the expected version.
    a.ask("token_save", {**SAVE, "server": "github"})
    save = ("compare_and_save", "grant-1", RECORD, 2)
    assert s.calls == [("load", "grant-1"), save, save]
    for loaded, want in ((None, {"version": 0}), ((None, 0), {"version": 0}), ((RECORD, 0), {"version": 0})):
        assert Answers(Fixed(loaded=loaded, how=how)).ask("token_load", {"resource": "r", "key": "k"}) == (OK, want)
    conflict = Answers(Fixed(saved=TokenConflict(dict(RECORD), 5), how=how)).ask("token_save", SAVE)
    assert conflict == (OK, {"conflict": True, "version": 5, "record": RECORD})
    gone = Answers(Fixed(saved=TokenConflict(None, 0), how=how)).ask("token_save", SAVE)
    assert gone == (OK, {"conflict": True, "version": 0})


BAD_SAVES: List[Tuple[Any, str]] = [
    ({}, "returned dict"),
    (None, "returned NoneType"),
    (True, "returned bool"),
    (2, "returned version 2, not above expected_version 2"),
    ("saved", "returned str"),
    ((RECORD, 3), "returned a tuple of 2"),
    (TokenConflict(dict(RECORD), 0), "returned a TokenConflict without"),
    (TokenConflict(None, 4), "returned a TokenConflict without"),
    (OSError("disk full writing " + SECRET), "compare_and_save raised OSError"),
]


@pytest.mark.parametrize("how", HOWS)
@pytest.mark.parametrize("saved,why", BAD_SAVES)
def test_a_versioned_save_is_never_answered_empty(
    how: str, saved: Any, why: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="lemonmcp")
    status, body = Answers(Fixed(saved=saved, how=how)).ask("token_save", SAVE)
    assert status != OK and body is not None
    message = str(body["message"])
    assert message.startswith("the token_store's compare_and_save ") and why in message
    assert f"lemonmcp: {message}" in caplog.text  # the store method is named in the log
    assert SECRET not in message + caplog.text


BAD_LOADS: List[Tuple[Any, str]] = [
    ({}, "returned dict"),
    (RECORD, "returned dict"),
    ((RECORD, -1), "returned a tuple of 2"),
    ((RECORD,), "returned a tuple of 1"),
    ([RECORD, 1], "returned list"),
    (OSError("db down " + SECRET), "load(key) raised OSError"),
]


@pytest.mark.parametrize("how", HOWS)
@pytest.mark.parametrize("loaded,why", BAD_LOADS)
def test_a_bad_versioned_load_is_an_error(how: str, loaded: Any, why: str, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="lemonmcp")
    status, body = Answers(Fixed(loaded=loaded, how=how)).ask("token_load", {"resource": "r", "key": "k"})
    assert status != OK and body is not None
    assert str(body["message"]).startswith("the token_store's load(key) ") and why in str(body["message"])
    assert SECRET not in str(body) + caplog.text


def test_the_two_forms_refuse_each_others_requests() -> None:
    # A load/save pair asked the versioned save (auth.token_store
    # {"type": "app"} in a host file): refused, never {}.
    saved: List[Record] = []
    status, body = Answers((lambda key: None, saved.append)).ask("token_save", SAVE)
    assert status != OK and body is not None and "cannot answer a versioned token_save" in str(body["message"])
    assert saved == []
    # Its own single-process save is still answered {}.
    assert Answers((lambda key: None, saved.append)).ask("token_save", RECORD) == (OK, {})
    assert saved == [RECORD]
    # A versioned store asked the single-process form ("app"): refused.
    for kind, payload in (("token_load", {"resource": "r"}), ("token_save", RECORD)):
        status, body = Answers(Fixed()).ask(kind, payload)
        assert status != OK and body is not None and "answers the versioned form only" in str(body["message"])


# ---------------------------------------------------------------- end to end


def test_clients_sharing_a_versioned_store_redeem_once(strict: OAuthServer) -> None:
    store = DictStore()
    c1 = open_client(strict.mcp, token_store=store, auth=PUBLIC)
    try:
        c2 = open_client(strict.mcp, token_store=_typed(store), auth=PUBLIC)
        try:
            [t1] = strict.token_requests()  # c2 adopted c1's grant from the store
            [(key, (record, version))] = store.grants.items()
            assert key and all(k == key for k in store.loads)
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
    [(_, (record, new_version))] = store.grants.items()
    assert record["access_token"] == issued(t2) and new_version > version
    assert bearers(strict)[-1] == "Bearer " + issued(t2)


def test_async_clients_with_an_async_versioned_store_redeem_once(strict: OAuthServer) -> None:
    shared = DictStore()

    async def main() -> None:
        def client() -> lemonmcp.AsyncClient:
            return lemonmcp.AsyncClient.http(
                strict.mcp,
                fallback_sse=False,
                ready_timeout=READY_S,
                call_timeout=READY_S,
                token_store=_typed(AsyncDictStore(shared)),
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


def test_a_conflict_makes_the_loser_adopt_the_winners_record(strict: OAuthServer) -> None:
    store = DictStore()
    armed = threading.Event()
    saving = threading.Event()
    go = threading.Event()
    c2_answers: List[Union[int, TokenConflict]] = []

    class Gated:
        """c2's view of the store: once armed, its next compare_and_save
        waits, before its compare, for the test's go."""

        def load(self, key: str) -> Optional[Tuple[Record, int]]:
            return store.load(key)

        def compare_and_save(self, key: str, record: Record, expected_version: int) -> Union[int, TokenConflict]:
            if armed.is_set():
                armed.clear()
                saving.set()
                assert go.wait(WAIT_S)
            answer = store.compare_and_save(key, record, expected_version)
            c2_answers.append(answer)
            return answer

    auth = {**PUBLIC, "token_store": {"type": "app", "key": "user-42"}}
    c1 = open_client(strict.mcp, token_store=store, auth=auth)
    try:
        c2 = open_client(strict.mcp, token_store=Gated(), auth=auth)
        try:
            [t1] = strict.token_requests()
            assert list(store.grants) == ["user-42"]
            # c2 meets the 401 and claims the refresh lease; its claim waits
            # while c1 meets its own 401, claims, redeems and commits.
            armed.set()
            with concurrent.futures.ThreadPoolExecutor(1) as pool:
                call2 = pool.submit(c2.list_tools)
                try:
                    assert saving.wait(WAIT_S)
                    c1.list_tools()
                    [_, t2] = strict.token_requests()
                finally:
                    go.set()
                # c2's claim now meets c1's commit: the conflict gives c2
                # the record that won, and it uses that token.
                call2.result(timeout=WAIT_S)
        finally:
            c2.close()
    finally:
        c1.close()
    conflict = c2_answers[0]
    assert isinstance(conflict, TokenConflict) and conflict.record is not None
    assert conflict.record["access_token"] == issued(t2)
    assert "at-" not in repr(conflict) and issued(t2) not in repr(conflict)
    assert len(strict.token_requests()) == 2, "the loser redeemed a refresh token"
    stats = strict_stats(strict)
    assert (stats["redemptions"], stats["reuses"], stats["revocations"]) == (2, 0, 0)
    assert bearers(strict)[-1] == "Bearer " + issued(t2)


def _host_config(server: OAuthServer) -> Dict[str, Any]:
    # Two servers of one host on the same resource: two clients of one
    # grant, under the library's default key.
    srv = {"type": "http", "url": server.mcp}
    return {"servers": {"a": srv, "b": srv}, "defaults": {"auth": PUBLIC}}


def test_a_hosts_servers_share_a_versioned_store(strict: OAuthServer) -> None:
    store = DictStore()
    # Starting, each server lists its tools: both meet the 401 of their
    # shared, revoked token; one redeems, the other adopts.
    with lemonmcp.Host(_host_config(strict), token_store=store, ready_timeout=READY_S) as h:
        assert {t.server for t in h.list_tools()} == {"a", "b"}
    assert len(strict.token_requests()) == 2 and len(store.grants) == 1
    stats = strict_stats(strict)
    assert (stats["redemptions"], stats["reuses"], stats["revocations"]) == (2, 0, 0)
    [(record, _)] = store.grants.values()
    assert "server" not in record  # the request's "server" is not the record's


def test_an_async_hosts_servers_share_an_async_versioned_store(strict: OAuthServer) -> None:
    store = DictStore()

    async def main() -> None:
        async with AsyncHost(_host_config(strict), token_store=AsyncDictStore(store), ready_timeout=READY_S) as h:
            assert {t.server for t in await h.list_tools()} == {"a", "b"}

    asyncio.run(asyncio.wait_for(main(), WAIT_S))
    assert len(strict.token_requests()) == 2 and len(store.grants) == 1
    stats = strict_stats(strict)
    assert (stats["redemptions"], stats["reuses"], stats["revocations"]) == (2, 0, 0)


class Broken:
    """A versioned store that fails one way (the record it is given holds
    tokens, and the exceptions repeat a secret)."""

    def __init__(self, load: Any, save: Any) -> None:
        self._load, self._save = load, save

    def load(self, key: str) -> Any:
        if isinstance(self._load, BaseException):
            raise self._load
        return self._load

    def compare_and_save(self, key: str, record: Record, expected_version: int) -> Any:
        if isinstance(self._save, BaseException):
            raise self._save
        return self._save


@pytest.mark.parametrize(
    "store,logged",
    [
        (Broken(OSError("db down " + SECRET), 1), "the token_store's load(key) raised OSError"),
        (Broken(("garbage", 1), 1), "the token_store's load(key) returned a tuple of 2"),
        (Broken(None, {}), "the token_store's compare_and_save returned dict"),
        (Broken(None, "saved"), "the token_store's compare_and_save returned str"),
        (Broken(None, KeyError(SECRET)), "the token_store's compare_and_save raised KeyError"),
    ],
)
def test_a_failing_versioned_store_fails_without_a_token_request(
    oauth: OAuthServer, store: Broken, logged: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="lemonmcp")
    auth = {"client_id": CLIENT_ID, "client_secret": CLIENT_SECRET}
    c = lemonmcp.Client.http(oauth.mcp, fallback_sse=False, ready_timeout=READY_S, token_store=store, auth=auth)
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

    def load(self, key: str) -> Optional[Tuple[Record, int]]:
        if self.fail and self.how == "load raises":
            raise OSError("db down " + SECRET)
        return super().load(key)

    def compare_and_save(self, key: str, record: Record, expected_version: int) -> Any:
        if self.fail and self.how == "save answers {}":
            return {}  # what a single-process save would be answered
        if self.fail and self.how == "save raises":
            raise OSError("disk full writing " + str(record.get("refresh_token")))
        return super().compare_and_save(key, record, expected_version)


@pytest.mark.parametrize("how", ["load raises", "save answers {}", "save raises"])
def test_a_store_failing_at_refresh_fails_that_refresh_without_redeeming(
    strict: OAuthServer, how: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="lemonmcp")
    store = Breaking(how)
    c = open_client(strict.mcp, token_store=store, auth=PUBLIC)
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
    assert "the token_store's " in caplog.text


def test_the_single_process_pair_keeps_the_app_form(strict: OAuthServer) -> None:
    saved: List[Record] = []
    loads: List[Record] = []

    def load(request: Record) -> Optional[Record]:
        loads.append(request)
        return saved[-1] if saved else None

    c = open_client(strict.mcp, token_store=(load, saved.append), auth=PUBLIC)
    try:
        assert c.config["auth"]["token_store"] == "app"
        c.list_tools()  # the 401: one refresh, saved
    finally:
        c.close()
    assert loads == [{"resource": strict.mcp}]
    assert len(saved) == 2 and not {"key", "expected_version"} & set(saved[-1])
    [_, t2] = strict.token_requests()
    assert saved[-1]["access_token"] == issued(t2)
    # A second process resumes from it without a token request.
    c = open_client(strict.mcp, token_store=(load, saved.append), auth=PUBLIC)
    try:
        c.call_tool("echo", {"text": "hi"})
    finally:
        c.close()
    assert len(strict.token_requests()) == 2
    stats = strict_stats(strict)
    assert (stats["redemptions"], stats["reuses"], stats["revocations"]) == (2, 0, 0)

