"""The parts that need no server: the ABI table, errors, configuration,
call options, result types, and the command line's parsing and formatting."""

from __future__ import annotations

import builtins
import json
import os
import re
import subprocess
import sys
from typing import Any, Dict, Type

import pytest

import lemonmcp
from lemonmcp import _codec, _config, _ffi, cli, errors
from lemonmcp.types import CallToolResult, Closed, Content, Page, Progress, ServerInfo, Tool

from conftest import PKG_ROOT, REPO, env_for_child

HEADER = os.path.join(REPO, "include", "lemonmcp.h")


# ------------------------------------------------------------------ ABI


def test_table_declares_every_header_function() -> None:
    with open(HEADER) as f:
        text = f.read()
    declared = set(re.findall(r"^[a-z_0-9 ]*?[ *](lmcp_[a-z_]+)\(", text, re.M))
    in_table = {entry[0] for entry in _ffi.FUNCTIONS}
    assert declared and declared == in_table


def test_header_constants_match_binding() -> None:
    with open(HEADER) as f:
        text = f.read()
    abi = int(re.search(r"#define LMCP_ABI_VERSION (\d+)", text).group(1))  # type: ignore[union-attr]
    assert abi == _ffi.ABI_VERSION == lemonmcp.ABI_VERSION
    for name, value in re.findall(r"#define LMCP_(E_[A-Z_]+|OK) \(?(-?\d+)\)?", text):
        assert getattr(errors, name if name != "OK" else "OK") == int(value), name
    for name, value in re.findall(r"#define LMCP_(STATE_[A-Z]+) (\d+)", text):
        assert getattr(_ffi, name) == int(value), name
    queries = re.findall(r"#define LMCP_(QUERY_[A-Z_]+) (\d+)", text)
    assert len(queries) == 4, queries  # the header's spelling changed: fix the pattern, not the check
    for name, value in queries:
        assert getattr(_ffi, name) == int(value), name


def _header_statuses() -> Dict[str, int]:
    with open(HEADER) as f:
        text = f.read()
    found = {name: int(v) for name, v in re.findall(r"^#define LMCP_(E_[A-Z_]+) \((-\d+)\)$", text, re.M)}
    assert len(found) >= 14, found  # the header's spelling changed: fix the pattern, not the check
    return found


def test_every_header_status_has_its_exception_and_library_name() -> None:
    """One source of truth: every LMCP_E_* of the header has the constant of
    the same name here, its own exception class (exported by the package),
    and the name lmcp_status_string gives it; and nothing here names a
    status the header does not have."""
    statuses = _header_statuses()
    classes = set()
    for name, value in statuses.items():
        assert getattr(errors, name) == value, name
        cls = errors.error_class_for(value)
        assert cls is not errors.LemonMCPError and cls.status == value, name
        assert getattr(lemonmcp, cls.__name__) is cls, f"{cls.__name__} is not exported"
        classes.add(cls)
        exc = errors.error_from_status(value)
        assert exc.status_name == lemonmcp.status_string(value) != "unknown status", name
        assert str(exc) == lemonmcp.status_string(value), name  # no message: the library's name
    assert len(classes) == len(statuses)
    ours = {n for n in vars(errors) if re.fullmatch(r"E_[A-Z_]+", n)}
    assert ours == set(statuses), ours ^ set(statuses)
    subclasses = {c for c in vars(errors).values() if isinstance(c, type) and issubclass(c, errors.LemonMCPError)}
    assert subclasses - {errors.LemonMCPError} == classes


def test_status_names_come_from_the_library() -> None:
    assert errors.PolicyDenied("x").status_name == lemonmcp.status_string(errors.E_POLICY_DENIED) == "denied by policy"
    assert errors.LemonMCPError("x", status=12345).status_name == "unknown status"
    assert errors.status_name(errors.E_ABI_MISMATCH) == lemonmcp.status_string(errors.E_ABI_MISMATCH)


def test_version_is_the_headers() -> None:
    """LMCP_VERSION_STRING is the one version: the library reports it, the
    package's __version__ is it, and no file of the package writes another
    (setup.py reads the header; pyproject.toml leaves it dynamic)."""
    with open(HEADER) as f:
        m = re.search(r'^#define LMCP_VERSION_STRING "([^"]+)"$', f.read(), re.M)
    assert m is not None
    assert lemonmcp.__version__ == m.group(1) == lemonmcp.library_version()
    with open(os.path.join(PKG_ROOT, "pyproject.toml")) as f:
        pyproject = f.read()
    assert re.search(r'^dynamic = \["version"\]$', pyproject, re.M)
    assert not re.findall(r"^version\s*=", pyproject, re.M)
    for name in ("setup.py", os.path.join("lemonmcp", "__init__.py")):
        with open(os.path.join(PKG_ROOT, name)) as f:
            assert not re.search(r"""(^|[\s(,])(__)?version(__)?\s*=\s*["'][0-9]""", f.read(), re.M), name


def test_library_answers_without_starting_anything() -> None:
    assert lemonmcp.library_version() == lemonmcp.__version__
    feats = lemonmcp.features()
    assert feats["abi_version"] == _ffi.ABI_VERSION
    assert "stdio" in feats["transports"]
    assert lemonmcp.status_string(-9) == "protocol error"
    assert lemonmcp.status_string(12345) == "unknown status"
    assert os.path.isfile(lemonmcp.library_path())


def test_owned_strings_are_never_c_char_p() -> None:
    import ctypes

    static = {"lmcp_version", "lmcp_status_string"}
    for name, argtypes, restype, _ in _ffi.FUNCTIONS:
        if restype is ctypes.c_char_p:
            assert name in static, name


def _child(code: str, **env: str) -> "subprocess.CompletedProcess[str]":
    e = env_for_child()
    e.update(env)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=e, cwd=PKG_ROOT)


def test_missing_library_is_a_clear_import_error() -> None:
    r = _child("import lemonmcp", LEMONMCP_LIBRARY="/nonexistent/liblemonmcp.so")
    assert r.returncode != 0
    assert "ImportError" in r.stderr and "LEMONMCP_LIBRARY" in r.stderr


def test_missing_library_on_the_command_line_is_one_line() -> None:
    e = env_for_child()
    e["LEMONMCP_LIBRARY"] = "/nonexistent/liblemonmcp.so"
    r = subprocess.run([sys.executable, "-m", "lemonmcp", "info"], capture_output=True, text=True, timeout=60, env=e)
    assert r.returncode == 3
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr


def test_abi_mismatch_is_refused() -> None:
    code = """
import ctypes
real = ctypes.CDLL
class Fake:
    def __init__(self, path):
        self._dll = real(path)
    def __getattr__(self, name):
        if name == "lmcp_abi_version":
            return lambda: 99
        return getattr(self._dll, name)
ctypes.CDLL = Fake
try:
    import lemonmcp
except ImportError as e:
    print("refused:", e)
"""
    r = _child(code)
    assert r.returncode == 0, r.stderr
    assert "refused:" in r.stdout and "ABI version 99" in r.stdout


# ------------------------------------------------------------------ errors

ERROR_TABLE = [
    (-1, errors.InvalidArgument, ValueError),
    (-2, errors.InvalidHandle, None),
    (-3, errors.InvalidState, None),
    (-4, errors.NotFound, LookupError),
    (-5, errors.TimeoutError, builtins.TimeoutError),
    (-6, errors.Cancelled, None),
    (-7, errors.ClosedError, ConnectionError),
    (-8, errors.TransportError, ConnectionError),
    (-9, errors.ProtocolError, None),
    (-10, errors.UnsupportedError, None),
    (-11, errors.AuthRequired, None),
    (-12, errors.PolicyDenied, None),
    (-13, errors.AbiMismatch, None),
    (-14, errors.InternalError, None),
]


@pytest.mark.parametrize("status,cls,builtin", ERROR_TABLE)
def test_status_maps_to_exception(status: int, cls: Type[errors.LemonMCPError], builtin: Any) -> None:
    exc = errors.error_from_status(status, {"status": status, "message": "boom", "code": 7, "data": {"x": 1}})
    assert type(exc) is cls
    assert isinstance(exc, lemonmcp.LemonMCPError)
    assert exc.status == status and exc.message == "boom" and str(exc) == "boom"
    assert exc.code == 7 and exc.data == {"x": 1} and exc.raw["status"] == status
    if builtin is not None:
        assert isinstance(exc, builtin)
    assert getattr(lemonmcp, cls.__name__) is cls


def test_unknown_status_and_missing_message() -> None:
    exc = errors.error_from_status(-99, None)
    assert type(exc) is errors.LemonMCPError and exc.status == -99
    exc = errors.error_from_status(-9, {"code": True})
    assert exc.message == "protocol error" and exc.code is None


def test_oserror_subclasses_keep_their_message() -> None:
    exc = errors.TimeoutError("late", status=-5, code=None)
    assert str(exc) == "late" and exc.args == ("late",) and exc.errno is None
    assert repr(errors.ProtocolError("x", code=-32601)) == "ProtocolError('x', status=-9, code=-32601)"


# ------------------------------------------------------------------ config


def test_stdio_config_shape() -> None:
    t = _config.stdio_transport("srv", ["-a", "b"], env={"K": "V"}, env_inherit="all", cwd="/tmp", stderr="merge")
    assert t == {"type": "stdio", "command": "srv", "args": ["-a", "b"], "env": {"K": "V"}, "env_inherit": "all", "cwd": "/tmp", "stderr": "merge"}
    assert _config.http_transport("http://x/mcp") == {"type": "http", "url": "http://x/mcp"}


def test_flat_keywords_and_groups_merge() -> None:
    cfg = _config.build_config(
        {"type": "stdio", "command": "x"},
        timeouts={"ready_ms": 5, "close_grace_ms": 7},
        call_timeout=1.5,
        ready_ms=9,
        client_name="me",
        protocol_versions=["2025-06-18"],
        max_pages=3,
        handler_kinds=["roots", "sampling", "elicitation"],
    )
    assert cfg["timeouts"] == {"ready_ms": 9, "close_grace_ms": 7, "call_ms": 1500}
    assert cfg["client_info"] == {"name": "me"}
    assert cfg["protocol"] == {"versions": ["2025-06-18"]}
    assert cfg["limits"] == {"max_pages": 3}
    assert cfg["handlers"] == {"roots": {"list_changed": True}, "sampling": {}, "elicitation": {"form": True}}


def test_base_config_keeps_unknown_fields_for_the_library() -> None:
    cfg = _config.build_config(base={"transport": {"type": "stdio", "command": "x"}, "future": 1}, call_ms=3)
    assert cfg["future"] == 1 and cfg["timeouts"] == {"call_ms": 3}


BAD_CONFIGS = [
    ({"transport": {"type": "stdio"}}, "transport.command"),
    ({"transport": {"type": "carrier-pigeon"}}, "transport.type"),
    ({"transport": {"type": "stdio", "command": "x", "args": "a b"}}, "transport.args"),
    ({"transport": {"type": "stdio", "command": "x", "args": [1]}}, "transport.args[0]"),
    ({"transport": {"type": "stdio", "command": "x", "env": {"A": 1}}}, "transport.env.A"),
    ({"transport": {"type": "stdio", "command": "x", "stderr": "tee"}}, "transport.stderr"),
    ({"transport": {"type": "stdio", "command": "x", "env_inherit": "some"}}, "transport.env_inherit"),
    ({"transport": {"type": "http"}}, "transport.url"),
    ({"transport": {"type": "sse", "url": "u", "headers": {"A": None}}}, "transport.headers.A"),
    ({"transport": {"type": "stdio", "command": "x"}, "timeouts": {"call_ms": -1}}, "timeouts.call_ms"),
    ({"transport": {"type": "stdio", "command": "x"}, "timeouts": {"ready_ms": 1.5}}, "timeouts.ready_ms"),
    ({"transport": {"type": "stdio", "command": "x"}, "timeouts": {"reset_timeout_on_progress": 1}}, "timeouts.reset_timeout_on_progress"),
    ({"transport": {"type": "stdio", "command": "x"}, "limits": {"max_pages": 0}}, "limits.max_pages"),
    ({"transport": {"type": "stdio", "command": "x"}, "client_info": {"name": 3}}, "client_info.name"),
    ({"transport": {"type": "stdio", "command": "x"}, "protocol": {"versions": []}}, "protocol.versions"),
    ({"transport": {"type": "stdio", "command": "x"}, "handlers": {"roots": {"list_changed": "yes"}}}, "handlers.roots.list_changed"),
    ({"transport": {"type": "stdio", "command": "x"}, "handlers": {"elicitation": {"url": 1}}}, "handlers.elicitation.url"),
    ({"transport": {"type": "stdio", "command": "x"}, "result_format": "etf"}, "result_format"),
    ({}, "transport"),
]


@pytest.mark.parametrize("config,field", BAD_CONFIGS)
def test_bad_config_names_the_field(config: Dict[str, Any], field: str) -> None:
    """The library judges the configuration, and its message is the one the
    user sees: it names the field by its path."""
    with pytest.raises(lemonmcp.InvalidArgument) as ei:
        lemonmcp.Client(config)
    assert str(ei.value).startswith("config." + field + ":"), str(ei.value)
    assert isinstance(ei.value, ValueError)


def test_python_values_become_json() -> None:
    """What Python must do itself: paths, tuples and mappings become JSON."""
    import pathlib
    from types import MappingProxyType

    t = _config.stdio_transport(pathlib.Path("/bin/srv"), (pathlib.Path("a"), "b"), env=MappingProxyType({"K": "V"}), cwd=pathlib.Path("/tmp"))
    assert t == {"type": "stdio", "command": "/bin/srv", "args": ["a", "b"], "env": {"K": "V"}, "cwd": "/tmp"}
    cfg = _config.check_config({"transport": t, "protocol": {"versions": ("2025-06-18",)}})
    assert cfg["protocol"] == {"versions": ["2025-06-18"]}


class _Secretive:
    def __repr__(self) -> str:
        return "s3cret-repr"

    __str__ = __repr__


SECRET_VALUES = [b"Bearer s3cret-bytes", 12345678901234, ["s3cret-list"], {"v": "s3cret-dict"}, _Secretive(), float("nan")]


@pytest.mark.parametrize("value", SECRET_VALUES, ids=lambda v: type(v).__name__)
def test_a_wrong_value_is_named_never_shown(value: Any) -> None:
    """Issue 10 item 5: a header, env or auth value of the wrong type is
    named by its field, and its value never appears (it may be a secret),
    whether Python or the library refuses it."""
    cases = [
        (lambda: lemonmcp.Client.http("http://127.0.0.1:1/mcp", {"Authorization": value}), "transport.headers.Authorization"),
        (lambda: lemonmcp.Client.stdio("srv", env={"API_KEY": value}), "transport.env.API_KEY"),
        (lambda: lemonmcp.Client.http("http://127.0.0.1:1/mcp", auth={"client_secret": value}), "auth.client_secret"),
        (lambda: lemonmcp.Client.http("http://127.0.0.1:1/mcp", auth=lemonmcp.auth_config(refresh_token=value)), "auth.refresh_token"),
        (lambda: lemonmcp.Client.http("http://127.0.0.1:1/mcp", auth={"token_exchange": {"token_endpoint": "https://idp/t", "subject_token": value}}),
         "auth.token_exchange.subject_token"),
    ]
    for make, field in cases:
        with pytest.raises(lemonmcp.InvalidArgument) as ei:
            make().close()
        msg = str(ei.value)
        assert field in msg, msg
        for secret in ("s3cret", "12345678901234", "nan"):
            assert secret not in msg.lower(), msg
        assert "s3cret" not in repr(ei.value)


@pytest.mark.parametrize(
    "kwargs,field",
    [
        ({"call_timeout": "soon"}, "call_timeout"),
        ({"ready_timeout": -1}, "ready_timeout"),
        ({"timeouts": 5}, "timeouts"),
        ({"call_ms": -3}, "timeouts.call_ms"),
    ],
)
def test_bad_keyword_names_the_field(kwargs: Dict[str, Any], field: str) -> None:
    with pytest.raises(lemonmcp.InvalidArgument, match=re.escape(field)):
        lemonmcp.Client.stdio("true", **kwargs)


def test_unknown_keyword_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="bogus"):
        lemonmcp.Client.stdio("true", bogus=1)


def test_library_rejects_unknown_fields_by_name() -> None:
    with pytest.raises(lemonmcp.InvalidArgument, match="no_such_field"):
        lemonmcp.Client({"transport": {"type": "stdio", "command": "true"}, "no_such_field": 1})
    with pytest.raises(lemonmcp.InvalidArgument, match="no_such_timeout"):
        lemonmcp.Client.stdio("true", timeouts={"no_such_timeout": 1})


def test_callbacks_must_be_callable() -> None:
    with pytest.raises(lemonmcp.InvalidArgument, match="on_log"):
        lemonmcp.Client.stdio("true", on_log="print")
    with pytest.raises(lemonmcp.InvalidArgument, match="roots"):
        lemonmcp.Client.stdio("true", roots="file:///x")


@pytest.mark.parametrize(
    "kwargs,expected",
    [
        ({}, {}),
        ({"timeout": 0.25}, {"timeout_ms": 250}),
        ({"timeout": 0.0001}, {"timeout_ms": 1}),
        ({"timeout": 0}, {"timeout_ms": 0}),
        ({"timeout_ms": 10, "max_total": 2}, {"timeout_ms": 10, "max_total_ms": 2000}),
        ({"reset_timeout_on_progress": True, "all_pages": False, "progress": True, "wait_ready": True},
         {"reset_timeout_on_progress": True, "all_pages": False, "progress": True, "wait_ready": True}),
        ({"meta": {"k": 1}}, {"_meta": {"k": 1}}),
        ({"verify": {"digest": "sha256:ab", "size": 3, "frontmatter": {"name": "x"}}},
         {"verify": {"digest": "sha256:ab", "size": 3, "frontmatter": {"name": "x"}}}),
    ],
)
def test_call_options(kwargs: Dict[str, Any], expected: Dict[str, Any]) -> None:
    assert _config.call_options(**kwargs) == expected


@pytest.mark.parametrize(
    "kwargs,field",
    [
        ({"timeout": 1, "timeout_ms": 1}, "timeout"),
        ({"timeout": float("nan")}, "timeout"),
        ({"timeout_ms": "1"}, "timeout_ms"),
        ({"all_pages": 1}, "all_pages"),
        ({"meta": []}, "options._meta"),
        ({"verify": {}}, "verify"),
        ({"verify": {"sha": "x"}}, "verify.sha"),
        ({"verify": {"size": -1}}, "verify.size"),
        ({"verify": {"size": True}}, "verify.size"),
        ({"verify": {"digest": ""}}, "verify.digest"),
        ({"verify": {"frontmatter": "name: x"}}, "verify.frontmatter"),
    ],
)
def test_bad_call_options(kwargs: Dict[str, Any], field: str) -> None:
    """Python refuses what it converts (seconds, one of two spellings); the
    library checks the options before the call goes anywhere."""
    c = lemonmcp.Client.stdio("true")
    try:
        with pytest.raises(lemonmcp.InvalidArgument, match=re.escape(field)):
            c.call("resources/read", {"uri": "file:///x"}, **kwargs)
    finally:
        c.close()


# ------------------------------------------------------------------ types


def test_result_types_keep_raw() -> None:
    raw = {
        "content": [
            {"type": "text", "text": "a"},
            {"type": "image", "data": "AAAA", "mimeType": "image/png"},
            {"type": "resource", "resource": {"uri": "u", "blob": "AAECAw=="}},
        ],
        "structuredContent": {"x": 1},
        "isError": True,
        "_meta": {"m": 1},
        "future": "kept",
    }
    r = CallToolResult.from_json(raw)
    assert r.is_error and r.text == "a" and r.structured_content == {"x": 1} and r.meta == {"m": 1}
    assert r.content[1].size == 3 and r.content[2].size == 4 and r.content[2].bytes() == b"\x00\x01\x02\x03"
    assert r.raw["future"] == "kept"
    t = Tool.from_json({"name": "n", "annotations": {"title": "T"}, "icons": [1]})
    assert t.display_title == "T" and t.input_schema == {} and t.raw["icons"] == [1]
    info = ServerInfo.from_json({"serverInfo": {"name": "s", "version": "1", "websiteUrl": "w"}, "protocolVersion": "p", "capabilities": {"tools": {}}, "transport": "stdio"})
    assert info.name == "s" and info.server["websiteUrl"] == "w" and info.has_capability("tools")
    p = Page([1, 2], "c", {"k": 1})
    assert list(p) == [1, 2] and p.next_cursor == "c" and p.raw == {"k": 1}
    assert Progress.from_json({"call_id": 3, "progress": 1, "total": 4}).total == 4.0
    assert Closed.from_json({"status": -7, "reason": "x", "exit_code": 3, "stderr_tail": ["a"]}).exit_code == 3
    assert Content.from_json("junk").type == ""


# ------------------------------------------------------------------ JSON codec

# The per-call fast paths of _codec (the C encoder called directly, a
# successful result decoded without outcome) against the general ones.
_GENERAL_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False)
_circular: Dict[str, Any] = {}
_circular["self"] = _circular


@pytest.mark.parametrize(
    "value",
    [{}, {"name": "echo", "arguments": {"text": "hello"}}, {"é": "ünï", "n": [1, 2.5, None, True, False]}, {1: "a", None: "b"}],
    ids=["empty", "call", "unicode", "non-str keys"],
)
def test_encode_object_is_the_general_encoders_bytes(value: Dict[Any, Any]) -> None:
    assert _codec.encode_object(value, "params") == _GENERAL_ENCODER.encode(value).encode("utf-8")


@pytest.mark.parametrize(
    "value,words",
    [
        (_circular, "Circular reference detected"),
        ({"x": float("nan")}, "Out of range float values"),
        ({"x": object()}, "Object of type object is not JSON serializable"),
        ({(1, 2): "x"}, "keys must be str"),
    ],
    ids=["circular", "nan", "object", "tuple key"],
)
def test_encode_object_refusals_name_the_field(value: Dict[Any, Any], words: str) -> None:
    with pytest.raises(lemonmcp.InvalidArgument, match=f"^params: not JSON-serializable: {words}"):
        _codec.encode_object(value, "params")


@pytest.mark.parametrize(
    "status,data,expected",
    [
        (0, b'{"a":[1,"\xc3\xa9"]}', {"a": [1, "\u00e9"]}),
        (0, b" {\"a\": 1} ", {"a": 1}),
        (0, b"", None),
    ],
    ids=["compact", "whitespace", "empty"],
)
def test_result_of_success(status: int, data: bytes, expected: Any) -> None:
    assert _codec.result_of(status, data) == expected


@pytest.mark.parametrize(
    "status,data,cls,words",
    [
        (0, b"{not json", errors.InternalError, "undecodable result"),
        (0, b"\xff", errors.InternalError, "undecodable result"),
        (errors.E_TIMEOUT, b'{"message":"slow"}', errors.TimeoutError, "slow"),
    ],
    ids=["bad json", "bad utf-8", "error status"],
)
def test_result_of_failure(status: int, data: bytes, cls: Type[errors.LemonMCPError], words: str) -> None:
    with pytest.raises(cls, match=words):
        _codec.result_of(status, data)


# ------------------------------------------------------------------ CLI parsing


@pytest.mark.parametrize(
    "words,expected",
    [
        (["text=hello world"], {"text": "hello world"}),
        (["n=3", "f=1.5", "b=true", "z=null"], {"n": 3, "f": 1.5, "b": True, "z": None}),
        (['xs=[1,"a"]', 'o={"k":1}'], {"xs": [1, "a"], "o": {"k": 1}}),
        (['s="3"', "eq=a=b", "empty="], {"s": "3", "eq": "a=b", "empty": ""}),
    ],
)
def test_parse_kv(words: Any, expected: Dict[str, Any]) -> None:
    assert cli.parse_kv(words) == expected


@pytest.mark.parametrize("word", ["novalue", "=x"])
def test_parse_kv_rejects(word: str) -> None:
    with pytest.raises(cli.UsageError):
        cli.parse_kv([word])


def test_parse_kv_strings_for_prompts() -> None:
    assert cli.parse_kv(["n=3"], json_values=False) == {"n": "3"}


def test_options_before_and_after_the_command() -> None:
    p = cli.build_parser()
    ns = cli._merge_sub(p.parse_args(["--stdio", "x", "--header", "A: 1", "tools", "--header", "B: 2", "--json", "-v"]))
    assert ns.stdio == "x" and ns.header == ["A: 1", "B: 2"] and ns.json_output and ns.verbose
    ns = cli._merge_sub(p.parse_args(["call", "echo", "a=1", "--stdio", "y", "--timeout", "2"]))
    assert ns.stdio == "y" and ns.timeout == 2.0 and ns.tool == "echo" and ns.args == ["a=1"]


CONFIG_DOC = {
    "mcpServers": {
        "local": {"command": "srv", "args": ["-x", "5"], "env": {"K": "V"}, "cwd": "/tmp"},
        "remote": {"url": "https://h/mcp", "headers": {"Authorization": "Bearer t"}},
        "legacy": {"url": "https://h/sse", "type": "sse"},
        "streamy": {"url": "https://h/mcp", "type": "streamable-http"},
    }
}


@pytest.mark.parametrize(
    "name,expected",
    [
        ("local", {"type": "stdio", "command": "srv", "args": ["-x", "5"], "env": {"K": "V"}, "cwd": "/tmp", "stderr": "capture"}),
        ("remote", {"type": "http", "url": "https://h/mcp", "headers": {"Authorization": "Bearer t"}}),
        ("legacy", {"type": "sse", "url": "https://h/sse"}),
        ("streamy", {"type": "streamable_http", "url": "https://h/mcp"}),
    ],
)
def test_server_from_config(tmp_path: Any, name: str, expected: Dict[str, Any]) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps(CONFIG_DOC))
    assert cli.server_from_config(str(path), name) == (name, expected)


@pytest.mark.parametrize(
    "servers,name,needle",
    [
        ({"bad": {"url": "https://h/mcp", "type": "pigeon"}}, "bad", "config.mcpServers.bad.type"),
        ({"empty": {}}, "empty", '"command"'),
        (CONFIG_DOC["mcpServers"], "nope", 'no server "nope"'),
        (CONFIG_DOC["mcpServers"], None, "several servers"),
    ],
)
def test_server_from_config_errors(tmp_path: Any, servers: Dict[str, Any], name: Any, needle: str) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}))
    with pytest.raises(cli.UsageError, match=needle) as exc:
        cli.server_from_config(str(path), name)
    assert str(path) in str(exc.value), "the message names the file"


def test_server_from_config_single_server_needs_no_name(tmp_path: Any) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"only": {"command": "srv"}}}))
    assert cli.server_from_config(str(path), None)[0] == "only"
    path.write_text("{not json")
    with pytest.raises(cli.UsageError, match="not valid JSON"):
        cli.server_from_config(str(path), None)


def test_server_from_config_reads_a_vs_code_file(tmp_path: Any) -> None:
    """--server reads the file as the host does: VS Code's comments and
    "servers", "serverUrl"/"httpUrl", ${VAR} and ${input:id}. (The
    library reads the environment it was loaded with: HOME is set.)"""
    vscode = tmp_path / ".vscode"
    vscode.mkdir()
    path = vscode / "mcp.json"
    path.write_text(
        """{
  // VS Code's own file: comments, "servers", "inputs"
  "inputs": [{"id": "key", "type": "promptString", "description": "API key", "password": true}],
  "servers": {
    "files": {"type": "stdio", "command": "srv", "args": ["${workspaceFolder}/data"], "env": {"HOME_SEEN": "${env:HOME}"}},
    "windsurf": {"serverUrl": "https://h/mcp", "headers": {"X-Key": "${input:key}"}},
    "gemini": {"httpUrl": "https://g/mcp"},
  },
}
"""
    )
    name, t = cli.server_from_config(str(path), "files", {"key": "k-1"})
    assert name == "files"
    assert t == {"type": "stdio", "command": "srv", "args": [f"{tmp_path}/data"], "env": {"HOME_SEEN": os.environ["HOME"]}, "stderr": "capture"}
    assert cli.server_from_config(str(path), "windsurf", {"key": "k-1"})[1] == {
        "type": "http", "url": "https://h/mcp", "headers": {"X-Key": "k-1"}}
    assert cli.server_from_config(str(path), "gemini", {"key": "k-1"})[1] == {"type": "streamable_http", "url": "https://g/mcp"}


def test_format_table_aligns_and_cuts() -> None:
    out = cli.format_table(("A", "B"), [("x", "short"), ("longer", "y" * 200)], width=40)
    lines = out.splitlines()
    assert lines[0] == "A       B"
    assert lines[1] == "x       short"
    assert len(lines[2]) == 40 and lines[2].endswith("…")


def test_format_table_fits_wide_columns_to_the_terminal() -> None:
    # Columns before the last that leave it too little room are cut too,
    # the widest first; without a width nothing is cut.
    rows = [("sample", "prompt*, max_tokens*, model, detached", "Asks the client for sampling")]
    out = cli.format_table(("NAME", "ARGUMENTS", "DESCRIPTION"), rows, width=40).splitlines()
    assert max(len(line) for line in out) <= 40, out
    assert out == ["NAME    ARGUMENTS           DESCRIPTION", "sample  prompt*, max_toke…  Asks the cl…"]
    wide = cli.format_table(("NAME", "ARGUMENTS", "DESCRIPTION"), rows).splitlines()
    assert wide[1] == "sample  prompt*, max_tokens*, model, detached  Asks the client for sampling"


def test_format_content_kinds() -> None:
    blocks = [
        Content.from_json({"type": "text", "text": "hello " * 30}),
        Content.from_json({"type": "image", "data": "AAAA", "mimeType": "image/png"}),
        Content.from_json({"type": "audio", "data": "AAAAAA==", "mimeType": "audio/wav"}),
        Content.from_json({"type": "resource_link", "uri": "file:///a", "name": "a"}),
        Content.from_json({"type": "resource", "resource": {"uri": "x://b", "blob": "AAAA", "mimeType": "application/zip"}}),
    ]
    out = cli.format_content(blocks).splitlines()
    assert out[0] == "hello " * 30  # a tool's text is never re-wrapped
    assert "[image image/png, 3 bytes]" in out
    assert "[audio audio/wav, 4 bytes]" in out
    assert "[resource link] file:///a (a)" in out
    assert "[blob application/zip, 3 bytes] x://b" in out


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["tools"],
        ["--stdio", "x", "--url", "http://y", "tools"],
        ["--stdio", "x", "bogus"],
        ["--stdio", "x", "call"],
        ["--stdio", "'unterminated", "tools"],
        ["--server", "a", "--stdio", "x", "tools"],
        ["--stdio", "x", "--timeout", "soon", "tools"],
    ],
)
def test_usage_errors_exit_2_without_a_server(argv: Any, capsys: Any) -> None:
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "lemonmcp" in err


@pytest.mark.parametrize(
    "extra,field",
    [
        ({"sampling_policy": {"mode": "yolo"}}, "sampling_policy.mode"),
        ({"sampling_policy": {"max_tokens": 0}}, "sampling_policy.max_tokens"),
        ({"sampling_policy": {"allowed_models": "gpt"}}, "sampling_policy.allowed_models"),
        ({"sampling_policy": {"max_text_chars": -1}}, "sampling_policy.max_text_chars"),
        ({"handlers": {"sampling": {"tools": "yes"}}}, "handlers.sampling.tools"),
        ({"capabilities": {"experimental": []}}, "capabilities.experimental"),
    ],
)
def test_bad_sampling_config_names_the_field(extra: Dict[str, Any], field: str) -> None:
    with pytest.raises(lemonmcp.InvalidArgument) as ei:
        lemonmcp.Client({"transport": {"type": "stdio", "command": "x"}, **extra})
    assert str(ei.value).startswith("config." + field + ":"), str(ei.value)


def test_library_refuses_declaring_host_capabilities() -> None:
    with pytest.raises(lemonmcp.InvalidArgument, match="capabilities"):
        lemonmcp.Client.stdio("true", capabilities={"sampling": {}})
    c = lemonmcp.Client.stdio("true", capabilities={"experimental": {"x": {}}})
    assert c.config["capabilities"] == {"experimental": {"x": {}}}


# ------------------------------------------------------------------ waits


def test_sliced_wait_reports_the_state_its_slice_ran_into() -> None:
    """A slice that runs out just as the server dies: the error is the
    death's (what a wait of 0 ms then says), not the slice's timeout."""
    from lemonmcp._session import HandleSession

    calls = []
    died = errors.TransportError("the server exited with status 1 before it was ready")

    def wait(ms: int) -> None:
        calls.append(ms)
        if len(calls) == 1:
            raise errors.TimeoutError("the client is not ready after 200 ms (the handshake goes on)")
        raise died

    with pytest.raises(errors.TransportError) as info:
        HandleSession.wait_sliced(None, wait, 30.0, lambda: False, lambda: AssertionError("expired"))  # type: ignore[arg-type]
    assert info.value is died and calls == [200, 0]


def test_sliced_wait_returns_when_the_state_moved_on_to_ready() -> None:
    from lemonmcp._session import HandleSession

    calls = []

    def wait(ms: int) -> None:
        calls.append(ms)
        if len(calls) == 1:
            raise errors.TimeoutError("the client is not ready after 200 ms (the handshake goes on)")

    HandleSession.wait_sliced(None, wait, None, lambda: False, lambda: AssertionError("expired"))  # type: ignore[arg-type]
    assert calls == [200, 0]
