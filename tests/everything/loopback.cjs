// Preloaded into server-everything with `node --require`: a server that
// listens without naming a host (express's app.listen(PORT)) binds to
// 127.0.0.1 only, so the tests never open a port beyond loopback.
"use strict";
const net = require("net");
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const a0 = args[0];
  if (typeof a0 === "number" || (typeof a0 === "string" && /^\d+$/.test(a0))) {
    if (typeof args[1] !== "string") args.splice(1, 0, "127.0.0.1");
  } else if (a0 && typeof a0 === "object" && a0.port !== undefined && !a0.host && !a0.path) {
    args[0] = Object.assign({}, a0, { host: "127.0.0.1" });
  }
  return listen.apply(this, args);
};

// With LEMONMCP_EXIT_ON_STDIN_EOF=1 the server exits when its stdin reaches
// end of file: the test process holds the write end of that pipe, so when it
// dies (even by SIGKILL or a segfault, when no teardown runs) the kernel
// closes the pipe and the server goes too — no orphaned server outlives it.
if (process.env.LEMONMCP_EXIT_ON_STDIN_EOF === "1") {
  process.stdin.on("end", () => process.exit(0));
  process.stdin.on("error", () => process.exit(0));
  process.stdin.resume();
}
