"""OAuth through the binding: the "auth" config and its checks, the
authorize= and store= application callbacks, AuthRequired's metadata, and the
CLI's OAuth options — end to end against tests/fixtures/oauthfixture (a real
OAuth-protected MCP server: PRM, AS metadata, authorize, token, register,
and a request log at /_log)."""

from __future__ import annotations

import asyncio
import http.client
import json
import logging
import os
import queue
import subprocess
import sys
import threading
import time
import typing
import urllib.parse
import urllib.request
from typing import Any, Dict, Iterator, List, Mapping, Optional

import pytest

import lemonmcp
from lemonmcp import _config
from lemonmcp.errors import E_AUTH_REQUIRED, AuthRequired, InvalidArgument

from conftest import PKG_ROOT, REPO, env_for_child

OAUTH_FIXTURE = os.environ.get("LEMONMCP_OAUTH_FIXTURE") or os.path.join(REPO, "build", "fixtures", "oauthfixture")
CLIENT_ID = "lemon"  # the fixture's pre-registered client
CLIENT_SECRET = "secret-Zq81-never-echo"
REDIRECT = "http://127.0.0.1:8976/callback"
READY_S = 15.0
HTTP_S = 10.0


# ---------------------------------------------------------------- helpers


class OAuthServer:
    """One oauthfixture process: base URL, MCP URL and its request log."""

    def __init__(self, *flags: str) -> None:
        if not os.access(OAUTH_FIXTURE, os.X_OK):
            pytest.skip(f"oauth fixture not built: {OAUTH_FIXTURE} (make fixtures)")
        self.proc = subprocess.Popen(
            [OAUTH_FIXTURE, "-client-id", CLIENT_ID, "-client-secret", CLIENT_SECRET, *flags],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        lines: "queue.Queue[str]" = queue.Queue()
        assert self.proc.stdout is not None
        out = self.proc.stdout
        threading.Thread(target=lambda: lines.put(out.readline()), daemon=True).start()
        try:
            self.base = lines.get(timeout=HTTP_S).strip()
        except queue.Empty:
            self.close()
            raise AssertionError("oauthfixture printed no base URL") from None
        assert self.base.startswith("http://127.0.0.1:"), self.base
        self.mcp = self.base + "/mcp"

    def log(self) -> List[Dict[str, Any]]:
        with urllib.request.urlopen(self.base + "/_log", timeout=HTTP_S) as r:
            data = json.loads(r.read())
        assert isinstance(data, list)
        return data

    def reset(self) -> None:
        req = urllib.request.Request(self.base + "/_log/reset", method="POST", data=b"")
        with urllib.request.urlopen(req, timeout=HTTP_S):
            pass

    def token_requests(self) -> List[Dict[str, Any]]:
        return [e for e in self.log() if e["path"] == "/oauth/token"]

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()  # the fixture exits on stdin EOF
        try:
            self.proc.wait(timeout=HTTP_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=HTTP_S)


@pytest.fixture
def oauth() -> Iterator[OAuthServer]:
    s = OAuthServer()
    yield s
    s.close()


def browser_get(url: str) -> str:
    """What a browser does with the authorization URL, minus the user: GET it
    without following the redirect, and return where it points."""
    u = urllib.parse.urlsplit(url)
    assert u.scheme == "http" and u.hostname in ("127.0.0.1", "localhost"), url
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=HTTP_S)
    try:
        conn.request("GET", u.path + ("?" + u.query if u.query else ""))
        r = conn.getresponse()
        r.read()
        loc = r.getheader("Location")
    finally:
        conn.close()
    assert r.status in (302, 303), f"authorization endpoint answered {r.status}"
    assert loc, "no Location"
    return loc


class Browser:
    """An authorize= handler that records what it was asked."""

    def __init__(self) -> None:
        self.requests: List[Dict[str, Any]] = []

    def __call__(self, request: Dict[str, Any]) -> Dict[str, str]:
        self.requests.append(request)
        return {"redirect_url": browser_get(request["authorization_url"])}


class MemoryStore:
    """A store= object (the application's store): documents and versions
    kept in a dict, saved by compare-and-save, counted."""

    def __init__(self, docs: Optional[Dict[Any, Any]] = None) -> None:
        self.docs: Dict[Any, Any] = dict(docs or {})
        self.loads: List[Any] = []
        self.saves: List[Dict[str, Any]] = []

    def load(self, collection: str, key: str) -> Any:
        self.loads.append((collection, key))
        return self.docs.get((collection, key))

    def save(self, collection: str, key: str, expected_version: int, document: Dict[str, Any]) -> Any:
        current = self.docs.get((collection, key))
        version = current[1] if current else 0
        if version != expected_version:
            return lemonmcp.StoreConflict(current[0] if current else None, version)
        self.saves.append(document)
        self.docs[(collection, key)] = (document, version + 1)
        return version + 1

    @property
    def record(self) -> Optional[Dict[str, Any]]:
        """The one grant's record, as last saved."""
        grants = [d["body"] for (c, _), (d, _v) in self.docs.items() if c == "grants"]
        return grants[-1] if grants else None


APP_STORE = {"type": "app"}


def open_client(url: str, **options: Any) -> lemonmcp.Client:
    options.setdefault("ready_timeout", READY_S)
    options.setdefault("call_timeout", READY_S)
    c = lemonmcp.Client.http(url, fallback_sse=False, **options)
    c.open(timeout=READY_S)
    return c


# ---------------------------------------------------------------- config checks (the library judges)


def _http(**extra: Any) -> Dict[str, Any]:
    return {"transport": {"type": "streamable_http", "url": "http://127.0.0.1:1/mcp"}, **extra}


def test_auth_config_builds_the_object() -> None:
    a = lemonmcp.auth_config(
        client_id="id",
        client_secret="s3cret",
        scopes=("read", "write"),
        redirect_uri=REDIRECT,
        flow="authorization_code",
        private_key_pem="-----BEGIN PRIVATE KEY-----\nx\n-----END PRIVATE KEY-----\n",
        private_key_alg="ES256",
        authorization_timeout=1.5,
        token_store={"type": "app"},
        max_step_ups=0,
    )
    assert a == {
        "client_id": "id",
        "client_secret": "s3cret",
        "scopes": ["read", "write"],
        "redirect_uri": REDIRECT,
        "flow": "authorization_code",
        "private_key_jwt": {"key_pem": "-----BEGIN PRIVATE KEY-----\nx\n-----END PRIVATE KEY-----\n", "alg": "ES256"},
        "authorization_timeout_ms": 1500,
        "token_store": {"type": "app"},
        "max_step_ups": 0,
    }
    assert lemonmcp.auth_config() == {}


def test_auth_config_passes_a_shared_token_store_through() -> None:
    store = {"type": "file", "path": "/tmp/tokens.json", "key": "k", "lease_ms": 2000}
    assert lemonmcp.auth_config(client_id="id", token_store=store) == {"client_id": "id", "token_store": store}
    # The signature says so, for type checkers (it said str only).
    hint = typing.get_type_hints(lemonmcp.auth_config)["token_store"]
    assert set(typing.get_args(hint)) == {str, Mapping[str, Any], type(None)}


@pytest.mark.parametrize(
    "auth, field",
    [
        ({"client_id": 3}, "auth.client_id"),
        ({"client_id": "  "}, "auth.client_id"),
        ({"redirect_uri": ["x"]}, "auth.redirect_uri"),
        ({"flow": "implicit"}, "auth.flow"),
        ({"token_auth_method": "tls_client_auth"}, "auth.token_auth_method"),
        ({"token_store": "disk"}, "auth.token_store: a path is retired"),
        ({"scopes": "read write"}, "auth.scopes"),
        ({"scopes": ["read", "two words"]}, "auth.scopes[1]"),
        ({"private_key_jwt": {"kid": "k"}}, "auth.private_key_jwt.key_pem"),
        ({"private_key_jwt": {"key_pem": "k", "alg": "HS256"}}, "auth.private_key_jwt.alg"),
        ({"authorization_timeout_ms": 0}, "auth.authorization_timeout_ms"),
        ({"max_step_ups": 11}, "auth.max_step_ups"),
        ({"allow_insecure_http": "yes"}, "auth.allow_insecure_http"),
        ({"flow": "jwt-bearer"}, "auth.flow"),
        ({"token_exchange": {"subject_token": "x"}}, "auth.token_exchange.token_endpoint"),
        ({"token_exchange": {"token_endpoint": "https://idp/t"}}, "auth.token_exchange.subject_token"),
        ({"token_exchange": {"token_endpoint": "https://idp/t", "subject_token": "x", "token_auth_method": "private_key_jwt"}},
         "auth.token_exchange.token_auth_method"),
        ({"dpop": {"alg": "HS256"}}, "auth.dpop.alg"),
    ],
)
def test_check_config_names_the_auth_field(auth: Dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidArgument) as ei:
        lemonmcp.Client(lemonmcp.build_config(base=_http(auth=auth)))
    assert str(ei.value).startswith("config." + field + ":"), str(ei.value)


@pytest.mark.parametrize(
    "auth, field",
    [
        ({"client_id": "id", "client_secret": 12345678}, "auth.client_secret"),
        ({"client_id": "id", "client_secret": ["s3cret-list"]}, "auth.client_secret"),
        ({"refresh_token": {"rt": "s3cret-rt"}}, "auth.refresh_token"),
        ({"private_key_jwt": {"key_pem": b"s3cret-bytes"}}, "auth.private_key_jwt.key_pem"),
        ({"private_key_jwt": "s3cret-pem-as-string"}, "auth.private_key_jwt"),
        ({"assertion": 12345678}, "auth.assertion"),
        ({"token_exchange": "s3cret-te"}, "auth.token_exchange"),
        ({"token_exchange": {"token_endpoint": "https://idp/t", "subject_token": ["s3cret-id-token"]}}, "auth.token_exchange.subject_token"),
        ({"dpop": "s3cret-dpop"}, "auth.dpop"),
        ({"dpop": {"key_pem": b"s3cret-key"}}, "auth.dpop.key_pem"),
    ],
)
def test_secret_values_are_never_echoed(auth: Dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidArgument) as ei:
        lemonmcp.Client(_http(auth=auth))
    msg = str(ei.value)
    assert msg.startswith("config." + field + ":"), msg
    assert "s3cret" not in msg and "12345678" not in msg, msg
    # the whole object given as something else: its repr is not echoed either
    with pytest.raises(InvalidArgument) as ei2:
        lemonmcp.Client(_http(auth="s3cret-string"))
    assert "s3cret" not in str(ei2.value)
    with pytest.raises(InvalidArgument) as ei3:
        lemonmcp.build_config(_http()["transport"], auth="s3cret-kw")
    assert "s3cret" not in str(ei3.value) and str(ei3.value).startswith("auth:")


def test_auth_extensions_pass_through() -> None:
    te = {"token_endpoint": "https://idp.example/token", "subject_token": "h.p.s", "client_id": "idp"}
    a = lemonmcp.auth_config(client_id="c", assertion="h.p.s", dpop=True)
    assert a == {"client_id": "c", "assertion": "h.p.s", "dpop": True}
    a = lemonmcp.auth_config(client_id="c", token_exchange=te, dpop={"alg": "ES384"})
    assert a["token_exchange"] == te and a["dpop"] == {"alg": "ES384"}
    # and the library takes them
    c = lemonmcp.Client(_http(auth={"flow": "jwt_bearer", "assertion": "h.p.s", "dpop": True}))
    c.close()


def test_auth_and_authorization_are_http_only() -> None:
    stdio = {"transport": {"type": "stdio", "command": "x"}}
    with pytest.raises(InvalidArgument, match=r"^config\.auth: applies to the HTTP transports only"):
        lemonmcp.Client({**stdio, "auth": {"client_id": "id"}})
    with pytest.raises(InvalidArgument, match=r"^config\.handlers\.authorization: applies to the HTTP transports only"):
        lemonmcp.Client({**stdio, "handlers": {"authorization": {}}})
    with pytest.raises(InvalidArgument, match=r"^config\.handlers\.authorization: must be a JSON object"):
        lemonmcp.Client(_http(handlers={"authorization": True}))


def test_build_config_wires_the_callback_kinds() -> None:
    cfg = _config.build_config(
        base=_http(auth={"client_id": "id"}),
        handler_kinds=["authorization"],
        auth={"scopes": ["read"]},
    )
    assert cfg["handlers"] == {"authorization": {}}
    assert cfg["auth"] == {"client_id": "id", "scopes": ["read"]}


def test_client_options_add_handlers_and_store() -> None:
    store = MemoryStore()
    c = lemonmcp.Client(_http(), authorize=lambda r: {}, store=store, auth={"redirect_uri": REDIRECT, "token_store": APP_STORE})
    try:
        assert c.config["handlers"] == {"authorization": {}}
        assert c.config["auth"] == {"redirect_uri": REDIRECT, "token_store": APP_STORE}
    finally:
        c.close()
    c = lemonmcp.Client(_http(), store=(store.load, store.save))
    try:
        assert "auth" not in c.config and "handlers" not in c.config  # the configuration says which store
    finally:
        c.close()
    with pytest.raises(InvalidArgument, match=r"^store: expected an object with load"):
        lemonmcp.Client(_http(), store=object())
    with pytest.raises(InvalidArgument, match=r"^authorize: expected a callable"):
        lemonmcp.Client(_http(), authorize="not callable")


def test_library_rejects_what_only_it_checks_without_echoing_secrets() -> None:
    # Cross-field rules are the library's: a secret without a client id.
    with pytest.raises(InvalidArgument) as ei:
        lemonmcp.Client(_http(auth={"client_secret": CLIENT_SECRET}))
    assert "auth.client_secret" in str(ei.value)
    assert CLIENT_SECRET not in str(ei.value) and CLIENT_SECRET not in json.dumps(ei.value.raw)
    with pytest.raises(InvalidArgument) as ei:
        lemonmcp.Client(_http(auth={"flow": "authorization_code", "client_id": "id", "client_secret": CLIENT_SECRET}))
    assert "auth.flow" in str(ei.value) and CLIENT_SECRET not in str(ei.value)
    # an unknown field is passed through for the library to name
    with pytest.raises(InvalidArgument, match="auth.colour"):
        lemonmcp.Client(_http(auth={"colour": "blue"}))


def test_auth_required_exposes_metadata() -> None:
    e = lemonmcp.errors.error_from_status(
        E_AUTH_REQUIRED,
        {"message": "m", "data": {"authorization_servers": ["https://as"], "resource_metadata_url": "https://r", "scope": "a b"}},
    )
    assert isinstance(e, AuthRequired)
    assert e.metadata == e.data and e.authorization_servers == ["https://as"]
    assert e.resource_metadata_url == "https://r" and e.scope == "a b"
    bare = lemonmcp.errors.error_from_status(E_AUTH_REQUIRED, {"message": "m"})
    assert isinstance(bare, AuthRequired)
    assert bare.metadata == {} and bare.authorization_servers == [] and bare.scope is None


# ---------------------------------------------------------------- end to end


def test_unauthorized_fails_with_discovered_metadata(oauth: OAuthServer) -> None:
    with pytest.raises(AuthRequired) as ei:
        open_client(oauth.mcp)
    md = ei.value.metadata
    assert ei.value.resource_metadata_url == oauth.base + "/.well-known/oauth-protected-resource/mcp"
    assert ei.value.authorization_servers == [oauth.base + "/oauth"]
    assert md["resource"] == oauth.mcp
    assert md["authorization_server_metadata"][0]["token_endpoint"] == oauth.base + "/oauth/token"
    assert not oauth.token_requests()


def test_client_credentials(oauth: OAuthServer) -> None:
    c = open_client(oauth.mcp, auth=lemonmcp.auth_config(client_id=CLIENT_ID, client_secret=CLIENT_SECRET))
    try:
        assert c.call_tool("echo", {"text": "hi"}).text == "hi"
    finally:
        c.close()
    toks = oauth.token_requests()
    assert [t["form"]["grant_type"] for t in toks] == ["client_credentials"]
    assert toks[0]["status"] == 200


def test_authorization_code_with_authorize_and_host_store(oauth: OAuthServer, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="lemonmcp")
    browser = Browser()
    store = MemoryStore()
    c = open_client(oauth.mcp, authorize=browser, store=store, auth={"redirect_uri": REDIRECT, "token_store": APP_STORE})
    try:
        assert c.call_tool("add", {"a": 2, "b": 3}).text == "5"
    finally:
        c.close()
    assert len(browser.requests) == 1
    req = browser.requests[0]
    assert req["redirect_uri"] == REDIRECT and req["code_challenge_method"] == "S256"
    assert req["authorization_url"].startswith(oauth.base + "/oauth/authorize?")
    assert store.loads and all(c == "grants" for c, _ in store.loads)
    assert store.record and store.record["access_token"] and store.record["resource"] == oauth.mcp
    grants = [t["form"]["grant_type"] for t in oauth.token_requests()]
    assert grants == ["authorization_code"]
    authorizes = [e for e in oauth.log() if e["path"] == "/oauth/authorize"]
    assert len(authorizes) == 1 and authorizes[0]["query"]["code_challenge"] == req["code_challenge"]

    # A second client resumes from the host's store: no new authorization,
    # no token request, the saved bearer is used.
    oauth.reset()
    browser2 = Browser()
    store2 = MemoryStore(store.docs)
    c = open_client(oauth.mcp, authorize=browser2, store=store2, auth={"redirect_uri": REDIRECT, "token_store": APP_STORE})
    try:
        c.list_tools()
    finally:
        c.close()
    assert browser2.requests == [] and not oauth.token_requests()
    assert "handler raised" not in caplog.text  # every answer (store_load, store_save) was accepted
    bearer = "Bearer " + str(store.record["access_token"]) if store.record else ""
    assert any(e["headers"].get("authorization") == bearer for e in oauth.log() if e["path"] == "/mcp")


def test_authorize_answered_with_a_plain_url(oauth: OAuthServer) -> None:
    c = open_client(oauth.mcp, authorize=lambda r: browser_get(r["authorization_url"]), auth={"redirect_uri": REDIRECT})
    try:
        c.ping()
    finally:
        c.close()


def test_failing_authorize_is_auth_required_and_never_leaks(oauth: OAuthServer, caplog: pytest.LogCaptureFixture) -> None:
    leaked = "code-LEAK-7f3a"

    def authorize(request: Dict[str, Any]) -> Dict[str, str]:
        raise RuntimeError(f"browser crashed while holding {leaked} and {request['code_verifier']}")

    caplog.set_level(logging.DEBUG, logger="lemonmcp")
    with pytest.raises(AuthRequired) as ei:
        open_client(oauth.mcp, authorize=authorize, auth={"redirect_uri": REDIRECT})
    text = str(ei.value) + json.dumps(ei.value.raw)
    assert leaked not in text and "browser crashed" not in text
    assert leaked not in caplog.text and "browser crashed" not in caplog.text
    assert "the authorize handler raised RuntimeError" in caplog.text
    assert not oauth.token_requests()


def test_wrong_state_is_refused(oauth: OAuthServer) -> None:
    def authorize(request: Dict[str, Any]) -> Dict[str, str]:
        loc = browser_get(request["authorization_url"])
        return {"redirect_url": loc.replace("state=", "state=x")}

    with pytest.raises(AuthRequired):
        open_client(oauth.mcp, authorize=authorize, auth={"redirect_uri": REDIRECT})
    assert not oauth.token_requests()  # the code never reached the token endpoint


def test_async_client_with_async_callbacks(oauth: OAuthServer) -> None:
    saved: List[Dict[str, Any]] = []
    asked: List[str] = []

    async def authorize(request: Dict[str, Any]) -> Dict[str, str]:
        asked.append(request["state"])
        loc = await asyncio.get_running_loop().run_in_executor(None, browser_get, request["authorization_url"])
        return {"redirect_url": loc}

    async def load(collection: str, key: str) -> None:
        await asyncio.sleep(0)
        return None if not saved else (saved[-1], len(saved))

    async def save(collection: str, key: str, expected_version: int, document: Dict[str, Any]) -> Any:
        if expected_version != len(saved):
            return lemonmcp.StoreConflict(saved[-1] if saved else None, len(saved))
        saved.append(document)
        return len(saved)

    async def main() -> str:
        async with lemonmcp.AsyncClient.http(
            oauth.mcp,
            fallback_sse=False,
            ready_timeout=READY_S,
            call_timeout=READY_S,
            authorize=authorize,
            store=(load, save),
            auth={"redirect_uri": REDIRECT, "token_store": APP_STORE},
        ) as c:
            r = await c.call_tool("echo", {"text": "async"})
            return r.text

    assert asyncio.run(asyncio.wait_for(main(), 30)) == "async"
    assert len(asked) == 1 and saved and saved[-1]["body"]["token_type"].lower() == "bearer"


# ---------------------------------------------------------------- the CLI


def _cli_env(**extra: str) -> Dict[str, str]:
    env = env_for_child()
    env.update(extra)
    return env


def run_cli(args: List[str], env: Dict[str, str], timeout: float = 60.0) -> "subprocess.CompletedProcess[str]":
    return subprocess.run(
        [sys.executable, "-m", "lemonmcp", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        stdin=subprocess.DEVNULL,
        cwd=PKG_ROOT,
    )


def test_cli_client_credentials_secret_from_env(oauth: OAuthServer) -> None:
    p = run_cli(
        ["--url", oauth.mcp, "--client-id", CLIENT_ID, "--client-secret-env", "MY_MCP_SECRET", "--scope", "read", "tools"],
        _cli_env(MY_MCP_SECRET=CLIENT_SECRET),
    )
    assert p.returncode == 0, p.stderr
    assert "echo" in p.stdout and CLIENT_SECRET not in p.stdout + p.stderr
    toks = oauth.token_requests()
    assert [t["form"]["grant_type"] for t in toks] == ["client_credentials"]
    assert toks[0]["form"].get("scope") == "read"


def test_cli_usage_errors() -> None:
    url = "http://127.0.0.1:1/mcp"
    p = run_cli(["--url", url, "--client-id", "x", "--client-secret-env", "UNSET_VAR_FOR_TEST", "tools"], _cli_env())
    assert p.returncode == 2 and "UNSET_VAR_FOR_TEST is not set" in p.stderr
    p = run_cli(["--url", url, "--authorize", "tools"], _cli_env())
    assert p.returncode == 2 and "--authorize needs --redirect-uri" in p.stderr
    p = run_cli(["--stdio", "true", "--client-id", "x", "tools"], _cli_env())
    assert p.returncode == 2 and "apply to HTTP servers" in p.stderr
    p = run_cli(["--url", url, "--client-id", "x", "--client-secret", CLIENT_SECRET, "tools"], _cli_env())
    assert p.returncode == 2 and "--client-secret-env" in p.stderr and CLIENT_SECRET not in p.stderr + p.stdout


def test_cli_auth_required_exit_status(oauth: OAuthServer) -> None:
    p = run_cli(["--url", oauth.mcp, "--timeout", "15", "tools"], _cli_env())
    assert p.returncode == 6, p.stderr
    assert "requires authorization" in p.stderr and oauth.base + "/oauth" in p.stderr


def test_cli_interactive_authorize(oauth: OAuthServer) -> None:
    """--authorize prints the URL on stderr and reads the redirected URL from
    stdin: this test plays the person with the browser."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "lemonmcp", "--url", oauth.mcp, "--authorize", "--redirect-uri", REDIRECT,
         "--timeout", "30", "call", "echo", "text=interactive"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_cli_env(),
        cwd=PKG_ROOT,
    )
    lines: "queue.Queue[Optional[str]]" = queue.Queue()
    assert proc.stderr is not None and proc.stdin is not None

    def pump() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    seen: List[str] = []
    try:
        deadline = time.monotonic() + 30
        url = None
        while url is None:
            line = lines.get(timeout=max(0.1, deadline - time.monotonic()))
            assert line is not None, "the CLI exited before asking: " + "".join(seen)
            seen.append(line)
            if line.strip().startswith(oauth.base + "/oauth/authorize?"):
                url = line.strip()
        proc.stdin.write(browser_get(url) + "\n")
        proc.stdin.close()
        proc.wait(timeout=30)
        assert proc.stdout is not None
        out = proc.stdout.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
    assert proc.returncode == 0, "".join(seen)
    assert out.strip() == "interactive"
    assert [t["form"]["grant_type"] for t in oauth.token_requests()] == ["authorization_code"]
