// A minimal OpenAI-compatible chat server over node-llama-cpp, so the tests of
// vg-query --answer can talk to a real (tiny) local model instead of a mock.
// Started by scripts/llm-server.sh; not meant for anything but tests.
//
// usage: node server.mjs --model FILE.gguf --port-file FILE [--host H] [--port N]
//          [--threads N] [--context-size N] [--model-id NAME]
//   Loads the model, listens (port 0 = any free one), then writes the port to
//   --port-file: the file appearing means the server is ready.
//
// Endpoints: GET /v1/models, POST /v1/chat/completions (model, messages,
// max_tokens, temperature, top_p, seed, stop, stream). Requests run one at a
// time on a single context sequence that is cleared before each, so a request
// with temperature 0 always gets the same answer.
import http from "node:http";
import fs from "node:fs";
import path from "node:path";
import { getLlama, LlamaChat, resolveChatWrapper } from "node-llama-cpp";

const args = Object.fromEntries(
  process.argv.slice(2).reduce((acc, a, i, all) => (a.startsWith("--") ? [...acc, [a.slice(2), all[i + 1]]] : acc), []),
);
if (!args.model || !args["port-file"]) {
  console.error("usage: node server.mjs --model FILE.gguf --port-file FILE [--host H] [--port N]");
  process.exit(2);
}
const host = args.host ?? "127.0.0.1";
const modelId = args["model-id"] ?? path.basename(args.model).replace(/\.gguf$/i, "");
const contextSize = Number(args["context-size"] ?? 8192);
// One thread by default: llama.cpp's threads spin-wait on each other, and on a
// 2-core machine that is also compiling, 2 threads ran ~100x slower than 1.
const threads = Number(args.threads ?? 1);

// build: "never" — use only the prebuilt binary that npm installed; never try
// to download or compile llama.cpp (there is no internet here beyond registries).
const llama = await getLlama({ gpu: false, build: "never", usePrebuiltBinaries: true, progressLogs: false, logLevel: "warn" });
const model = await llama.loadModel({ modelPath: args.model });
const context = await model.createContext({ contextSize, sequences: 1, threads });
const sequence = context.getSequence();
// The chat template shipped in the GGUF, as llama.cpp's own server uses it
// (for SmolLM2 it adds its default system prompt when a request has none).
const chatWrapper = resolveChatWrapper(model, { type: "jinjaTemplate" });
console.error(`chat wrapper: ${chatWrapper.wrapperName}`);

const toHistory = (messages) => {
  if (!Array.isArray(messages) || messages.length === 0) throw new Error("'messages' must be a non-empty array");
  const history = messages.map((m) => {
    const text = Array.isArray(m?.content)
      ? m.content.filter((p) => p?.type === "text").map((p) => p.text).join("")
      : String(m?.content ?? "");
    if (m?.role === "system" || m?.role === "developer") return { type: "system", text };
    if (m?.role === "user") return { type: "user", text };
    if (m?.role === "assistant") return { type: "model", response: [text] };
    throw new Error(`unsupported message role '${m?.role}'`);
  });
  history.push({ type: "model", response: [] }); // the turn to generate
  return history;
};

// One request at a time: a single sequence, so requests queue up here.
let queue = Promise.resolve();
const serialized = (fn) => {
  const run = queue.then(fn, fn);
  queue = run.catch(() => {});
  return run;
};

async function complete(req, onText) {
  const history = toHistory(req.messages);
  const stop = req.stop == null ? undefined : [].concat(req.stop).map(String);
  return serialized(async () => {
    await sequence.clearHistory(); // no reuse of the last prompt: same input, same output
    const chat = new LlamaChat({ contextSequence: sequence, chatWrapper, autoDisposeSequence: false });
    let completionTokens = 0;
    try {
      const res = await chat.generateResponse(history, {
        maxTokens: req.max_tokens ?? req.max_completion_tokens ?? 256,
        temperature: req.temperature ?? 0.7,
        topP: req.top_p,
        seed: req.seed,
        customStopTriggers: stop,
        onToken: (tokens) => { completionTokens += tokens.length; },
        onTextChunk: onText,
      });
      const total = sequence.nextTokenIndex;
      return {
        text: res.response,
        finish: res.metadata.stopReason === "maxTokens" ? "length" : "stop",
        usage: { prompt_tokens: Math.max(0, total - completionTokens), completion_tokens: completionTokens, total_tokens: total },
      };
    } finally {
      chat.dispose({ disposeSequence: false });
    }
  });
}

const send = (res, status, body) => {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
};
const fail = (res, status, message, type = "invalid_request_error") => send(res, status, { error: { message, type } });

const server = http.createServer(async (req, res) => {
  const url = new URL(req.url, "http://x");
  if (req.method === "GET" && url.pathname === "/v1/models") {
    return send(res, 200, { object: "list", data: [{ id: modelId, object: "model", created: 0, owned_by: "local" }] });
  }
  if (url.pathname !== "/v1/chat/completions") return fail(res, 404, `no route for ${req.method} ${url.pathname}`);
  if (req.method !== "POST") return fail(res, 405, "use POST");
  let body;
  try {
    let raw = "";
    for await (const chunk of req) raw += chunk;
    body = JSON.parse(raw);
  } catch {
    return fail(res, 400, "request body is not valid JSON");
  }
  const id = `chatcmpl-${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;
  const created = Math.floor(Date.now() / 1000);
  const base = { id, object: "chat.completion", created, model: modelId };
  try {
    if (body.stream) {
      // Server-sent events, as OpenAI streams them.
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      const event = (delta, finish_reason = null) =>
        res.write(`data: ${JSON.stringify({ ...base, object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason }] })}\n\n`);
      event({ role: "assistant", content: "" });
      const out = await complete(body, (text) => text && event({ content: text }));
      event({}, out.finish);
      res.end("data: [DONE]\n\n");
    } else {
      const out = await complete(body);
      send(res, 200, {
        ...base,
        choices: [{ index: 0, message: { role: "assistant", content: out.text }, finish_reason: out.finish }],
        usage: out.usage,
      });
    }
  } catch (err) {
    if (res.headersSent) return res.end();
    const bad = /messages|role/.test(String(err?.message));
    fail(res, bad ? 400 : 500, String(err?.message ?? err), bad ? "invalid_request_error" : "server_error");
  }
});

server.listen(Number(args.port ?? 0), host, () => {
  const { port } = server.address();
  // Write then rename, so a reader never sees a half-written file.
  fs.writeFileSync(`${args["port-file"]}.tmp`, `${port}\n`);
  fs.renameSync(`${args["port-file"]}.tmp`, args["port-file"]);
  console.error(`llm server: ${modelId} on http://${host}:${port}/v1`);
});
// Stop at once, even mid-generation: a test that stops the server is done with it.
process.on("SIGTERM", () => process.exit(0));
process.on("SIGINT", () => process.exit(0));
