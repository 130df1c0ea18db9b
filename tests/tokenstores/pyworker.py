"""One process of the shared-grant test: a client of the Python binding
that calls the echo tool from many threads until a deadline and prints
{"ok", "failed", "errors"} as one JSON line.

    pyworker.py CONFIG THREADS START_AT_MS UNTIL_MS
"""

import json
import sys
import threading
import time

import lemonmcp


def main() -> None:
    path, threads, start_at, until = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    with open(path) as f:
        config = json.load(f)
    time.sleep(max(0.0, start_at / 1000 - time.time()))
    counts = {"ok": 0, "failed": 0, "errors": []}
    lock = threading.Lock()
    try:
        client = lemonmcp.Client(config)
        client.open()
    except lemonmcp.LemonMCPError as e:
        print(json.dumps({"ok": 0, "failed": 1, "errors": [f"{type(e).__name__}: {e}"]}), flush=True)
        sys.exit(1)

    def run(i: int) -> None:
        n = 0
        while time.time() * 1000 < until:
            try:
                client.call_tool("echo", {"text": f"p{i}-{n}"})
                ok = True
                msg = ""
            except lemonmcp.LemonMCPError as e:
                ok = False
                msg = f"{type(e).__name__}: {e}"
            with lock:
                if ok:
                    counts["ok"] += 1
                else:
                    counts["failed"] += 1
                    if len(counts["errors"]) < 5:
                        counts["errors"].append(msg)
            n += 1
            time.sleep(0.1)  # paced: every thread still meets each expiry

    ts = [threading.Thread(target=run, args=(i,)) for i in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    client.close()
    print(json.dumps(counts), flush=True)


if __name__ == "__main__":
    main()
