#!/usr/bin/env python3
"""Sums the closing count lines of every suite's log into one final line.

Each suite's log (build/test-results/<suite>.log) ends with a count line in
its runner's own words: "N passed, N failed" (Go, C, conformance),
pytest's "N passed, M failed in 1.2s", or ExUnit's "N tests, M failures".
A suite whose log has no count line counts as one failure: a suite that ran
nothing must not pass silently. Where the runner timed a suite (<suite>.time:
wall, user and system seconds), its line says so, and the slowest suites are
named before the closing line, with the slowest tests of all suites (as
each runner reports them: the C harness's "[  OK  ] name (N ms)", the Go
summary's and pytest's --durations lines, ExUnit's --slowest).
"""
import pathlib
import re
import sys

PATTERNS = [
    re.compile(r"(?P<p>\d+) passed(?:, (?P<f>\d+) failed)?"),
    re.compile(r"(?:(?P<f>\d+) failed, )?(?P<p>\d+) passed"),
    re.compile(r"(?P<p>\d+) tests?, (?P<f>\d+) failures?"),
]

# One test's duration as each runner prints it: (pattern, seconds per unit).
DURATIONS = [
    (re.compile(r"^\[(?:  OK  | FAIL )\] (?P<name>.+?) \((?:\d+ failed checks, )?(?P<t>\d+) ms\)$"), 0.001),
    (re.compile(r"^\s+(?P<t>\d+\.\d+)s  (?P<name>\S+ \S+)$"), 1.0),  # gotest_summary.py
    (re.compile(r"^(?P<t>\d+\.\d+)s (?:call|setup|teardown) +(?P<name>\S+)$"), 1.0),  # pytest --durations
    (re.compile(r"^\s+\* (?P<name>test .+?) \((?P<t>\d+\.\d+)ms\)"), 0.001),  # ExUnit --slowest
]


def durations(log: str, suite: str):
    for line in log.splitlines():
        for pat, unit in DURATIONS:
            m = pat.match(line)
            if m:
                yield float(m.group("t")) * unit, f"{suite}: {m.group('name')}"
                break


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
    tests = []
    for log in sorted(root.glob("*.log")):
        text = log.read_text(errors="replace")
        tests += durations(text, log.stem.split("-", 1)[-1])
        c = counts(text)
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
    if tests:
        print("slowest tests:")
        for sec, name in sorted(tests, reverse=True)[:10]:
            print(f"  {sec:6.1f}s  {name}")
    print(f"{total_p} passed, {total_f} failed")
    return 1 if total_f else 0


if __name__ == "__main__":
    sys.exit(main())
