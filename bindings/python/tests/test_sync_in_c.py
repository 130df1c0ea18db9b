"""A blocking call waits in the library, with the GIL released, as a C
host's blocking call does (_session.call_blocking): server requests and
callbacks keep running Python on the library's threads meanwhile.

The load runs in a child process: a thread that waited for its result with
the GIL held would freeze the interpreter (the timeout that would report it
included), so the parent's timeout fails the test instead of hanging."""

from __future__ import annotations

import threading
from typing import Any, List

import lemonmcp

from conftest import run_python

# 16 threads make blocking calls at once while the main thread makes its
# own (in slices): echo, sample (the sampling handler answers in Python on
# a library thread) and elicit (the elicitation handler too). A sampling
# answer and an elicitation answer carry the thread's number back, so a
# result that went to the wrong caller fails.
CHILD = r"""
import sys, threading
import lemonmcp

fixture = sys.argv[1]
THREADS, ROUNDS = 16, 12

def sampling(params):
    text = params["messages"][0]["content"]["text"]
    return {"role": "assistant", "model": "m", "content": {"type": "text", "text": "re:" + text}}

def elicitation(params):
    return {"action": "accept", "content": {"name": params["message"], "age": 1}}

client = lemonmcp.Client.stdio(fixture, [], sampling=sampling, elicitation=elicitation,
                               call_timeout=600, ready_timeout=30)
client.open(timeout=30)
errors, answered = [], []

def work(k):
    try:
        for i in range(ROUNDS):
            tag = f"{k}-{i}"
            r = client.call_tool("echo", {"text": tag})
            assert r.text == tag, (tag, r.text)
            r = client.call_tool("sample", {"prompt": tag, "max_tokens": 1})
            assert not r.is_error and "re:" + tag in r.text, (tag, r.text)
            r = client.call_tool("elicit", {"message": tag})
            assert not r.is_error and tag in r.text, (tag, r.text)
            answered.append(tag)
    except BaseException as exc:
        errors.append(f"thread {k}: {exc!r}")

threads = [threading.Thread(target=work, args=(k,)) for k in range(THREADS)]
for t in threads:
    t.start()
work("main")
for t in threads:
    t.join()
client.close(timeout=10)
if errors:
    print("\n".join(errors))
    sys.exit(1)
print("answered", len(answered))
"""


def test_sampling_and_elicitation_answered_while_16_threads_call(fixture_path: str) -> None:
    # A deadlock shows as subprocess.TimeoutExpired after PROC_S (generous
    # for a loaded machine: the load takes about a second alone).
    out = run_python(["-c", CHILD, fixture_path])
    assert (out.returncode, out.stdout.strip()) == (0, "answered 204"), out.stdout + out.stderr


def test_a_blocking_call_releases_the_gil(fixture_path: str) -> None:
    # While the main thread waits for a slow call, another thread runs
    # Python: it counts, and the count only grows if the GIL is free.
    with lemonmcp.Client.stdio(fixture_path, []) as client:
        stop = threading.Event()
        counts: List[int] = [0]

        def spin() -> None:
            while not stop.is_set():
                counts[0] += 1

        t = threading.Thread(target=spin)
        t.start()
        try:
            before = counts[0]
            client.call_tool("slow", {"ms": 300, "steps": 1})
            during = counts[0] - before
        finally:
            stop.set()
            t.join()
        assert during > 1000, during


def test_the_main_threads_call_errors_as_before(fixture_path: str) -> None:
    # The main thread's two-step call raises the error a call's completion
    # carries, decoded as every other path decodes it.
    with lemonmcp.Client.stdio(fixture_path, [], call_timeout=0.2) as client:
        try:
            client.call_tool("slow", {"ms": 5000, "steps": 1})
        except lemonmcp.TimeoutError as exc:
            assert str(exc) == "no response to tools/call within 200 ms", str(exc)
        else:
            raise AssertionError("the call did not time out")
        assert client.call_tool("echo", {"text": "after"}).text == "after"
        result: Any = client.call("tools/list", None)
        assert any(t["name"] == "echo" for t in result["tools"])
