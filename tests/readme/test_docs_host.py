"""docs/host.md's end-to-end pins example, run as it is written (bash,
from the repository's root, `lemonmcp` on PATH), against the rugpull
fixture: the first call is served, the changed tool is held from the first
call of the next process (exit 8), pins shows the diff, and an approval of
the hash shown makes it callable again."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile

from readme import REPO


def _block(marker: str) -> str:
    text = open(os.path.join(REPO, "docs", "host.md"), encoding="utf-8").read()
    m = re.search(r"<!-- docs-test: " + re.escape(marker) + r" -->\n```sh\n(.*?)\n```", text, re.S)
    assert m, f"docs/host.md has no sh block marked docs-test: {marker}"
    return m.group(1)


def test_docs_host_pins_end_to_end() -> None:
    script = _block("pins")
    assert os.access(os.path.join(REPO, "build", "fixtures", "rugpull"), os.X_OK), "make fixtures builds rugpull"
    with tempfile.TemporaryDirectory() as bin_dir:
        shim = os.path.join(bin_dir, "lemonmcp")
        with open(shim, "w", encoding="utf-8") as f:
            f.write(f'#!/bin/sh\nexec {sys.executable} -m lemonmcp "$@"\n')
        os.chmod(shim, 0o755)
        env = dict(os.environ, PATH=bin_dir + os.pathsep + os.environ.get("PATH", ""),
                   PYTHONPATH=os.path.join(REPO, "bindings", "python"))
        p = subprocess.run(["bash", "-c", script], cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.count("called echo") == 2, p.stdout
    assert "held: exit 8" in p.stdout, p.stdout + p.stderr
    assert "(pinned)" in p.stdout and "(offered now)" in p.stdout, p.stdout
    assert "approved tool" in p.stdout, p.stdout
    assert "is held" in p.stderr and "approve r echo --hash" in p.stderr, p.stderr
