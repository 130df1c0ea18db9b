"""``KEY=VALUE`` words of ``lemonmcp call`` read through the tool's input
schema: a value becomes a number, a boolean, null, an array or an object only
where the schema allows that type; otherwise it stays the string typed.

Only the schema's simple shape is read (``type`` as a name or a list,
``enum``, ``const``, ``anyOf``/``oneOf`` of those, ``items`` for repeated
keys); the server checks the rest. A value that fits none of the allowed
types is a usage error naming the argument.
"""

from __future__ import annotations

import difflib
import json
import math
from typing import Any, Dict, List, Mapping, Optional, Sequence, Set, Tuple

__all__ = ["ArgumentError", "allowed_types", "coerce_value", "arguments_from_words", "split_words", "check_arguments", "did_you_mean"]

# Every JSON Schema type name a value may take, in the order a typed word is
# tried: the string reading goes last, so that `n=3` is 3 where both a
# number and a string are allowed. Use --json or --args to send "3".
_TYPES = ("null", "boolean", "integer", "number", "array", "object", "string")

_NAMES = {
    "null": "null",
    "boolean": "true or false",
    "integer": "an integer",
    "number": "a number",
    "array": "a JSON array",
    "object": "a JSON object",
    "string": "a string",
}


class ArgumentError(ValueError):
    """A KEY=VALUE word that does not fit the tool's input schema."""


def split_words(words: Sequence[str]) -> List[Tuple[str, str]]:
    """KEY=VALUE words to (key, value) pairs, in order."""
    out: List[Tuple[str, str]] = []
    for item in words:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ArgumentError(f"expected KEY=VALUE, got {item!r}")
        out.append((key, value))
    return out


def allowed_types(schema: Any) -> Optional[Tuple[Set[str], Optional[List[Any]]]]:
    """(type names, enum values or None) a schema allows; None when it says
    nothing this reader understands (any JSON value goes)."""
    if not isinstance(schema, Mapping):
        return None
    if "const" in schema:
        return set(), [schema["const"]]
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        return set(), list(enum)
    types: Set[str] = set()
    t = schema.get("type")
    if isinstance(t, str) and t in _TYPES:
        types.add(t)
    elif isinstance(t, list):
        types.update(x for x in t if isinstance(x, str) and x in _TYPES)
    enums: Optional[List[Any]] = None
    for key in ("anyOf", "oneOf"):
        alts = schema.get(key)
        if not isinstance(alts, list):
            continue
        for alt in alts:
            got = allowed_types(alt)
            if got is None:
                return None  # one alternative takes anything
            alt_types, alt_enum = got
            types |= alt_types
            if alt_enum is not None:
                enums = (enums or []) + alt_enum
    if not types and enums is None:
        return None
    if "integer" in types and "number" in types:
        types.discard("integer")  # a number covers it
    return types, enums


def _parse(value: str) -> Tuple[bool, Any]:
    try:
        v = json.loads(value)
    except ValueError:
        return False, None
    if isinstance(v, float) and not math.isfinite(v):
        return False, None
    return True, v


def _fits(kind: str, v: Any) -> bool:
    if kind == "null":
        return v is None
    if kind == "boolean":
        return isinstance(v, bool)
    if kind == "integer":
        return (isinstance(v, int) and not isinstance(v, bool)) or (isinstance(v, float) and v.is_integer())
    if kind == "number":
        return isinstance(v, (int, float)) and not isinstance(v, bool)
    if kind == "array":
        return isinstance(v, list)
    if kind == "object":
        return isinstance(v, dict)
    return isinstance(v, str)


def coerce_value(name: str, value: str, schema: Any) -> Any:
    """One typed word as the value the schema wants."""
    allowed = allowed_types(schema)
    parsed, v = _parse(value)
    if allowed is None:
        # The schema does not say (or takes anything): JSON when it parses.
        return v if parsed else value
    types, enum = allowed
    if enum is not None:
        # The raw text first ("1" for an enum of strings), then as JSON.
        for candidate in ([value] + ([v] if parsed else [])):
            for e in enum:
                if candidate == e and type(candidate) is type(e):
                    return e
        if not types:
            choices = ", ".join(e if isinstance(e, str) else json.dumps(e) for e in enum)
            raise ArgumentError(f"argument {name}: {value!r} is not one of {choices}")
    for kind in _TYPES:
        if kind not in types:
            continue
        if kind == "string":
            return value
        if parsed and _fits(kind, v):
            if kind == "integer" and isinstance(v, float):
                return int(v)
            return v
    wanted = " or ".join(_NAMES[k] for k in _TYPES if k in types)
    if enum is not None:
        wanted += " or one of " + ", ".join(e if isinstance(e, str) else json.dumps(e) for e in enum)
    raise ArgumentError(f"argument {name}: expected {wanted}, got {value!r}")


def _property(schema: Mapping[str, Any], key: str) -> Tuple[bool, Any]:
    """(known, the property's schema) for key in an object schema."""
    props = schema.get("properties")
    if isinstance(props, Mapping) and key in props:
        return True, props[key]
    extra = schema.get("additionalProperties")
    if extra is False:
        return False, None
    return True, extra if isinstance(extra, Mapping) else None


def _is_array_only(schema: Any) -> bool:
    allowed = allowed_types(schema)
    return allowed is not None and allowed[0] == {"array"} and allowed[1] is None


def arguments_from_words(words: Sequence[str], schema: Optional[Mapping[str, Any]]) -> Dict[str, Any]:
    """KEY=VALUE words to a tool's arguments, typed by its input schema
    (None: no schema known, every value that parses as JSON is that JSON).

    A key given more than once builds an array when the property is an
    array (each value typed by ``items``): ``tag=a tag=b`` is ["a", "b"]."""
    pairs = split_words(words)
    out: Dict[str, Any] = {}
    repeated: Dict[str, List[Any]] = {}
    for key, value in pairs:
        if schema is None:
            prop: Any = None
        else:
            known, prop = _property(schema, key)
            if not known:
                props = schema.get("properties")
                names = ", ".join(props) if isinstance(props, Mapping) and props else "none"
                hint = did_you_mean(key, list(props) if isinstance(props, Mapping) else [])
                raise ArgumentError(f"argument {key}: the tool takes no such argument{hint} (it takes: {names})")
        count = sum(1 for k, _ in pairs if k == key)
        if count > 1:
            if not _is_array_only(prop):
                raise ArgumentError(f"argument {key}: given {count} times, but it is not an array")
            items = prop.get("items") if isinstance(prop, Mapping) else None
            repeated.setdefault(key, []).append(coerce_value(key, value, items))
            out[key] = repeated[key]
            continue
        if _is_array_only(prop):
            parsed, v = _parse(value)
            if not (parsed and isinstance(v, list)):
                # One value of an array: `tag=a` is ["a"].
                items = prop.get("items") if isinstance(prop, Mapping) else None
                out[key] = [coerce_value(key, value, items)]
                continue
        out[key] = coerce_value(key, value, prop)
    return out


def env_words(items: Optional[Sequence[str]]) -> Dict[str, str]:
    """--env KEY=VALUE words (ValueError names a malformed one)."""
    out: Dict[str, str] = {}
    for e in items or []:
        k, sep, v = e.partition("=")
        if not sep or not k:
            raise ValueError(f"--env: expected KEY=VALUE, got {e!r}")
        out[k] = v
    return out


def did_you_mean(word: str, known: Sequence[str]) -> str:
    """' (did you mean "x"?)' for the closest of known, or ''."""
    close = difflib.get_close_matches(word, list(known), n=1, cutoff=0.6)
    if not close:
        lowered = {k.lower(): k for k in known}
        if word.lower() in lowered:
            close = [lowered[word.lower()]]
    return f' (did you mean "{close[0]}"?)' if close else ""


def check_arguments(arguments: Mapping[str, Any], schema: Optional[Mapping[str, Any]]) -> None:
    """Checks a call's arguments against the tool's input schema before
    anything is sent: every required argument is there, and no key is
    unknown. A key is unknown when the schema allows no other properties
    ("additionalProperties": false), or when it is a near miss of a
    property's name (a typo: ``txt`` for ``text``), whatever the schema
    says of others. ArgumentError names what is wrong."""
    if not isinstance(schema, Mapping):
        return
    props = schema.get("properties")
    props = props if isinstance(props, Mapping) else {}
    strict = schema.get("additionalProperties") is False
    for key in arguments:
        if key in props:
            continue
        hint = did_you_mean(key, list(props))
        if strict or hint:
            names = ", ".join(props) or "none"
            raise ArgumentError(f"argument {key}: the tool takes no such argument{hint} (it takes: {names})")
    required = schema.get("required")
    missing = [r for r in required if isinstance(r, str) and r not in arguments] if isinstance(required, list) else []
    if missing:
        described = []
        for name in missing:
            prop = props.get(name)
            desc = prop.get("description") if isinstance(prop, Mapping) else None
            described.append(f"{name} ({_one_line(str(desc))})" if desc else name)
        which = "argument" if len(missing) == 1 else "arguments"
        raise ArgumentError(f"missing required {which}: {', '.join(described)} (give {' '.join(m + '=...' for m in missing)})")


def _one_line(text: str, limit: int = 60) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"
