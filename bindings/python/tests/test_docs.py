"""The reference in docs/ covers what the library does: every configuration
field and enum value the parser knows, every event kind it emits and every
app-request kind it asks. Moving the reference out of the header must lose
nothing, and a field added later without its documentation fails here."""

from __future__ import annotations

import glob
import os
import re
from typing import Dict, Set

import pytest

from conftest import REPO

DOCS = os.path.join(REPO, "docs")
HEADER = os.path.join(REPO, "include", "lemonmcp.h")


def _read(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


def _go_sources(package: str) -> Dict[str, str]:
    """The package's non-test Go files, without comments and imports."""
    out = {}
    for path in sorted(glob.glob(os.path.join(REPO, package, "*.go"))):
        if path.endswith("_test.go"):
            continue
        text = re.sub(r"^import \((?:.|\n)*?^\)", "", _read(path), flags=re.M)
        text = re.sub(r"^import \"[^\"]*\"", "", text, flags=re.M)
        text = re.sub(r"//[^\n]*", "", text)
        out[path] = text
    assert out, f"no Go sources in {package}/"
    return out


def _sections(page: str) -> Set[str]:
    return set(re.findall(r"^## (\S+)$", _read(os.path.join(DOCS, page)), re.M))


def test_every_configuration_word_is_documented() -> None:
    """Every field name and enum value the configuration parser spells out
    (its snake_case string literals) is in the reference."""
    docs = "\n".join(_read(p) for p in glob.glob(os.path.join(DOCS, "*.md")))
    words: Set[str] = set()
    for text in _go_sources("config").values():
        words |= set(re.findall(r'"([a-z][a-z0-9_]*)"', text))
    assert len(words) > 40, words  # the parser's spelling changed: fix the pattern, not the check
    missing = sorted(w for w in words if not re.search(r"[`\"]" + re.escape(w) + r"[`\"]", docs))
    assert not missing, f"configuration words not in docs/: {missing}"


@pytest.mark.parametrize(
    "page,pattern",
    [
        ("events.md", r'\bemit(?:Error)?\("([a-z_]+)"'),
        ("app-requests.md", r'\baskHost(?:Sync)?\((?:ctx, )?"([a-z_]+)"'),
    ],
)
def test_every_kind_has_its_section(page: str, pattern: str) -> None:
    kinds: Set[str] = set()
    for text in _go_sources("core").values():
        kinds |= set(re.findall(pattern, text))
    assert len(kinds) >= 5, kinds
    assert kinds <= _sections(page), f"kinds without a section in docs/{page}: {sorted(kinds - _sections(page))}"
    header = _read(HEADER)
    for kind in kinds:  # the header names each kind next to its callback
        assert f'"{kind}"' in header, kind


def test_header_points_at_pages_that_exist() -> None:
    pages = set(re.findall(r"docs/([a-z-]+\.md)", _read(HEADER)))
    assert {"configuration.md", "events.md", "app-requests.md", "errors.md", "call-options.md"} <= pages
    index = _read(os.path.join(DOCS, "README.md"))
    for page in pages:
        assert os.path.isfile(os.path.join(DOCS, page)), page
        assert f"({page})" in index, f"docs/README.md does not list {page}"
