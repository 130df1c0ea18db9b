"""JSON across the C ABI, in one place: every input the binding hands the
library (configuration, params, call options, answers to app requests) is
encoded by :func:`encode_object`, and every completion is decoded by
:func:`outcome`."""

from __future__ import annotations

import json
import json.scanner
import threading
from typing import Any, Callable, Dict, Mapping, Optional, Tuple

from . import _ffi
from .errors import E_INTERNAL, OK, InvalidArgument, error_from_status

JSONObject = Dict[str, Any]

# One encoder for every input: json.dumps with non-default arguments would
# build a new encoder per call, which costs more than the C call itself.
_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False)
# json.encoder's C encoder factory, None when _json is not built (typeshed
# does not declare it).
_make_c_encoder: Any = getattr(json.encoder, "c_make_encoder", None)
_default = _ENCODER.default
_encode_str = json.encoder.encode_basestring  # ensure_ascii=False


class _Encoders(threading.local):
    # This thread's C encoder: made once, its markers dict (what refuses a
    # circular value by name) empty again after each value it encoded.
    encoder: Any = None


_encoders = _Encoders()


def _encode_c(value: Any) -> str:
    """What _ENCODER.encode does, without its two Python frames (encode,
    iterencode): the same C encoder with the same arguments (separators, no
    ASCII escaping, no NaN), kept per thread (making one costs a third of
    encoding a call's params)."""
    if type(value) is str:
        return _encode_str(value)
    enc = _encoders.encoder
    if enc is None:
        enc = _encoders.encoder = _make_c_encoder({}, _default, _encode_str, None, ":", ",", False, False, False)
    try:
        return "".join(enc(value, 0))
    except BaseException:
        # A failed value leaves its containers in the markers: a fresh
        # encoder for the next one.
        _encoders.encoder = None
        raise


_encode: Callable[[Any], str] = _encode_c if _make_c_encoder is not None else _ENCODER.encode

# Decoding: json.loads(bytes) sniffs the encoding and goes through two Python
# frames before the C scanner runs; the library's JSON is UTF-8 and one value,
# so results go straight to the scanner (json.loads only to word an error).
# (make_scanner is the C scanner when _json is built; typeshed types it as a class)
_scan: Callable[[str, int], Tuple[Any, int]] = json.scanner.make_scanner(json.JSONDecoder())  # type: ignore[arg-type]


def loads(data: bytes) -> Any:
    """Decode one JSON value from the library (UTF-8 bytes)."""
    text = data.decode("utf-8")
    try:
        value, end = _scan(text, 0)
        if end == len(text):
            return value
    except (StopIteration, ValueError):
        pass
    return json.loads(text)  # the general path: whitespace, or the error's words


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
    if type(value) is dict:  # the common case first: no copy, no extra frame
        try:
            return _encode(value).encode("utf-8")
        except (TypeError, ValueError) as exc:
            raise InvalidArgument(f"{field}: not JSON-serializable: {exc}") from None
    if not isinstance(value, Mapping):
        raise InvalidArgument(f"{field}: expected an object, got {value!r}")
    return dumps(dict(value), field)


def outcome(status: int, data: bytes) -> Tuple[bool, Any]:
    """Decode a completion: (True, result) or (False, exception)."""
    if status == OK:
        try:
            return True, (loads(data) if data else None)
        except ValueError as exc:  # the library promises JSON
            return False, error_from_status(E_INTERNAL, {"message": f"undecodable result: {exc}"})
    payload: Any
    try:
        payload = loads(data) if data else {}
    except ValueError:
        payload = {"message": data.decode("utf-8", "replace")}
    if not isinstance(payload, dict) or not payload.get("message"):
        payload = dict(payload) if isinstance(payload, dict) else {}
        payload["message"] = _ffi.status_string(status)
    return False, error_from_status(status, payload)


def result_of(status: int, data: bytes) -> Any:
    """The result of a completion, or its error raised."""
    if status == OK and data:  # every successful call: decoded here, no (ok, value) pair
        try:
            return loads(data)
        except ValueError:
            pass  # outcome words the error
    ok, value = outcome(status, data)
    if ok:
        return value
    raise value
