#!/usr/bin/env python3
"""Sums the closing count lines of every suite's log into one final line.

Each suite's log (build/test-results/<suite>.log) ends with a count line in
its runner's own words: "N passed, N failed" (Go, C, conformance),
pytest's "N passed, M failed in 1.2s", or ExUnit's "N tests, M failures".
A suite whose log has no count line counts as one failure: a suite that ran
nothing must not pass silently. Where the runner timed a suite (<suite>.time:
wall, user and system seconds), its line says so, and the slowest suites are
named before the closing line.
"""
import pathlib
import re
import sys

PATTERNS = [
    re.compile(r"(?P<p>\d+) passed(?:, (?P<f>\d+) failed)?"),
    re.compile(r"(?:(?P<f>\d+) failed, )?(?P<p>\d+) passed"),
    re.compile(r"(?P<p>\d+) tests?, (?P<f>\d+) failures?"),
]


def counts(log: str):
    for line in reversed(log.splitlines()):
        for pat in PATTERNS:
            m = pat.search(line)
            if m:
                p = int(m.group("p"))
                f = int(m.group("f") or 0)
                if pat is PATTERNS[2]:
                    p -= f
                return p, f
    return None


def timing(log: pathlib.Path):
    """(wall, cpu) seconds from the runner's .time file, or None."""
    try:
        wall, user, system = (float(x) for x in log.with_suffix(".time").read_text().split())
    except (OSError, ValueError):
        return None
    return wall, user + system


def main() -> int:
    root = pathlib.Path(sys.argv[1])
    total_p = total_f = 0
    timed = []
    for log in sorted(root.glob("*.log")):
        c = counts(log.read_text(errors="replace"))
        status = open(log.with_suffix(".status")).read().strip() if log.with_suffix(".status").exists() else "0"
        t = timing(log)
        took = f" ({t[0]:.0f}s, cpu {t[1]:.0f}s)" if t else ""
        if t:
            timed.append((t[0], t[1], log.stem.split("-", 1)[-1]))
        if c is None:
            print(f"  {log.stem}: no test count found (exit {status}){took}")
            total_f += 1
            continue
        p, f = c
        if status != "0" and f == 0:
            f = 1  # the runner failed without a failing test: still a failure
        print(f"  {log.stem}: {p} passed, {f} failed{took}")
        total_p += p
        total_f += f
    if timed:
        slowest = ", ".join(f"{name} {wall:.0f}s (cpu {cpu:.0f}s)" for wall, cpu, name in sorted(timed, reverse=True)[:5])
        print(f"slowest suites: {slowest}; cpu of all suites {sum(c for _, c, _ in timed):.0f}s")
    print(f"{total_p} passed, {total_f} failed")
    return 1 if total_f else 0


if __name__ == "__main__":
    sys.exit(main())
