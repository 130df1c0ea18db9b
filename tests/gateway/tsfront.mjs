// A front client of `lemonmcp serve`: the official TypeScript SDK's Client,
// v1 (@modelcontextprotocol/sdk, the initialize era) or v2
// (@modelcontextprotocol/client: the initialize era, or 2026-07-28 with
// --era modern), driving the gateway over stdio or Streamable HTTP through
// the scenarios the gateway tests check (bindings/python/tests/
// test_gateway_fronts.py, the Python twin is pyfront.py). Prints one JSON
// object, {scenario: report}; the test judges it.
//
//   node tsfront.mjs --sdk v1|v2 --modules DIR/node_modules [--era legacy|modern]
//        (--stdio 'CMD ARGS' | --url URL) [--prefix fx__] [--scenarios a,b] [--token T]
//
// Every wait is bounded (WAIT_MS).
import { pathToFileURL } from "node:url";
import path from "node:path";

const WAIT_MS = 30000;
const ROOT = "file:///front/root";

function parseArgs(argv) {
  const a = { sdk: "v1", era: "legacy", prefix: "fx__", scenarios: "tools,call,sampling,elicitation,roots,progress,cancel,list_changed" };
  for (let i = 0; i < argv.length; i += 2) a[argv[i].replace(/^--/, "")] = argv[i + 1];
  return a;
}

const args = parseArgs(process.argv.slice(2));
const mod = (rel) => import(pathToFileURL(path.join(args.modules, rel)).href);

let Client, StdioClientTransport, StreamableHTTPClientTransport, schemas = null;
if (args.sdk === "v1") {
  ({ Client } = await mod("@modelcontextprotocol/sdk/dist/esm/client/index.js"));
  ({ StdioClientTransport } = await mod("@modelcontextprotocol/sdk/dist/esm/client/stdio.js"));
  ({ StreamableHTTPClientTransport } = await mod("@modelcontextprotocol/sdk/dist/esm/client/streamableHttp.js"));
  schemas = await mod("@modelcontextprotocol/sdk/dist/esm/types.js");
} else {
  ({ Client, StreamableHTTPClientTransport } = await mod("@modelcontextprotocol/client/dist/index.mjs"));
  ({ StdioClientTransport } = await mod("@modelcontextprotocol/client/dist/stdio.mjs"));
}

function onRequest(client, method, handler) {
  const byMethod = {
    "sampling/createMessage": "CreateMessageRequestSchema",
    "elicitation/create": "ElicitRequestSchema",
    "roots/list": "ListRootsRequestSchema",
  };
  client.setRequestHandler(schemas ? schemas[byMethod[method]] : method, handler);
}

function onNotification(client, method, handler) {
  const byMethod = { "notifications/tools/list_changed": "ToolListChangedNotificationSchema" };
  client.setNotificationHandler(schemas[byMethod[method]], handler);
}

function bounded(promise, what) {
  let t;
  const timeout = new Promise((_, reject) => { t = setTimeout(() => reject(new Error(`${what}: no answer in ${WAIT_MS} ms`)), WAIT_MS); });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(t));
}

const textOf = (r) => (r?.content ?? []).map((c) => c.text ?? "").join("");

async function open(label, front) {
  const options = { capabilities: { sampling: {}, elicitation: { form: {} }, roots: { listChanged: true } } };
  if (args.era === "modern") options.versionNegotiation = { mode: { pin: "2026-07-28" } };
  // v2 delivers list_changed through its listChanged handlers: in the
  // 2026-07-28 era they open the subscriptions/listen stream themselves.
  const changed = () => { front.notified.push("notifications/tools/list_changed"); };
  if (!schemas) options.listChanged = { tools: { onChanged: changed, autoRefresh: false, debounceMs: 0 } };
  const client = new Client({ name: `tsfront-${args.sdk}-${label}`, version: "1.0.0" }, options);
  onRequest(client, "sampling/createMessage", async (req) => {
    const prompt = req.params.messages.map((m) => m.content?.text ?? "").join("");
    front.sampled.push(prompt);
    return { role: "assistant", model: `model-${label}`, content: { type: "text", text: `${label} answers ${prompt}` } };
  });
  onRequest(client, "elicitation/create", async (req) => {
    front.elicited.push(req.params.message);
    return { action: "accept", content: { name: label, age: 7 } };
  });
  onRequest(client, "roots/list", async () => {
    front.rooted += 1;
    return { roots: [{ uri: ROOT, name: label }] };
  });
  if (schemas) onNotification(client, "notifications/tools/list_changed", async () => changed());
  let transport;
  if (args.url) {
    const headers = args.token ? { Authorization: `Bearer ${args.token}` } : {};
    transport = new StreamableHTTPClientTransport(new URL(args.url), { requestInit: { headers } });
  } else {
    const words = args.stdio.split(" ").filter(Boolean);
    transport = new StdioClientTransport({ command: words[0], args: words.slice(1), stderr: "inherit" });
  }
  await bounded(client.connect(transport), "connect");
  return client;
}

// v1 takes (params, resultSchema, options), v2 (params, options).
const call = (c, name, a, opts = {}) => {
  const options = { timeout: WAIT_MS, ...opts };
  return bounded(schemas ? c.callTool({ name, arguments: a }, undefined, options) : c.callTool({ name, arguments: a }, options), name);
};

const wanted = new Set(args.scenarios.split(",").filter(Boolean));
const p = args.prefix;
const report = {};
const front = { sampled: [], elicited: [], rooted: 0, notified: [] };
const c = await open("A", front);
try {
  if (wanted.has("tools")) {
    const listing = await bounded(c.listTools(), "tools/list");
    report.tools = { names: listing.tools.map((t) => t.name).sort() };
  }
  if (wanted.has("call")) {
    const r = await call(c, p + "echo", { text: "hello through the gateway" });
    report.call = { text: textOf(r), is_error: !!r.isError };
  }
  if (wanted.has("sampling")) {
    const r = await call(c, p + "sample", { prompt: "two plus two", max_tokens: 5 });
    report.sampling = { text: textOf(r), is_error: !!r.isError, asked: front.sampled };
  }
  if (wanted.has("elicitation")) {
    const r = await call(c, p + "elicit", { message: "who are you?" });
    report.elicitation = { text: textOf(r), is_error: !!r.isError, asked: front.elicited };
  }
  if (wanted.has("roots")) {
    const r = await call(c, p + "roots", {});
    report.roots = { text: textOf(r), is_error: !!r.isError, asked: front.rooted };
  }
  if (wanted.has("progress")) {
    const seen = [];
    const r = await call(c, p + "slow", { ms: 300, steps: 3 }, { onprogress: (pr) => seen.push(pr.progress) });
    report.progress = { text: textOf(r), progress: seen };
  }
  if (wanted.has("cancel")) {
    // Abort after the first progress: the SDK sends notifications/cancelled
    // for its own request id; the gateway must cancel the server's request.
    const ac = new AbortController();
    const started = Date.now();
    let error = "";
    try {
      await call(c, p + "slow", { ms: 20000, steps: 200 }, { signal: ac.signal, onprogress: () => ac.abort("enough") });
    } catch (e) {
      error = String(e?.message ?? e);
    }
    const after = await call(c, p + "echo", { text: "after the cancel" });
    report.cancel = { error, aborted_ms: Date.now() - started, after: textOf(after) };
  }
  if (wanted.has("list_changed")) {
    front.notified.length = 0;
    await call(c, p + "notify", {});
    const deadline = Date.now() + WAIT_MS;
    while (!front.notified.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const listing = await bounded(c.listTools(), "tools/list");
    report.list_changed = { notified: front.notified, dynamic: listing.tools.map((t) => t.name).filter((n) => n.includes("dynamic_")).sort() };
  }
} finally {
  await c.close().catch(() => {});
}
process.stdout.write(JSON.stringify(report) + "\n");
process.exit(0);
