"""Building and checking the configuration JSON given to ``lmcp_client_new``.

Pure Python, no library calls. The checks here only catch the mistakes that
are easy to name from Python (a wrong type, a bad enum value) with an error
that names the field as a dotted path (``timeouts.call_ms``). The library
stays the authority: whatever passes here is checked again there, including
unknown fields, which are passed through so the library can name them.
"""

from __future__ import annotations

import math
import os
from typing import Any, Dict, Iterable, Mapping, Optional, Sequence, Union

from .errors import InvalidArgument

__all__ = [
    "stdio_transport",
    "http_transport",
    "build_config",
    "check_config",
    "call_options",
    "seconds_to_ms",
    "auth_config",
    "CONFIG_KEYWORDS",
    "AUTH_SECRET_FIELDS",
]

PathLike = Union[str, "os.PathLike[str]"]

_STDERR_MODES = ("capture", "merge", "discard")
_ENV_INHERIT = ("minimal", "all")
_HTTP_TYPES = ("streamable_http", "sse", "http")
_TRANSPORT_TYPES = ("stdio",) + _HTTP_TYPES

_TIMEOUT_MS_FIELDS = (
    "ready_ms",
    "call_ms",
    "max_total_ms",
    "host_request_ms",
    "close_grace_ms",
)
_LIMIT_FIELDS = ("max_message_bytes", "max_pages")
_CLIENT_INFO_FIELDS = ("name", "version", "title", "description", "website_url")

#: Flat keyword arguments accepted besides the group dicts, and where they go.
CONFIG_KEYWORDS: Dict[str, str] = {
    "client_name": "client_info.name",
    "client_version": "client_info.version",
    "client_title": "client_info.title",
    "client_description": "client_info.description",
    "client_website_url": "client_info.website_url",
    "protocol_mode": "protocol.mode",
    "protocol_versions": "protocol.versions",
    "ready_ms": "timeouts.ready_ms",
    "call_ms": "timeouts.call_ms",
    "max_total_ms": "timeouts.max_total_ms",
    "reset_timeout_on_progress": "timeouts.reset_timeout_on_progress",
    "host_request_ms": "timeouts.host_request_ms",
    "close_grace_ms": "timeouts.close_grace_ms",
    "max_message_bytes": "limits.max_message_bytes",
    "max_pages": "limits.max_pages",
    "sampling_mode": "sampling_policy.mode",
    "sampling_max_tokens": "sampling_policy.max_tokens",
    "sampling_allowed_models": "sampling_policy.allowed_models",
    "sampling_max_messages": "sampling_policy.max_messages",
    "sampling_max_text_chars": "sampling_policy.max_text_chars",
    # seconds, for people who think in seconds
    "ready_timeout": "timeouts.ready_ms",
    "call_timeout": "timeouts.call_ms",
    "close_grace": "timeouts.close_grace_ms",
    "host_request_timeout": "timeouts.host_request_ms",
}
_SECONDS_KEYWORDS = ("ready_timeout", "call_timeout", "close_grace", "host_request_timeout")
_GROUPS = (
    "client_info",
    "protocol",
    "timeouts",
    "limits",
    "handlers",
    "sampling_policy",
    "capabilities",
    "result_format",
    "auth",
)
_SAMPLING_MODES = ("deny", "model", "reviewed_model")


def _bad(field: str, expected: str, value: Any) -> InvalidArgument:
    return InvalidArgument(f"{field}: expected {expected}, got {value!r}")


def _bad_secret(field: str, expected: str, value: Any) -> InvalidArgument:
    """Like _bad, for a field that may hold a secret: names the value's type,
    never the value."""
    return InvalidArgument(f"{field}: expected {expected}, got a value of type {type(value).__name__}")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_str(field: str, value: Any, *, empty: bool = True) -> str:
    if not isinstance(value, str) or (not empty and not value):
        raise _bad(field, "a non-empty string" if not empty else "a string", value)
    return value


def _check_bool(field: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise _bad(field, "true or false", value)
    return value


def _check_nonneg_int(field: str, value: Any) -> int:
    if not _is_int(value) or value < 0:
        raise _bad(field, "a non-negative integer", value)
    return int(value)


def _check_pos_int(field: str, value: Any) -> int:
    if not _is_int(value) or value <= 0:
        raise _bad(field, "a positive integer", value)
    return int(value)


def _check_choice(field: str, value: Any, choices: Sequence[str]) -> str:
    if value not in choices:
        raise _bad(field, " or ".join(repr(c) for c in choices), value)
    return str(value)


def _check_str_map(field: str, value: Any) -> Dict[str, str]:
    if not isinstance(value, Mapping):
        raise _bad(field, "an object of strings", value)
    out: Dict[str, str] = {}
    for k, v in value.items():
        if not isinstance(k, str) or not k:
            raise _bad(f"{field}", "non-empty string keys", k)
        if not isinstance(v, str):
            raise _bad(f"{field}.{k}", "a string", v)
        out[k] = v
    return out


def _check_obj(field: str, value: Any) -> Dict[str, Any]:
    if not isinstance(value, Mapping):
        raise _bad(field, "an object", value)
    return dict(value)


def seconds_to_ms(field: str, seconds: Any) -> int:
    """Seconds (int or float, >= 0) to whole milliseconds, rounding up so that
    a small positive timeout never becomes 0 ("no limit")."""
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
        raise _bad(field, "a number of seconds", seconds)
    if math.isnan(seconds) or seconds < 0 or math.isinf(seconds):
        raise _bad(field, "a finite, non-negative number of seconds", seconds)
    return int(math.ceil(seconds * 1000.0))


# ------------------------------------------------------------ transports


def stdio_transport(
    command: PathLike,
    args: Iterable[Any] = (),
    *,
    env: Optional[Mapping[str, str]] = None,
    env_inherit: Optional[str] = None,
    cwd: Optional[PathLike] = None,
    stderr: Optional[str] = None,
) -> Dict[str, Any]:
    """The ``transport`` object for a stdio server (spawned without a shell)."""
    if isinstance(command, os.PathLike):
        command = os.fspath(command)
    t: Dict[str, Any] = {"type": "stdio", "command": _check_str("transport.command", command, empty=False)}
    if isinstance(args, (str, bytes)):
        raise _bad("transport.args", "a list of strings (not one string)", args)
    arg_list = []
    for i, a in enumerate(args):
        if isinstance(a, os.PathLike):
            a = os.fspath(a)
        if not isinstance(a, str):
            raise _bad(f"transport.args[{i}]", "a string", a)
        arg_list.append(a)
    if arg_list:
        t["args"] = arg_list
    if env is not None:
        t["env"] = _check_str_map("transport.env", env)
    if env_inherit is not None:
        t["env_inherit"] = _check_choice("transport.env_inherit", env_inherit, _ENV_INHERIT)
    if cwd is not None:
        if isinstance(cwd, os.PathLike):
            cwd = os.fspath(cwd)
        t["cwd"] = _check_str("transport.cwd", cwd, empty=False)
    if stderr is not None:
        t["stderr"] = _check_choice("transport.stderr", stderr, _STDERR_MODES)
    return t


def http_transport(
    url: str, headers: Optional[Mapping[str, str]] = None, *, type: str = "http"
) -> Dict[str, Any]:
    """The ``transport`` object for an HTTP server: ``type`` is
    "streamable_http", "sse" (legacy HTTP+SSE) or "http" (Streamable HTTP,
    falling back to legacy SSE)."""
    t: Dict[str, Any] = {
        "type": _check_choice("transport.type", type, _HTTP_TYPES),
        "url": _check_str("transport.url", url, empty=False),
    }
    if headers is not None:
        t["headers"] = _check_str_map("transport.headers", headers)
    return t


def _check_transport(value: Any) -> Dict[str, Any]:
    t = _check_obj("transport", value)
    kind = t.get("type")
    _check_choice("transport.type", kind, _TRANSPORT_TYPES)
    if kind == "stdio":
        _check_str("transport.command", t.get("command"), empty=False)
        if "args" in t:
            args = t["args"]
            if not isinstance(args, (list, tuple)):
                raise _bad("transport.args", "a list of strings", args)
            for i, a in enumerate(args):
                _check_str(f"transport.args[{i}]", a)
            t["args"] = list(args)
        if "env" in t:
            t["env"] = _check_str_map("transport.env", t["env"])
        if "env_inherit" in t:
            _check_choice("transport.env_inherit", t["env_inherit"], _ENV_INHERIT)
        if "cwd" in t:
            _check_str("transport.cwd", t["cwd"], empty=False)
        if "stderr" in t:
            _check_choice("transport.stderr", t["stderr"], _STDERR_MODES)
    else:
        _check_str("transport.url", t.get("url"), empty=False)
        if "headers" in t:
            t["headers"] = _check_str_map("transport.headers", t["headers"])
    return t


# ------------------------------------------------------------ OAuth

_AUTH_METHODS = ("client_secret_basic", "client_secret_post", "none", "private_key_jwt")
_AUTH_FLOWS = ("auto", "client_credentials", "authorization_code", "jwt_bearer")
_TOKEN_STORES = ("memory", "host")
_JWT_ALGS = ("ES256", "ES384", "ES512", "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "EdDSA")
_AUTH_STR_FIELDS = ("client_id", "client_issuer", "client_metadata_url", "client_name", "redirect_uri")
#: Fields of the "auth" object (dotted paths) whose values are secrets: an
#: error about them names the field and the value's type, never the value.
AUTH_SECRET_FIELDS = (
    "auth.client_secret",
    "auth.refresh_token",
    "auth.private_key_jwt.key_pem",
    "auth.assertion",
    "auth.token_exchange.subject_token",
    "auth.token_exchange.client_secret",
    "auth.dpop.key_pem",
)
_TOKEN_EXCHANGE_STR_FIELDS = (
    "subject_token_type", "requested_token_type", "audience", "resource", "client_id",
)
_TOKEN_EXCHANGE_METHODS = ("client_secret_basic", "client_secret_post", "none")


def _check_auth_str(field: str, value: Any, secret: bool) -> str:
    if not isinstance(value, str):
        raise (_bad_secret if secret else _bad)(field, "a non-empty string", value)
    if not value.strip():
        raise InvalidArgument(f"{field}: must not be empty (leave the field out instead)")
    return value


def _check_auth(value: Any) -> Dict[str, Any]:
    """The "auth" object: types and enumerations, secrets never echoed.
    Unknown fields and the rules that tie fields together (a flow that needs
    a secret, a method that needs a key) are the library's to report."""
    if not isinstance(value, Mapping):
        raise _bad_secret("auth", "an object", value)
    a = dict(value)
    for k in _AUTH_STR_FIELDS:
        if k in a:
            _check_auth_str(f"auth.{k}", a[k], secret=False)
    for k in ("client_secret", "refresh_token", "assertion"):
        if k in a:
            _check_auth_str(f"auth.{k}", a[k], secret=True)
    if "token_exchange" in a:
        a["token_exchange"] = _check_token_exchange(a["token_exchange"])
    if "dpop" in a:
        a["dpop"] = _check_dpop(a["dpop"])
    if "token_auth_method" in a:
        _check_choice("auth.token_auth_method", a["token_auth_method"], _AUTH_METHODS)
    if "flow" in a:
        _check_choice("auth.flow", a["flow"], _AUTH_FLOWS)
    if "token_store" in a:
        _check_choice("auth.token_store", a["token_store"], _TOKEN_STORES)
    if "scopes" in a:
        scopes = a["scopes"]
        if isinstance(scopes, (str, bytes)) or not isinstance(scopes, (list, tuple)):
            raise _bad("auth.scopes", "a list of scope strings", scopes)
        for i, sc in enumerate(scopes):
            if not isinstance(sc, str) or not sc or any(c in sc for c in " \t\r\n\"\\"):
                raise _bad(f"auth.scopes[{i}]", "one non-empty scope token (no spaces or quotes)", sc)
        a["scopes"] = list(scopes)
    if "private_key_jwt" in a:
        pk = a["private_key_jwt"]
        if not isinstance(pk, Mapping):
            raise _bad_secret("auth.private_key_jwt", 'an object {"key_pem", "kid"?, "alg"?}', pk)
        pk = dict(pk)
        if "key_pem" not in pk:
            raise InvalidArgument("auth.private_key_jwt.key_pem: required")
        _check_auth_str("auth.private_key_jwt.key_pem", pk["key_pem"], secret=True)
        if "kid" in pk:
            _check_str("auth.private_key_jwt.kid", pk["kid"])
        if "alg" in pk:
            _check_choice("auth.private_key_jwt.alg", pk["alg"], _JWT_ALGS)
        a["private_key_jwt"] = pk
    if "authorization_timeout_ms" in a:
        _check_pos_int("auth.authorization_timeout_ms", a["authorization_timeout_ms"])
    if "max_step_ups" in a:
        n = a["max_step_ups"]
        if not _is_int(n) or not 0 <= n <= 10:
            raise _bad("auth.max_step_ups", "an integer from 0 to 10", n)
    if "allow_insecure_http" in a:
        _check_bool("auth.allow_insecure_http", a["allow_insecure_http"])
    return a


def _check_token_exchange(value: Any) -> Dict[str, Any]:
    """auth.token_exchange (SEP-990): the IdP's token endpoint and the
    subject token are required; the library checks the rest again."""
    if not isinstance(value, Mapping):
        raise _bad_secret(
            "auth.token_exchange", 'an object {"token_endpoint", "subject_token", ...}', value
        )
    te = dict(value)
    for k in ("token_endpoint", "subject_token"):
        if k not in te:
            raise InvalidArgument(f"auth.token_exchange.{k}: required")
    _check_auth_str("auth.token_exchange.token_endpoint", te["token_endpoint"], secret=False)
    for k in ("subject_token", "client_secret"):
        if k in te:
            _check_auth_str(f"auth.token_exchange.{k}", te[k], secret=True)
    for k in _TOKEN_EXCHANGE_STR_FIELDS:
        if k in te:
            _check_auth_str(f"auth.token_exchange.{k}", te[k], secret=False)
    if "token_auth_method" in te:
        _check_choice("auth.token_exchange.token_auth_method", te["token_auth_method"], _TOKEN_EXCHANGE_METHODS)
    if "scopes" in te:
        scopes = te["scopes"]
        if isinstance(scopes, (str, bytes)) or not isinstance(scopes, (list, tuple)):
            raise _bad("auth.token_exchange.scopes", "a list of scope strings", scopes)
        te["scopes"] = list(scopes)
    return te


def _check_dpop(value: Any) -> Any:
    """auth.dpop: true/false, or {"alg"?, "key_pem"?}."""
    if isinstance(value, bool):
        return value
    if not isinstance(value, Mapping):
        raise _bad_secret("auth.dpop", 'true, false or an object {"alg"?, "key_pem"?}', value)
    d = dict(value)
    if "alg" in d:
        _check_choice("auth.dpop.alg", d["alg"], _JWT_ALGS)
    if "key_pem" in d:
        _check_auth_str("auth.dpop.key_pem", d["key_pem"], secret=True)
    return d


def auth_config(
    *,
    client_id: Optional[str] = None,
    client_secret: Optional[str] = None,
    client_issuer: Optional[str] = None,
    token_auth_method: Optional[str] = None,
    client_metadata_url: Optional[str] = None,
    client_name: Optional[str] = None,
    scopes: Optional[Iterable[str]] = None,
    redirect_uri: Optional[str] = None,
    flow: Optional[str] = None,
    refresh_token: Optional[str] = None,
    private_key_pem: Optional[str] = None,
    private_key_id: Optional[str] = None,
    private_key_alg: Optional[str] = None,
    token_store: Optional[str] = None,
    authorization_timeout: Optional[float] = None,
    max_step_ups: Optional[int] = None,
    allow_insecure_http: Optional[bool] = None,
    assertion: Optional[str] = None,
    token_exchange: Optional[Mapping[str, Any]] = None,
    dpop: Union[bool, Mapping[str, Any], None] = None,
) -> Dict[str, Any]:
    """The ``auth`` object (OAuth 2.1 for the HTTP transports) from keyword
    arguments; None leaves a field out. ``authorization_timeout`` is in
    seconds; ``private_key_*`` become ``private_key_jwt``. ``assertion``
    (a JWT for the jwt-bearer grant), ``token_exchange`` (SEP-990: the
    enterprise IdP exchange) and ``dpop`` (True or {"alg"?, "key_pem"?})
    are passed as they are. Checked like
    :func:`check_config` checks it (secrets are never echoed in errors)."""
    a: Dict[str, Any] = {}
    for key, value in (
        ("client_id", client_id),
        ("client_secret", client_secret),
        ("client_issuer", client_issuer),
        ("token_auth_method", token_auth_method),
        ("client_metadata_url", client_metadata_url),
        ("client_name", client_name),
        ("redirect_uri", redirect_uri),
        ("flow", flow),
        ("refresh_token", refresh_token),
        ("token_store", token_store),
        ("max_step_ups", max_step_ups),
        ("allow_insecure_http", allow_insecure_http),
        ("assertion", assertion),
        ("token_exchange", token_exchange),
        ("dpop", dpop),
    ):
        if value is not None:
            a[key] = value
    if scopes is not None:
        if isinstance(scopes, (str, bytes)):
            raise _bad("auth.scopes", "a list of scope strings (not one string)", scopes)
        a["scopes"] = list(scopes)
    if private_key_pem is not None:
        pk: Dict[str, Any] = {"key_pem": private_key_pem}
        if private_key_id is not None:
            pk["kid"] = private_key_id
        if private_key_alg is not None:
            pk["alg"] = private_key_alg
        a["private_key_jwt"] = pk
    elif private_key_id is not None or private_key_alg is not None:
        raise InvalidArgument("auth.private_key_jwt.key_pem: required with private_key_id / private_key_alg")
    if authorization_timeout is not None:
        a["authorization_timeout_ms"] = max(1, seconds_to_ms("authorization_timeout", authorization_timeout))
    return _check_auth(a)


# ------------------------------------------------------------ whole config


def check_config(config: Mapping[str, Any]) -> Dict[str, Any]:
    """Check the known fields of a whole configuration object and return a
    copy. Unknown fields are kept: the library rejects them by name."""
    if not isinstance(config, Mapping):
        raise _bad("config", "an object", config)
    out = dict(config)
    if "transport" not in out:
        raise InvalidArgument("transport: required")
    out["transport"] = _check_transport(out["transport"])
    if "client_info" in out:
        ci = _check_obj("client_info", out["client_info"])
        for k in _CLIENT_INFO_FIELDS:
            if k in ci:
                _check_str(f"client_info.{k}", ci[k], empty=k not in ("name", "version"))
        out["client_info"] = ci
    if "protocol" in out:
        p = _check_obj("protocol", out["protocol"])
        if "mode" in p:
            _check_str("protocol.mode", p["mode"], empty=False)
        if "versions" in p:
            vs = p["versions"]
            if not isinstance(vs, (list, tuple)) or not vs:
                raise _bad("protocol.versions", "a non-empty list of version strings", vs)
            for i, v in enumerate(vs):
                _check_str(f"protocol.versions[{i}]", v, empty=False)
            p["versions"] = list(vs)
        out["protocol"] = p
    if "timeouts" in out:
        tm = _check_obj("timeouts", out["timeouts"])
        for k in _TIMEOUT_MS_FIELDS:
            if k in tm:
                _check_nonneg_int(f"timeouts.{k}", tm[k])
        if "reset_timeout_on_progress" in tm:
            _check_bool("timeouts.reset_timeout_on_progress", tm["reset_timeout_on_progress"])
        out["timeouts"] = tm
    if "limits" in out:
        lm = _check_obj("limits", out["limits"])
        for k in _LIMIT_FIELDS:
            if k in lm:
                _check_pos_int(f"limits.{k}", lm[k])
        out["limits"] = lm
    if "handlers" in out:
        h = _check_obj("handlers", out["handlers"])
        if "roots" in h:
            r = _check_obj("handlers.roots", h["roots"])
            if "list_changed" in r:
                _check_bool("handlers.roots.list_changed", r["list_changed"])
        if "sampling" in h:
            sm = _check_obj("handlers.sampling", h["sampling"])
            for k in ("tools", "context"):
                if k in sm:
                    _check_bool(f"handlers.sampling.{k}", sm[k])
        if "elicitation" in h:
            e = _check_obj("handlers.elicitation", h["elicitation"])
            for k in ("form", "url"):
                if k in e:
                    _check_bool(f"handlers.elicitation.{k}", e[k])
        if "authorization" in h:
            _check_obj("handlers.authorization", h["authorization"])
            if out["transport"]["type"] == "stdio":
                raise InvalidArgument("handlers.authorization: applies to the HTTP transports only")
        out["handlers"] = h
    if "sampling_policy" in out:
        sp = _check_obj("sampling_policy", out["sampling_policy"])
        if "mode" in sp:
            _check_choice("sampling_policy.mode", sp["mode"], _SAMPLING_MODES)
        if "max_tokens" in sp:
            _check_pos_int("sampling_policy.max_tokens", sp["max_tokens"])
        for k in ("max_messages", "max_text_chars"):
            if k in sp:
                _check_nonneg_int(f"sampling_policy.{k}", sp[k])
        if "allowed_models" in sp:
            ms = sp["allowed_models"]
            if not isinstance(ms, (list, tuple)):
                raise _bad("sampling_policy.allowed_models", "a list of model names", ms)
            for i, m in enumerate(ms):
                _check_str(f"sampling_policy.allowed_models[{i}]", m, empty=False)
            sp["allowed_models"] = list(ms)
        out["sampling_policy"] = sp
    if "capabilities" in out:
        caps = _check_obj("capabilities", out["capabilities"])
        if "experimental" in caps:
            _check_obj("capabilities.experimental", caps["experimental"])
        out["capabilities"] = caps
    if "auth" in out:
        out["auth"] = _check_auth(out["auth"])
        if out["transport"]["type"] == "stdio":
            raise InvalidArgument(
                "auth: applies to the HTTP transports only (a stdio server takes its credentials from its environment)"
            )
    if "result_format" in out:
        rf = out["result_format"]
        if rf != "json":
            raise _bad(
                "result_format", "'json' (the Python binding reads JSON results)", rf
            )
    return out


def build_config(
    transport: Optional[Mapping[str, Any]] = None,
    *,
    base: Optional[Mapping[str, Any]] = None,
    handler_kinds: Iterable[str] = (),
    roots_list_changed: bool = True,
    host_token_store: bool = False,
    **options: Any,
) -> Dict[str, Any]:
    """Assemble a configuration from a base object, a transport object and
    keyword options, then check it.

    ``base`` is a whole configuration (every field kept, unknown ones too, for
    the library to judge). ``options`` holds the group objects
    (``client_info``, ``protocol``, ``timeouts``, ``limits``, ``handlers``,
    ``result_format``), whose fields are merged over the base's, and/or the
    flat keywords of :data:`CONFIG_KEYWORDS`, which win over both.
    ``handler_kinds`` lists the host requests the caller answers ("roots",
    "sampling", "elicitation", "authorization"); each is added to
    ``handlers`` unless that object already mentions it. With
    ``host_token_store`` the caller answers "token_load"/"token_save":
    ``auth.token_store`` becomes "host" (an explicit "memory" is an error).
    The ``auth`` group is the OAuth object (see :func:`auth_config`).
    """
    if base is not None and not isinstance(base, Mapping):
        raise _bad("config", "an object", base)
    config: Dict[str, Any] = {}
    for key, value in (base or {}).items():
        config[key] = dict(value) if isinstance(value, Mapping) else value
    if transport is not None:
        config["transport"] = dict(transport)
    for group in _GROUPS:
        if group not in options:
            continue
        value = options.pop(group)
        if value is None:
            continue
        if group == "result_format":
            config[group] = value
            continue
        if group == "auth" and not isinstance(value, Mapping):
            raise _bad_secret("auth", "an object", value)
        merged = dict(config[group]) if isinstance(config.get(group), Mapping) else {}
        merged.update(_check_obj(group, value))
        config[group] = merged
    for key in list(options):
        if key not in CONFIG_KEYWORDS:
            raise TypeError(f"unexpected keyword argument {key!r}")
        value = options.pop(key)
        if value is None:
            continue
        group, field = CONFIG_KEYWORDS[key].split(".", 1)
        if key in _SECONDS_KEYWORDS:
            value = seconds_to_ms(key, value)
        current = config.get(group)
        if current is None:
            current = config[group] = {}
        if not isinstance(current, dict):
            raise _bad(group, "an object", current)
        current[field] = value
    kinds = list(handler_kinds)
    if kinds:
        handlers = config.get("handlers")
        if handlers is None:
            handlers = config["handlers"] = {}
        if not isinstance(handlers, dict):
            raise _bad("handlers", "an object", handlers)
        for kind in kinds:
            if kind in handlers:
                continue
            if kind == "roots":
                handlers["roots"] = {"list_changed": roots_list_changed}
            elif kind == "sampling":
                handlers["sampling"] = {}
            elif kind == "elicitation":
                handlers["elicitation"] = {"form": True}
            elif kind == "authorization":
                handlers["authorization"] = {}
            else:  # pragma: no cover - internal
                raise ValueError(kind)
    if host_token_store:
        auth = config.get("auth")
        if auth is None:
            auth = config["auth"] = {}
        if not isinstance(auth, dict):
            raise _bad_secret("auth", "an object", auth)
        store = auth.get("token_store", "host")
        if store != "host":
            raise InvalidArgument(
                f"auth.token_store: {store!r} conflicts with token_store= (the host's store answers "
                "token_load/token_save; leave auth.token_store out or set it to 'host')"
            )
        auth["token_store"] = "host"
    return check_config(config)


# ----------------------------------------------------------- call options


def call_options(
    *,
    timeout: Optional[float] = None,
    timeout_ms: Optional[int] = None,
    reset_timeout_on_progress: Optional[bool] = None,
    max_total_ms: Optional[int] = None,
    max_total: Optional[float] = None,
    all_pages: Optional[bool] = None,
    progress: Optional[bool] = None,
    wait_ready: Optional[bool] = None,
    meta: Optional[Mapping[str, Any]] = None,
    verify: Optional[Mapping[str, Any]] = None,
    no_cache: Optional[bool] = None,
) -> Dict[str, Any]:
    """The ``options_json`` object of ``lmcp_client_call``.

    ``timeout``/``max_total`` are seconds (float), ``timeout_ms``/
    ``max_total_ms`` milliseconds; 0 means no limit. ``meta`` becomes
    ``_meta``. ``verify`` (``resources/read`` only) is what the host holds
    about the resource, ``{"digest": "sha256:<hex>", "size": <bytes>,
    "frontmatter": {...}}`` (any of them; a skill file's entry from
    ``skills/list``): the library checks the content and raises
    ``ProtocolError`` instead of returning content that does not match.
    ``no_cache`` sends the request even when the 2026-07-28 result cache
    holds a fresh result for it (see docs/modern.md).
    """
    opts: Dict[str, Any] = {}
    if timeout is not None and timeout_ms is not None:
        raise InvalidArgument("timeout: give timeout (seconds) or timeout_ms, not both")
    if timeout is not None:
        opts["timeout_ms"] = seconds_to_ms("timeout", timeout)
    if timeout_ms is not None:
        opts["timeout_ms"] = _check_nonneg_int("timeout_ms", timeout_ms)
    if max_total is not None and max_total_ms is not None:
        raise InvalidArgument("max_total: give max_total (seconds) or max_total_ms, not both")
    if max_total is not None:
        opts["max_total_ms"] = seconds_to_ms("max_total", max_total)
    if max_total_ms is not None:
        opts["max_total_ms"] = _check_nonneg_int("max_total_ms", max_total_ms)
    if reset_timeout_on_progress is not None:
        opts["reset_timeout_on_progress"] = _check_bool(
            "reset_timeout_on_progress", reset_timeout_on_progress
        )
    if all_pages is not None:
        opts["all_pages"] = _check_bool("all_pages", all_pages)
    if progress is not None:
        opts["progress"] = _check_bool("progress", progress)
    if wait_ready is not None:
        opts["wait_ready"] = _check_bool("wait_ready", wait_ready)
    if meta is not None:
        opts["_meta"] = _check_obj("meta", meta)
    if verify is not None:
        opts["verify"] = _check_verify(verify)
    if no_cache is not None:
        opts["no_cache"] = _check_bool("no_cache", no_cache)
    return opts


_VERIFY_KEYS = ("digest", "size", "frontmatter")


def _check_verify(value: Any) -> Dict[str, Any]:
    """The ``verify`` call option, its shape checked here so a mistake names
    the field; the digest's form and the comparison are the library's."""
    if not isinstance(value, Mapping) or not value:
        raise _bad("verify", "a dict with digest, size and/or frontmatter", value)
    out: Dict[str, Any] = {}
    for k, v in value.items():
        if k not in _VERIFY_KEYS:
            raise InvalidArgument(f"verify.{k}: not a known member (digest, size, frontmatter)")
        if k == "digest":
            out[k] = _check_str("verify.digest", v, empty=False)
        elif k == "size":
            out[k] = _check_nonneg_int("verify.size", v)
        else:
            out[k] = _check_obj("verify.frontmatter", v)
    return out
