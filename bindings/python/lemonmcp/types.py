"""Small result types. Each keeps the dict it was made from as ``.raw``, so
nothing the server sent is lost (structuredContent, _meta, annotations,
icons, fields of newer protocol revisions)."""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass, field
from typing import Any, Dict, Generic, List, Optional, TypeVar

__all__ = [
    "ServerInfo",
    "Tool",
    "Content",
    "CallToolResult",
    "Resource",
    "ResourceTemplate",
    "ResourceContents",
    "ReadResourceResult",
    "PromptArgument",
    "Prompt",
    "PromptMessage",
    "GetPromptResult",
    "CompleteResult",
    "Page",
    "Notification",
    "LogRecord",
    "Progress",
    "Closed",
    "StoreConflict",
]

T = TypeVar("T")
JSON = Dict[str, Any]


def _d(value: Any) -> JSON:
    return value if isinstance(value, dict) else {}


def _s(value: Any) -> Optional[str]:
    return value if isinstance(value, str) else None


def _b64len(data: Optional[str]) -> Optional[int]:
    """Decoded size of base64 text, without keeping the bytes."""
    if data is None:
        return None
    try:
        return len(base64.b64decode(data, validate=False))
    except (binascii.Error, ValueError):
        return None


class Page(List[T], Generic[T]):
    """A list of items from a */list method. With ``all_pages`` (the default)
    it holds every item and ``next_cursor`` is None; with ``all_pages=False``
    it is one page and ``next_cursor`` asks for the next one."""

    def __init__(self, items: List[T], next_cursor: Optional[str] = None, raw: Optional[JSON] = None) -> None:
        super().__init__(items)
        self.next_cursor = next_cursor
        self.raw: JSON = raw if raw is not None else {}

    def __repr__(self) -> str:
        return f"Page({list.__repr__(self)}, next_cursor={self.next_cursor!r})"


@dataclass
class ServerInfo:
    """What the handshake learned about the server."""

    name: str
    version: str
    title: Optional[str]
    capabilities: JSON
    instructions: Optional[str]
    protocol_version: str
    transport: str
    raw: JSON = field(repr=False, default_factory=dict)

    @property
    def server(self) -> JSON:
        """The server's ``serverInfo`` object as sent (icons, websiteUrl, ...)."""
        return _d(self.raw.get("serverInfo"))

    @property
    def era(self) -> str:
        """``"modern"`` when the server speaks 2026-07-28 (server/discover),
        ``"legacy"`` when it was reached through initialize."""
        return _s(self.raw.get("era")) or "legacy"

    def has_capability(self, name: str) -> bool:
        return name in self.capabilities

    @classmethod
    def from_json(cls, raw: Any) -> "ServerInfo":
        r = _d(raw)
        si = _d(r.get("serverInfo"))
        return cls(
            name=_s(si.get("name")) or "",
            version=_s(si.get("version")) or "",
            title=_s(si.get("title")),
            capabilities=_d(r.get("capabilities")),
            instructions=_s(r.get("instructions")),
            protocol_version=_s(r.get("protocolVersion")) or "",
            transport=_s(r.get("transport")) or "",
            raw=r,
        )


@dataclass
class Tool:
    name: str
    title: Optional[str]
    description: Optional[str]
    input_schema: JSON
    output_schema: Optional[JSON]
    annotations: JSON
    meta: Optional[JSON]
    raw: JSON = field(repr=False, default_factory=dict)

    @property
    def display_title(self) -> str:
        """title, else annotations.title, else name (the spec's precedence)."""
        return self.title or _s(self.annotations.get("title")) or self.name

    @classmethod
    def from_json(cls, raw: Any) -> "Tool":
        r = _d(raw)
        out = r.get("outputSchema")
        meta = r.get("_meta")
        return cls(
            name=_s(r.get("name")) or "",
            title=_s(r.get("title")),
            description=_s(r.get("description")),
            input_schema=_d(r.get("inputSchema")),
            output_schema=out if isinstance(out, dict) else None,
            annotations=_d(r.get("annotations")),
            meta=meta if isinstance(meta, dict) else None,
            raw=r,
        )


@dataclass
class Content:
    """One content block: type is "text", "image", "audio", "resource_link" or
    "resource" (embedded); the fields that do not apply are None."""

    type: str
    text: Optional[str] = None
    data: Optional[str] = None  # base64, for image and audio
    mime_type: Optional[str] = None
    uri: Optional[str] = None
    name: Optional[str] = None
    resource: Optional["ResourceContents"] = None
    annotations: Optional[JSON] = None
    raw: JSON = field(repr=False, default_factory=dict)

    @property
    def size(self) -> Optional[int]:
        """Decoded size in bytes of binary data (image/audio/blob), else None."""
        if self.data is not None:
            return _b64len(self.data)
        if self.resource is not None:
            return self.resource.size
        s = self.raw.get("size")
        return s if isinstance(s, int) else None

    def bytes(self) -> Optional[bytes]:
        """The decoded binary data, when there is any."""
        if self.data is not None:
            return base64.b64decode(self.data)
        if self.resource is not None:
            return self.resource.bytes()
        return None

    @classmethod
    def from_json(cls, raw: Any) -> "Content":
        r = _d(raw)
        if r.keys() <= _TEXT_KEYS:  # plain text, the common case: fewer lookups
            t, text = r.get("type"), r.get("text")
            # Positional, in the fields' order: a dataclass __init__ takes
            # keywords at several times the cost (type, text, data,
            # mime_type, uri, name, resource, annotations, raw).
            return cls(t if isinstance(t, str) else "", text if isinstance(text, str) else None, None, None, None, None, None, None, r)
        res = r.get("resource")
        ann = r.get("annotations")
        return cls(
            type=_s(r.get("type")) or "",
            text=_s(r.get("text")),
            data=_s(r.get("data")),
            mime_type=_s(r.get("mimeType")),
            uri=_s(r.get("uri")),
            name=_s(r.get("name")),
            resource=ResourceContents.from_json(res) if isinstance(res, dict) else None,
            annotations=ann if isinstance(ann, dict) else None,
            raw=r,
        )


_TEXT_KEYS = frozenset({"type", "text"})


@dataclass
class CallToolResult:
    """A tool's result. ``is_error`` true is still a result, not an exception:
    the tool ran and reported a failure the model should see."""

    content: List[Content]
    structured_content: Optional[Any]
    is_error: bool
    meta: Optional[JSON]
    raw: JSON = field(repr=False, default_factory=dict)

    @property
    def text(self) -> str:
        """The text blocks joined by newlines."""
        return "\n".join(c.text for c in self.content if c.type == "text" and c.text is not None)

    @classmethod
    def from_json(cls, raw: Any) -> "CallToolResult":
        r = _d(raw)
        content = r.get("content")
        meta = r.get("_meta")
        # Positional (content, structured_content, is_error, meta, raw): a
        # result is built on every tools/call, keywords cost several times more.
        return cls(
            [Content.from_json(c) for c in content] if isinstance(content, list) else [],
            r.get("structuredContent"),
            bool(r.get("isError", False)),
            meta if isinstance(meta, dict) else None,
            r,
        )


@dataclass
class Resource:
    uri: str
    name: str
    title: Optional[str]
    description: Optional[str]
    mime_type: Optional[str]
    size: Optional[int]
    annotations: JSON
    meta: Optional[JSON]
    raw: JSON = field(repr=False, default_factory=dict)

    @classmethod
    def from_json(cls, raw: Any) -> "Resource":
        r = _d(raw)
        size = r.get("size")
        meta = r.get("_meta")
        return cls(
            uri=_s(r.get("uri")) or "",
            name=_s(r.get("name")) or "",
            title=_s(r.get("title")),
            description=_s(r.get("description")),
            mime_type=_s(r.get("mimeType")),
            size=size if isinstance(size, int) and not isinstance(size, bool) else None,
            annotations=_d(r.get("annotations")),
            meta=meta if isinstance(meta, dict) else None,
            raw=r,
        )


@dataclass
class ResourceTemplate:
    uri_template: str
    name: str
    title: Optional[str]
    description: Optional[str]
    mime_type: Optional[str]
    annotations: JSON
    raw: JSON = field(repr=False, default_factory=dict)

    @classmethod
    def from_json(cls, raw: Any) -> "ResourceTemplate":
        r = _d(raw)
        return cls(
            uri_template=_s(r.get("uriTemplate")) or "",
            name=_s(r.get("name")) or "",
            title=_s(r.get("title")),
            description=_s(r.get("description")),
            mime_type=_s(r.get("mimeType")),
            annotations=_d(r.get("annotations")),
            raw=r,
        )


@dataclass
class ResourceContents:
    """One item of resources/read: text or a base64 blob."""

    uri: str
    mime_type: Optional[str]
    text: Optional[str]
    blob: Optional[str]
    meta: Optional[JSON]
    raw: JSON = field(repr=False, default_factory=dict)

    @property
    def size(self) -> Optional[int]:
        if self.blob is not None:
            return _b64len(self.blob)
        if self.text is not None:
            return len(self.text.encode("utf-8"))
        return None

    def bytes(self) -> Optional[bytes]:
        if self.blob is not None:
            return base64.b64decode(self.blob)
        if self.text is not None:
            return self.text.encode("utf-8")
        return None

    @classmethod
    def from_json(cls, raw: Any) -> "ResourceContents":
        r = _d(raw)
        meta = r.get("_meta")
        return cls(
            uri=_s(r.get("uri")) or "",
            mime_type=_s(r.get("mimeType")),
            text=_s(r.get("text")),
            blob=_s(r.get("blob")),
            meta=meta if isinstance(meta, dict) else None,
            raw=r,
        )


@dataclass
class ReadResourceResult:
    contents: List[ResourceContents]
    raw: JSON = field(repr=False, default_factory=dict)

    @property
    def text(self) -> str:
        return "\n".join(c.text for c in self.contents if c.text is not None)

    @classmethod
    def from_json(cls, raw: Any) -> "ReadResourceResult":
        r = _d(raw)
        items = r.get("contents")
        return cls(
            contents=[ResourceContents.from_json(c) for c in items] if isinstance(items, list) else [],
            raw=r,
        )


@dataclass
class PromptArgument:
    name: str
    description: Optional[str]
    required: bool
    raw: JSON = field(repr=False, default_factory=dict)

    @classmethod
    def from_json(cls, raw: Any) -> "PromptArgument":
        r = _d(raw)
        return cls(
            name=_s(r.get("name")) or "",
            description=_s(r.get("description")),
            required=bool(r.get("required", False)),
            raw=r,
        )


@dataclass
class Prompt:
    name: str
    title: Optional[str]
    description: Optional[str]
    arguments: List[PromptArgument]
    raw: JSON = field(repr=False, default_factory=dict)

    @classmethod
    def from_json(cls, raw: Any) -> "Prompt":
        r = _d(raw)
        args = r.get("arguments")
        return cls(
            name=_s(r.get("name")) or "",
            title=_s(r.get("title")),
            description=_s(r.get("description")),
            arguments=[PromptArgument.from_json(a) for a in args] if isinstance(args, list) else [],
            raw=r,
        )


@dataclass
class PromptMessage:
    role: str
    content: Content
    raw: JSON = field(repr=False, default_factory=dict)

    @classmethod
    def from_json(cls, raw: Any) -> "PromptMessage":
        r = _d(raw)
        return cls(role=_s(r.get("role")) or "", content=Content.from_json(r.get("content")), raw=r)


@dataclass
class GetPromptResult:
    description: Optional[str]
    messages: List[PromptMessage]
    raw: JSON = field(repr=False, default_factory=dict)

    @property
    def text(self) -> str:
        return "\n".join(
            m.content.text for m in self.messages if m.content.type == "text" and m.content.text is not None
        )

    @classmethod
    def from_json(cls, raw: Any) -> "GetPromptResult":
        r = _d(raw)
        msgs = r.get("messages")
        return cls(
            description=_s(r.get("description")),
            messages=[PromptMessage.from_json(m) for m in msgs] if isinstance(msgs, list) else [],
            raw=r,
        )


@dataclass
class CompleteResult:
    values: List[str]
    total: Optional[int]
    has_more: bool
    raw: JSON = field(repr=False, default_factory=dict)

    @classmethod
    def from_json(cls, raw: Any) -> "CompleteResult":
        r = _d(raw)
        c = _d(r.get("completion"))
        vals = c.get("values")
        total = c.get("total")
        return cls(
            values=[v for v in vals if isinstance(v, str)] if isinstance(vals, list) else [],
            total=total if isinstance(total, int) and not isinstance(total, bool) else None,
            has_more=bool(c.get("hasMore", False)),
            raw=r,
        )


# ----------------------------------------------------------------- events


@dataclass
class Notification:
    """A server notification (everything but progress and cancellation)."""

    method: str
    params: JSON
    raw: JSON = field(repr=False, default_factory=dict)

    @classmethod
    def from_json(cls, raw: Any) -> "Notification":
        r = _d(raw)
        return cls(method=_s(r.get("method")) or "", params=_d(r.get("params")), raw=r)


@dataclass
class LogRecord:
    """A log line: a server's stderr line, a non-JSON stdout line, or a
    warning of the library ("source" says which)."""

    level: str
    source: str
    message: str
    raw: JSON = field(repr=False, default_factory=dict)

    @classmethod
    def from_json(cls, raw: Any) -> "LogRecord":
        r = _d(raw)
        return cls(
            level=_s(r.get("level")) or "info",
            source=_s(r.get("source")) or "",
            message=_s(r.get("message")) or "",
            raw=r,
        )


@dataclass
class Progress:
    """A progress notification for one call (``call_id``)."""

    call_id: int
    progress: float
    total: Optional[float]
    message: Optional[str]
    raw: JSON = field(repr=False, default_factory=dict)

    @classmethod
    def from_json(cls, raw: Any) -> "Progress":
        r = _d(raw)
        p = r.get("progress")
        t = r.get("total")
        cid = r.get("call_id")
        return cls(
            call_id=cid if isinstance(cid, int) else 0,
            progress=float(p) if isinstance(p, (int, float)) else 0.0,
            total=float(t) if isinstance(t, (int, float)) and not isinstance(t, bool) else None,
            message=_s(r.get("message")),
            raw=r,
        )


@dataclass
class Closed:
    """The connection ended: ``requested`` is true after ``close()``."""

    status: int
    reason: str
    requested: bool
    exit_code: Optional[int]
    signal: Optional[str]
    stderr_tail: List[str]
    raw: JSON = field(repr=False, default_factory=dict)

    @classmethod
    def from_json(cls, raw: Any) -> "Closed":
        r = _d(raw)
        st = r.get("status")
        ec = r.get("exit_code")
        tail = r.get("stderr_tail")
        return cls(
            status=st if isinstance(st, int) else 0,
            reason=_s(r.get("reason")) or "",
            requested=bool(r.get("requested", False)),
            exit_code=ec if isinstance(ec, int) and not isinstance(ec, bool) else None,
            signal=_s(r.get("signal")),
            stderr_tail=[x for x in tail if isinstance(x, str)] if isinstance(tail, list) else [],
            raw=r,
        )


# ------------------------------------------------------------ token stores


@dataclass
class StoreConflict:
    """What an application store's ``save(collection, key,
    expected_version, document)`` returns when the stored version is no
    longer ``expected_version``: the document that is stored and its
    version (``StoreConflict(None, 0)`` when nothing is). Its repr never
    shows the document (it may hold tokens)."""

    document: Optional[JSON] = field(repr=False)
    version: int


