"""LemonMCP: a Model Context Protocol client for Python, over liblemonmcp.

    import lemonmcp

    with lemonmcp.Client.stdio("my-mcp-server", ["--flag"]) as client:
        for tool in client.list_tools():
            print(tool.name, tool.description)
        result = client.call_tool("echo", {"text": "hello"})
        print(result.text, result.structured_content)

``AsyncClient`` is the asyncio twin. Errors are :class:`LemonMCPError`
subclasses mapped from the library's statuses; a tool result with
``isError`` is a result (``result.is_error``), not an exception.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, Optional


def _importing_for_the_command_line() -> bool:
    """True while ``python -m lemonmcp`` or the ``lemonmcp`` script imports
    this package (never when a program merely uses it)."""
    if sys.argv[:1] == ["-m"]:  # runpy is importing the -m target's package
        orig = list(getattr(sys, "orig_argv", ()))
        i = orig.index("-m") if "-m" in orig else -1
        return 0 <= i < len(orig) - 1 and orig[i + 1] in ("lemonmcp", "lemonmcp.__main__")
    return sys.argv[0].endswith(("/lemonmcp", "\\lemonmcp.exe"))


#: Why the library could not be loaded, when the command line imports the
#: package without one (``__main__`` reports it in one line); otherwise an
#: import without a usable library raises ImportError. Importing never exits.
LOAD_ERROR: Optional[ImportError] = None
try:
    from . import _ffi
except ImportError as _exc:  # no library, or the wrong one
    if not _importing_for_the_command_line():
        raise
    LOAD_ERROR = _exc
if LOAD_ERROR is None:
    from ._config import auth_config, build_config, call_options, http_transport, stdio_transport
    from ._tool_search import ToolSearchResult
    from .client import Client
    from .errors import (
        AbiMismatch,
        AuthRequired,
        Cancelled,
        ClosedError,
        InternalError,
        InvalidArgument,
        InvalidHandle,
        InvalidState,
        LemonMCPError,
        NotFound,
        PolicyDenied,
        ProtocolError,
        TimeoutError,
        TransportError,
        UnsupportedError,
    )
    from .host import Host, HostTool
    from .types import (
        CallToolResult,
        Closed,
        CompleteResult,
        Content,
        GetPromptResult,
        LogRecord,
        Notification,
        Page,
        Progress,
        Prompt,
        PromptArgument,
        PromptMessage,
        ReadResourceResult,
        Resource,
        ResourceContents,
        ResourceTemplate,
        ServerInfo,
        StoreConflict,
        Tool,
    )
    ABI_VERSION = _ffi.ABI_VERSION

if TYPE_CHECKING:
    from ._serve import RELAYED_HANDLERS, Server
    from .aio import AsyncClient

#: The names whose modules load asyncio: imported on first use, so that a
#: blocking program and each command-line run do not pay for it.
_ASYNCIO_NAMES = {"AsyncClient": ".aio", "Server": "._serve", "RELAYED_HANDLERS": "._serve"}


#: Its submodules that load asyncio, reachable as attributes once
#: ``lemonmcp`` is imported (``lemonmcp.aio.AsyncHost``), as when they
#: were imported with it.
_ASYNCIO_MODULES = ("aio", "aio_host")


def __getattr__(name: str) -> Any:
    module = _ASYNCIO_NAMES.get(name) or ("." + name if name in _ASYNCIO_MODULES else None)
    if module is None or LOAD_ERROR is not None:
        raise AttributeError(f"module 'lemonmcp' has no attribute {name!r}")
    import importlib

    loaded = importlib.import_module(module, __name__)
    value = loaded if name in _ASYNCIO_MODULES else getattr(loaded, name)
    globals()[name] = value
    return value


def _version() -> str:
    """LMCP_VERSION_STRING of include/lemonmcp.h, the one version: a built
    package carries it in _version.txt (setup.py writes it from the header);
    a checkout reads the header itself."""
    import os
    import re

    here = os.path.dirname(os.path.abspath(__file__))
    for path, pattern in (
        (os.path.join(here, "_version.txt"), r"^([^\s]+)$"),
        (os.path.join(here, "..", "..", "..", "include", "lemonmcp.h"), r'^#define LMCP_VERSION_STRING "([^"]+)"$'),
    ):
        try:
            with open(path, encoding="utf-8") as f:
                m = re.search(pattern, f.read(), re.M)
        except OSError:
            continue
        if m:
            return m.group(1)
    return "0+unknown"


__version__ = _version()


def library_version() -> str:
    """The loaded liblemonmcp's version (``lmcp_version``)."""
    return _ffi.version()


def library_path() -> str:
    """Where liblemonmcp was loaded from."""
    return _ffi.loaded_path


def features() -> Any:
    """What this build of the library supports (``lmcp_features``):
    transports, protocol versions and modes, client capabilities, ..."""
    return _ffi.features()


def diagnostics() -> Any:
    """The library's live resources (``lmcp_diagnostics``): goroutines,
    live clients and pending calls, for leak checks."""
    return _ffi.diagnostics()


def status_string(status: int) -> str:
    """The library's name for a status code."""
    return _ffi.status_string(status)


__all__ = [
    "ABI_VERSION",
    "AbiMismatch",
    "AsyncClient",
    "AuthRequired",
    "CallToolResult",
    "Cancelled",
    "Client",
    "Host",
    "HostTool",
    "ToolSearchResult",
    "Closed",
    "ClosedError",
    "CompleteResult",
    "Content",
    "GetPromptResult",
    "InternalError",
    "InvalidArgument",
    "InvalidHandle",
    "InvalidState",
    "LemonMCPError",
    "LogRecord",
    "NotFound",
    "Notification",
    "Page",
    "PolicyDenied",
    "Progress",
    "Prompt",
    "PromptArgument",
    "PromptMessage",
    "ProtocolError",
    "RELAYED_HANDLERS",
    "ReadResourceResult",
    "Resource",
    "ResourceContents",
    "ResourceTemplate",
    "Server",
    "ServerInfo",
    "TimeoutError",
    "StoreConflict",
    "Tool",
    "TransportError",
    "UnsupportedError",
    "build_config",
    "call_options",
    "diagnostics",
    "features",
    "http_transport",
    "library_path",
    "library_version",
    "status_string",
    "stdio_transport",
    "auth_config",
    "__version__",
]
