"""The README and the packages' doc.go files against the tree: what they
list must exist, and what exists must be listed, so that neither can drift
from the code without this suite failing.

- The feature list ("What it speaks") names everything lmcp_features
  reports, and says of none of it that it is not built.
- The layout table has a row for every top-level directory, every row's
  path exists, and the rows of directories made of packages name each one.
- A doc.go that maps its package's files (a "Files:" list, or three or more
  of its files named) names every file and no file that is not there; any
  .go file a doc.go names exists. A package of more than MAP_FROM files
  must map them: past that, a reader needs the map to find anything.
- Every fenced block of the README is either run by test_snippets.py or
  marked with why it is not.
"""

from __future__ import annotations

import os
import re
import subprocess
from typing import Dict, List, Set, Tuple

import pytest

import lemonmcp

import readme
from readme import REPO

# What the README calls each thing lmcp_features reports. A key the library
# reports and this table lacks fails the test: name the feature in the
# README's "What it speaks", then here.
FEATURE_WORDS: Dict[str, Dict[str, str]] = {
    "transports": {
        "stdio": "stdio",
        "streamable_http": "Streamable HTTP",
        "sse": "legacy HTTP+SSE",
        "http": "`http` detection",
    },
    "protocol_versions": {v: v for v in ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28")},
    "protocol_modes": {"legacy": "`legacy`", "auto": "`auto`", "modern": "`modern`"},
    "client_capabilities": {"roots": "roots", "sampling": "sampling", "elicitation": "elicitation"},
    "auth_flows": {
        "refresh_token": "refresh",
        "client_credentials": "client credentials",
        "authorization_code": "authorization code",
        "jwt_bearer": "jwt-bearer grant",
        "token_exchange": "token exchange",
    },
    "auth_token_binding": {"dpop": "DPoP"},
    "resource_verify": {"size": "size", "sha256": "SHA-256", "frontmatter": "frontmatter"},
    "result_formats": {"json": "JSON"},
    "legacy": {"tasks": "2025-11-25 tasks", "tasks_receiver": "task-augmented sampling and elicitation"},
    "modern": {
        "server_discover": "server/discover",
        "mrtr": "MRTR",
        "http_standard_headers": "MCP-Protocol-Version",
        "subscriptions_listen": "subscriptions/listen",
        "result_cache": "result caching",
        "tasks": "tasks extension",
    },
}
NOT_FEATURES = {"version", "abi_version", "sandbox"}  # sandbox: what this machine can confine (a report)
NOT_BUILT = re.compile(r"not (?:yet )?(?:built|implemented|supported)|not yet|unimplemented|to do\b", re.I)


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def _features() -> List[Tuple[str, str]]:
    out = []
    for key, value in sorted(lemonmcp.features().items()):
        if key in NOT_FEATURES:
            continue
        assert isinstance(value, list), f"lmcp_features {key!r} is not a list: add it to NOT_FEATURES or FEATURE_WORDS"
        out += [(key, str(v)) for v in value]
    return out


def test_feature_list_names_every_feature() -> None:
    speaks = _flat(readme.section(readme.read_text(), "What it speaks"))
    missing = []
    for key, value in _features():
        word = FEATURE_WORDS.get(key, {}).get(value)
        if word is None:
            missing.append(f"{key}.{value} (no README word for it in FEATURE_WORDS)")
        elif word not in speaks:
            missing.append(f"{key}.{value} ({word!r} is not in 'What it speaks')")
    assert not missing, "lmcp_features reports what the README's feature list does not name: " + "; ".join(missing)


def test_feature_list_says_nothing_built_is_not_built() -> None:
    text = _flat(readme.read_text())
    words = {w for table in FEATURE_WORDS.values() for w in table.values() if len(w) > 4}
    wrong = []
    for sentence in re.split(r"(?<=[.;])\s", text):
        if NOT_BUILT.search(sentence):
            wrong += [f"{w!r} in {sentence.strip()[:160]!r}" for w in sorted(words) if w in sentence]
    assert not wrong, "the README says of a feature lmcp_features reports that it is not built: " + "; ".join(wrong)


# ------------------------------------------------------------------ layout


def _layout() -> Dict[str, str]:
    rows = {}
    for line in readme.section(readme.read_text(), "Layout").splitlines():
        m = re.match(r"^\| `([^`]+)` \| (.*) \|$", line)
        if m:
            rows[m.group(1)] = m.group(2)
    assert rows, "the README's Layout section has no table rows"
    return rows


def _tracked() -> List[str]:
    out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"],
                         cwd=REPO, capture_output=True, text=True, check=True).stdout
    return [p for p in out.splitlines() if os.path.exists(os.path.join(REPO, p))]


def test_layout_rows_exist() -> None:
    missing = [p for p in _layout() if not os.path.exists(os.path.join(REPO, p))]
    assert not missing, f"the README's layout table names paths that do not exist: {missing}"


def test_layout_names_every_top_level_directory() -> None:
    rows = _layout()
    tops = sorted({p.split("/")[0] + "/" for p in _tracked() if "/" in p and not p.startswith(".")})
    missing = [d for d in tops if d not in rows]
    assert not missing, f"top-level directories without a row in the README's layout table: {missing}"


@pytest.mark.parametrize("row", ["internal/", "transport/"])
def test_layout_names_every_package(row: str) -> None:
    text = _layout()[row]
    pkgs = sorted({os.path.dirname(p)[len(row):] + "/" for p in _tracked()
                   if p.startswith(row) and p.endswith(".go") and os.path.dirname(p) != row.rstrip("/")})
    missing = [p for p in pkgs if f"`{p}`" not in text]
    assert not missing, f"packages under {row} the README's layout row does not name: {missing}"


def test_layout_names_every_binding() -> None:
    text = _layout()["bindings/"]
    dirs = sorted({p.split("/")[1] + "/" for p in _tracked() if p.startswith("bindings/") and p.count("/") >= 2})
    missing = [d for d in dirs if f"`{d}`" not in text]
    assert not missing, f"bindings the README's layout row does not name: {missing}"


def test_readme_links_every_docs_page() -> None:
    """Found where users look: every page of docs/ is linked from the README."""
    text = open(os.path.join(REPO, "README.md"), encoding="utf-8").read()
    pages = sorted(f for f in os.listdir(os.path.join(REPO, "docs")) if f.endswith(".md"))
    missing = [p for p in pages if f"(docs/{p}" not in text]
    assert not missing, f"README.md links no docs page of {missing}"


def test_readme_shows_the_guards() -> None:
    """The README shows pins, the sandbox, tool search, deferred_tools and
    `lemonmcp check`, in runnable examples where they can run."""
    text = open(os.path.join(REPO, "README.md"), encoding="utf-8").read()
    for word in ('"pins"', '"sandbox"', "search ", '"deferred_tools"', " check", " pins"):
        assert word in text, f"README.md does not show {word.strip()}"


# ------------------------------------------------------------------ doc.go


def _doc_files() -> List[str]:
    return sorted(p for p in _tracked() if os.path.basename(p) == "doc.go")


# A package of more files than this maps them in its doc.go.
MAP_FROM = 20

_GO_NAME = re.compile(r"(?<![\w.-])((?:[\w.-]+/)*[\w-]+\.go)\b")


@pytest.mark.parametrize("doc", _doc_files())
def test_doc_go_file_map(doc: str) -> None:
    pkg = os.path.dirname(doc)
    text = open(os.path.join(REPO, doc), encoding="utf-8").read()
    named: Set[str] = set(_GO_NAME.findall(text))
    absent = [n for n in sorted(named)
              if not os.path.exists(os.path.join(REPO, pkg, n)) and not os.path.exists(os.path.join(REPO, n))]
    assert not absent, f"{doc} names files that do not exist: {absent}"
    own = {n for n in named if "/" not in n}
    files = {f for f in os.listdir(os.path.join(REPO, pkg))
             if f.endswith(".go") and not f.endswith("_test.go") and f != "doc.go"}
    is_map = re.search(r"^// *Files:", text, re.M) is not None or len(own & files) >= 3
    assert is_map or len(files) <= MAP_FROM, \
        f"{doc}: {len(files)} files and no map of them (name each file by its job, as core/doc.go does)"
    if is_map:
        missing = sorted(files - own)
        assert not missing, f"{doc} maps its package's files but leaves out {missing}"


# ------------------------------------------------------------------ blocks


def test_every_block_runs_or_says_why_not() -> None:
    bad = []
    for b in readme.blocks():
        if b.mark == "skip" and not b.arg.strip("() "):
            bad.append(f"line {b.line}: a skip without a reason")
        elif b.mark == "file" and not re.fullmatch(r"[\w.-]+", b.arg):
            bad.append(f"line {b.line}: file {b.arg!r} is not a plain file name")
        elif b.mark is None and b.lang not in readme.RUNNABLE:
            bad.append(f"line {b.line}: a {b.lang or 'plain'} block that is neither run nor marked")
        elif b.mark is None and b.lang == "sh" and any(
            ln.strip() and not ln.startswith("lemonmcp ") for ln in b.code.splitlines()
        ):
            bad.append(f"line {b.line}: an sh block with commands other than lemonmcp")
    assert not bad, "README blocks: " + "; ".join(bad)
