"""JSON across the C ABI, in one place: every input the binding hands the
library (configuration, params, call options, answers to host requests) is
encoded by :func:`encode_object`, and every completion is decoded by
:func:`outcome`."""

from __future__ import annotations

import json
from typing import Any, Dict, Mapping, Optional, Tuple

from . import _ffi
from .errors import E_INTERNAL, OK, InvalidArgument, error_from_status

JSONObject = Dict[str, Any]

# One encoder for every input: json.dumps with non-default arguments would
# build a new encoder per call, which costs more than the C call itself.
_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False)
_encode = _ENCODER.encode
_loads = json.loads


def dumps(value: Any, field: str) -> bytes:
    """JSON-encode an input, naming the field when it cannot be encoded."""
    try:
        return _encode(value).encode("utf-8")
    except (TypeError, ValueError) as exc:
        raise InvalidArgument(f"{field}: not JSON-serializable: {exc}") from None


def encode_object(value: Optional[Mapping[str, Any]], field: str) -> Optional[bytes]:
    """An optional JSON-object input as the library takes it: None (absent)
    or the UTF-8 bytes of the object. Anything but a mapping is refused with
    a message that names the field."""
    if value is None:
        return None
    if type(value) is dict:  # the common case first: no copy
        return dumps(value, field)
    if not isinstance(value, Mapping):
        raise InvalidArgument(f"{field}: expected an object, got {value!r}")
    return dumps(dict(value), field)


def outcome(status: int, data: bytes) -> Tuple[bool, Any]:
    """Decode a completion: (True, result) or (False, exception)."""
    if status == OK:
        try:
            return True, (_loads(data) if data else None)
        except ValueError as exc:  # the library promises JSON
            return False, error_from_status(E_INTERNAL, {"message": f"undecodable result: {exc}"})
    payload: Any
    try:
        payload = _loads(data) if data else {}
    except ValueError:
        payload = {"message": data.decode("utf-8", "replace")}
    if not isinstance(payload, dict) or not payload.get("message"):
        payload = dict(payload) if isinstance(payload, dict) else {}
        payload["message"] = _ffi.status_string(status)
    return False, error_from_status(status, payload)


def result_of(status: int, data: bytes) -> Any:
    """The result of a completion, or its error raised."""
    ok, value = outcome(status, data)
    if ok:
        return value
    raise value
