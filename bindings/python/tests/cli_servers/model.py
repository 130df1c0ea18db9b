"""A stand-in model for --sampling-command: reads the sampling request's
params as JSON on stdin and prints a result. argv[1] picks a behaviour."""

import json
import sys

mode = sys.argv[1] if len(sys.argv) > 1 else "ok"
params = json.load(sys.stdin)
if mode == "ok":
    text = params["messages"][0]["content"]["text"]
    print(json.dumps({"role": "assistant", "content": {"type": "text", "text": f"model says: {text}"},
                      "model": "stand-in", "stopReason": "endTurn"}))
elif mode == "fail":
    sys.stderr.write("model: out of credit\n")
    sys.exit(3)
elif mode == "garbage":
    print("this is not JSON")
elif mode == "wrong-role":
    print(json.dumps({"role": "system", "content": {"type": "text", "text": "x"}, "model": "m"}))
