#!/usr/bin/env python3
"""Reads `go test -json` from stdin and prints a readable report.

Prints one line per package (ok/FAIL), the full output of every failed test,
the slowest top-level tests (GOTEST_SLOWEST of them, 10 unless set), and a
closing line "<label>: N passed, N failed[, N skipped]". Exits 1 when a
test or a package failed (including build failures, which produce no test
events), so a broken build can never look like a pass.
"""
import json
import os
import sys
from collections import defaultdict


def main() -> int:
    label = sys.argv[1] if len(sys.argv) > 1 else "go"
    output = defaultdict(list)  # (pkg, test) -> lines
    counts = {"pass": 0, "fail": 0, "skip": 0}
    failed_pkgs = []
    elapsed_by_test = []  # (seconds, "pkg Test")
    for raw in sys.stdin:
        try:
            ev = json.loads(raw)
        except ValueError:
            sys.stdout.write(raw)  # build errors arrive as plain text
            continue
        pkg, test, action = ev.get("Package", ""), ev.get("Test"), ev.get("Action")
        if action == "output":
            output[(pkg, test)].append(ev.get("Output", ""))
        elif action in ("pass", "fail", "skip") and test:
            if "/" not in test:  # count top-level tests; subtests live inside
                counts[action] += 1
                elapsed_by_test.append((ev.get("Elapsed", 0), f"{pkg} {test}"))
            if action == "fail":
                sys.stdout.write(f"--- FAIL: {pkg} {test}\n")
                sys.stdout.write("".join(output[(pkg, test)]))
            output.pop((pkg, test), None)
        elif action in ("pass", "fail", "skip") and not test:
            elapsed = ev.get("Elapsed", 0)
            if action == "fail":
                failed_pkgs.append(pkg)
                sys.stdout.write("".join(output[(pkg, None)]))
            word = {"pass": "ok  ", "fail": "FAIL", "skip": "skip"}[action]
            sys.stdout.write(f"{word} {pkg} ({elapsed:.1f}s)\n")
            output.pop((pkg, None), None)
        sys.stdout.flush()
    slowest = sorted(elapsed_by_test, reverse=True)[: int(os.environ.get("GOTEST_SLOWEST", "10"))]
    if slowest:
        print("slowest tests:")
        for sec, name in slowest:
            print(f"  {sec:6.2f}s  {name}")
    failed = counts["fail"] + (1 if failed_pkgs and counts["fail"] == 0 else 0)
    line = f"{label}: {counts['pass']} passed, {failed} failed"
    if counts["skip"]:
        line += f", {counts['skip']} skipped"
    print(line)
    return 1 if failed or failed_pkgs else 0


if __name__ == "__main__":
    sys.exit(main())
