"""The exception hierarchy of lemonmcp, mapped from the C library's statuses.

Every failure the library reports carries an ``lmcp_status`` and an error
object ``{"status", "message", "code"?, "data"?}``. :func:`error_from_status`
turns the pair into one instance of the subclass that matches the status, so
callers can catch as narrowly (``ProtocolError``) or as broadly
(``LemonMCPError``) as they like. Some subclasses also derive from the builtin
exception a Python programmer would reach for first (``ValueError``,
``TimeoutError``, ``ConnectionError``).
"""

from __future__ import annotations

import builtins
from typing import Any, Callable, Dict, List, Mapping, Optional, Type

__all__ = [
    "OK",
    "E_INVALID_ARGUMENT",
    "E_INVALID_HANDLE",
    "E_INVALID_STATE",
    "E_NOT_FOUND",
    "E_TIMEOUT",
    "E_CANCELLED",
    "E_CLOSED",
    "E_TRANSPORT",
    "E_PROTOCOL",
    "E_UNSUPPORTED",
    "E_AUTH_REQUIRED",
    "E_POLICY_DENIED",
    "E_ABI_MISMATCH",
    "E_INTERNAL",
    "status_name",
    "LemonMCPError",
    "InvalidArgument",
    "InvalidHandle",
    "InvalidState",
    "NotFound",
    "TimeoutError",
    "Cancelled",
    "ClosedError",
    "TransportError",
    "ProtocolError",
    "UnsupportedError",
    "AuthRequired",
    "PolicyDenied",
    "AbiMismatch",
    "InternalError",
    "error_from_status",
    "error_class_for",
]

# Status codes, as in include/lemonmcp.h. Never renumbered.
OK = 0
E_INVALID_ARGUMENT = -1
E_INVALID_HANDLE = -2
E_INVALID_STATE = -3
E_NOT_FOUND = -4
E_TIMEOUT = -5
E_CANCELLED = -6
E_CLOSED = -7
E_TRANSPORT = -8
E_PROTOCOL = -9
E_UNSUPPORTED = -10
E_AUTH_REQUIRED = -11
E_POLICY_DENIED = -12
E_ABI_MISMATCH = -13
E_INTERNAL = -14


# The library is the only source of status names (lmcp_status_string). This
# module imports nothing of the package, so that every module may import it:
# _ffi hands the library's function over with use_status_names() as it loads
# the library (it always has once ``lemonmcp`` is imported).
_status_names: Callable[[int], str] = "status {}".format


def use_status_names(names: Callable[[int], str]) -> None:
    """Name statuses with ``names`` (``_ffi`` gives ``lmcp_status_string``)."""
    global _status_names
    _status_names = names


def status_name(status: int) -> str:
    """The library's name for a status (``lmcp_status_string``: "timeout",
    "denied by policy", ...)."""
    return _status_names(status)


class LemonMCPError(Exception):
    """Base class of every error the library reports.

    ``status`` is the ``lmcp_status`` (a negative int), ``message`` the
    library's text, and ``code``/``data`` the server's JSON-RPC error fields
    when the server sent them (``ProtocolError``). ``raw`` is the whole error
    object as the library produced it.

    Extra fields are keyword-only on purpose: some subclasses also derive from
    ``OSError`` (via ``TimeoutError``/``ConnectionError``), whose constructor
    would misread extra positional arguments as errno/strerror.
    """

    status: int = E_INTERNAL

    def __init__(
        self,
        message: str = "",
        *,
        status: Optional[int] = None,
        code: Optional[int] = None,
        data: Any = None,
        raw: Optional[Mapping[str, Any]] = None,
    ) -> None:
        super().__init__(message)
        if status is not None:
            self.status = status
        self.message = message
        self.code = code
        self.data = data
        self.raw: Dict[str, Any] = dict(raw) if raw is not None else {}

    def __str__(self) -> str:
        return self.message

    @property
    def cause(self) -> Optional[str]:
        """The library's machine-readable reason, from the error data's
        ``"cause"`` (``"executable_not_found"``, ``"not_executable"``,
        ``"working_directory_not_found"``: see include/lemonmcp.h), or None.
        Branch on it, never on the message."""
        c = self.data.get("cause") if isinstance(self.data, Mapping) else None
        return c if isinstance(c, str) else None

    def __repr__(self) -> str:
        extra = f", code={self.code!r}" if self.code is not None else ""
        return f"{type(self).__name__}({self.message!r}, status={self.status}{extra})"

    @property
    def status_name(self) -> str:
        """The status as text, from the library ("timeout", "protocol error",
        ...; "unknown status" for a number the library does not know)."""
        return status_name(self.status)


class InvalidArgument(LemonMCPError, ValueError):
    """An argument or configuration field is invalid; the message names it."""

    status = E_INVALID_ARGUMENT


class InvalidHandle(LemonMCPError):
    """The client handle is unknown or already freed."""

    status = E_INVALID_HANDLE


class InvalidState(LemonMCPError):
    """The client is not in a state that allows the call (not ready, closed)."""

    status = E_INVALID_STATE


class NotFound(LemonMCPError, LookupError):
    """No such call id or app request id (finished, answered or expired)."""

    status = E_NOT_FOUND


class TimeoutError(LemonMCPError, builtins.TimeoutError):  # noqa: A001 - deliberate
    """A deadline passed (also a builtin ``TimeoutError``)."""

    status = E_TIMEOUT


class Cancelled(LemonMCPError):
    """The call was cancelled (``cancel()``, Ctrl-C, or the client was freed)."""

    status = E_CANCELLED


class ClosedError(LemonMCPError, ConnectionError):
    """The connection is closed or was lost; the message says why."""

    status = E_CLOSED


class TransportError(LemonMCPError, ConnectionError):
    """An I/O or spawn failure in the transport: the server could not be
    started (its executable not found included) or reached. Also a builtin
    ``ConnectionError``, like ``ClosedError``."""

    status = E_TRANSPORT


class ProtocolError(LemonMCPError):
    """The server answered with a JSON-RPC error (``code``, ``message``,
    ``data``), or broke the protocol."""

    status = E_PROTOCOL


class UnsupportedError(LemonMCPError):
    """The server did not declare the capability, or this build lacks the
    feature (e.g. a transport)."""

    status = E_UNSUPPORTED


class AuthRequired(LemonMCPError):
    """The server requires authorization that could not be obtained.

    ``data`` (also :attr:`metadata`) is what OAuth discovery learned — never
    a token: ``resource``, ``authorization_servers``,
    ``resource_metadata_url``, ``www_authenticate``, ``scope``?, ``error``?,
    ``error_description``?, ``authorization_server_metadata``: [{``issuer``,
    ``metadata_url``, ``authorization_endpoint``, ``token_endpoint``,
    ``registration_endpoint``?, ...}]."""

    status = E_AUTH_REQUIRED

    @property
    def metadata(self) -> Dict[str, Any]:
        """The discovered metadata (``data``), or {} when there is none."""
        return dict(self.data) if isinstance(self.data, Mapping) else {}

    @property
    def resource_metadata_url(self) -> Optional[str]:
        """Where the server's protected resource metadata was found."""
        v = self.metadata.get("resource_metadata_url")
        return v if isinstance(v, str) else None

    @property
    def authorization_servers(self) -> List[str]:
        """The authorization servers the resource names."""
        v = self.metadata.get("authorization_servers")
        return [x for x in v if isinstance(x, str)] if isinstance(v, list) else []

    @property
    def scope(self) -> Optional[str]:
        """The scope the server's challenge asked for, if any."""
        v = self.metadata.get("scope")
        return v if isinstance(v, str) else None


class PolicyDenied(LemonMCPError):
    """A local policy refused the request. Raise it from a app-request
    handler to refuse the server's request."""

    status = E_POLICY_DENIED

    @property
    def held(self) -> Optional[Dict[str, str]]:
        """Why the host's pins hold what the request used, as the library
        gives it: ``{"server", "kind", "name", "status"}`` (kind
        ``"instructions"`` holds every tool and prompt of the server;
        status ``"changed"``, ``"new"``, ``"flagged"`` or ``"unchecked"``),
        or None when another policy refused it."""
        h = self.data.get("held") if isinstance(self.data, Mapping) else None
        return dict(h) if isinstance(h, Mapping) else None


def held_hint(held: Mapping[str, str]) -> str:
    """What a Python application does about a held definition, from the
    library's data (never from its words)."""
    server = held.get("server", "")
    if held.get("kind") == "instructions":
        return (f"Host.pins()[{server!r}]['instructions'] shows them, "
                f"Host.approve({server!r}, None, kind='instructions', hash=...) approves them")
    kind, name = held.get("kind", "tool"), held.get("name", "")
    return (f"Host.pins()[{server!r}][{kind + 's'!r}][{name!r}] shows it, "
            f"Host.approve({server!r}, {name!r}, kind={kind!r}, hash=...) approves it")


class AbiMismatch(LemonMCPError):
    """The binding was written for another ABI version of the library."""

    status = E_ABI_MISMATCH


class InternalError(LemonMCPError):
    """A bug in the library (including a recovered Go panic)."""

    status = E_INTERNAL


_BY_STATUS: Dict[int, Type[LemonMCPError]] = {
    E_INVALID_ARGUMENT: InvalidArgument,
    E_INVALID_HANDLE: InvalidHandle,
    E_INVALID_STATE: InvalidState,
    E_NOT_FOUND: NotFound,
    E_TIMEOUT: TimeoutError,
    E_CANCELLED: Cancelled,
    E_CLOSED: ClosedError,
    E_TRANSPORT: TransportError,
    E_PROTOCOL: ProtocolError,
    E_UNSUPPORTED: UnsupportedError,
    E_AUTH_REQUIRED: AuthRequired,
    E_POLICY_DENIED: PolicyDenied,
    E_ABI_MISMATCH: AbiMismatch,
    E_INTERNAL: InternalError,
}


def error_class_for(status: int) -> Type[LemonMCPError]:
    """The exception class for a status (``LemonMCPError`` for unknown ones)."""
    return _BY_STATUS.get(status, LemonMCPError)


def error_from_status(status: int, payload: Any = None) -> LemonMCPError:
    """Build the exception for ``status`` and the library's error object.

    ``payload`` is the decoded error JSON (a dict), or None / anything else
    when the library gave none. The object's own ``status`` wins over the
    argument only when the argument is not a known error status.
    """
    obj: Dict[str, Any] = payload if isinstance(payload, dict) else {}
    st = status
    if st not in _BY_STATUS and isinstance(obj.get("status"), int):
        st = obj["status"]
    message = obj.get("message")
    if not isinstance(message, str) or not message:
        message = status_name(st)
    code = obj.get("code")
    if not isinstance(code, int) or isinstance(code, bool):
        code = None
    cls = error_class_for(st)
    exc = cls(message, status=st, code=code, data=obj.get("data"), raw=obj)
    if isinstance(exc, PolicyDenied) and exc.held is not None and exc.held.get("status") != "unchecked":
        exc.message = f"{message}: {held_hint(exc.held)}"
        exc.args = (exc.message,)
    return exc
