"""The README's fenced code blocks, as the test-readme suite reads them.

A block is run according to its language (python, c, cpp, elixir, and sh
lines that call `lemonmcp`), unless the HTML comment on the line before it
says otherwise:

    <!-- readme-test: skip (why) -->     not run; the reason is required
    <!-- readme-test: file NAME -->      written to NAME in the directory
                                         every block runs in

An `elixir` block that defines `deps` is the dependency declaration of an
application: the runner builds its mix project from it.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import List, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
README = os.path.join(REPO, "README.md")

RUNNABLE = {"python", "c", "cpp", "elixir", "sh"}

_FENCE = re.compile(r"^```(\w*)\s*$")
_MARK = re.compile(r"^<!-- readme-test: (skip|file) ?(.*?) -->$")


@dataclass
class Block:
    lang: str
    code: str
    line: int  # 1-based line of the opening fence
    section: str
    mark: Optional[str] = None  # "skip" or "file"
    arg: str = ""  # the skip reason or the file name

    @property
    def name(self) -> str:
        slug = re.sub(r"[^a-z0-9]+", "-", self.section.lower()).strip("-")
        return f"{slug}-L{self.line}-{self.lang or 'text'}"

    @property
    def is_deps(self) -> bool:
        return self.lang == "elixir" and re.search(r"^\s*defp deps\b", self.code, re.M) is not None


def read_text() -> str:
    with open(README, encoding="utf-8") as f:
        return f.read()


def blocks(text: Optional[str] = None) -> List[Block]:
    """Every fenced block of the README, in order."""
    lines = (read_text() if text is None else text).split("\n")
    out: List[Block] = []
    section = ""
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("#"):
            section = line.lstrip("#").strip()
        m = _FENCE.match(line)
        if not m:
            i += 1
            continue
        start = i
        i += 1
        body = []
        while i < len(lines) and lines[i].strip() != "```":
            body.append(lines[i])
            i += 1
        if i == len(lines):
            raise ValueError(f"README.md:{start + 1}: a fence that is never closed")
        b = Block(lang=m.group(1), code="\n".join(body) + "\n", line=start + 1, section=section)
        mark = _MARK.match(lines[start - 1]) if start > 0 else None
        if mark:
            b.mark, b.arg = mark.group(1), mark.group(2).strip()
        out.append(b)
        i += 1
    return out


def section(text: str, title: str) -> str:
    """The body of the level-2 section with this title."""
    m = re.search(r"^## " + re.escape(title) + r"\s*$(.*?)(?=^## |\Z)", text, re.M | re.S)
    if not m:
        raise AssertionError(f"README.md has no '## {title}' section")
    return m.group(1)
