// A fake OpenAI-compatible Chat Completions provider for the end-to-end suite and the
// benchmark. It speaks the real wire protocol over real HTTP on 127.0.0.1: `POST
// /v1/chat/completions` answered with server-sent events (`data: {chunk}\n\n` … `data:
// [DONE]\n\n`), tool-call arguments split across chunks. Replies are scripted, one per
// request, in order; every request body is recorded, and the moment each tool call's last
// chunk was written (for the benchmark).
import http from "node:http";

const chunk = (delta, finish = null) =>
  JSON.stringify({
    id: "chatcmpl-e2e",
    object: "chat.completion.chunk",
    created: 0,
    model: "fake",
    choices: [{ index: 0, delta, finish_reason: finish }],
  });

/** A streamed text answer. */
export function textReply(text) {
  const half = Math.ceil(text.length / 2);
  return [
    chunk({ role: "assistant", content: "" }),
    chunk({ content: text.slice(0, half) }),
    chunk({ content: text.slice(half) }),
    chunk({}, "stop"),
  ];
}

/** A streamed message calling `name` with `args`, the argument text in three pieces. */
export function toolCallReply(id, name, args, text = null) {
  const out = [chunk({ role: "assistant", content: null })];
  if (text) out.push(chunk({ content: text }));
  out.push(chunk({ tool_calls: [{ index: 0, id, type: "function", function: { name, arguments: "" } }] }));
  const raw = JSON.stringify(args);
  const third = Math.ceil(raw.length / 3);
  for (let i = 0; i < raw.length; i += third) {
    out.push(chunk({ tool_calls: [{ index: 0, function: { arguments: raw.slice(i, i + third) } }] }));
  }
  out.push(chunk({}, "tool_calls"));
  return out;
}

/**
 * Starts the server. `replies` is an array of chunk arrays (see above); a request with no
 * reply left gets a 400 saying so. Returns { baseUrl, requests, toolCallSentAt, push, close,
 * waitForRequests(n) }.
 */
export async function startFakeLlm(replies = []) {
  const queue = [...replies];
  const requests = [];
  const toolCallSentAt = [];
  const waiters = [];
  const server = http.createServer((req, res) => {
    if (req.method !== "POST" || req.url !== "/v1/chat/completions") {
      res.writeHead(404, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: `no route ${req.method} ${req.url}` } }));
      return;
    }
    let body = "";
    req.on("data", (d) => (body += d));
    req.on("end", () => {
      requests.push(JSON.parse(body));
      waiters.splice(0).forEach((w) => w());
      const reply = queue.shift();
      if (!reply) {
        res.writeHead(400, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { message: "the fake provider has no scripted reply left", type: "invalid_request_error" } }));
        return;
      }
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
      const hasToolCall = reply.some((c) => c.includes('"tool_calls"'));
      for (const c of reply) res.write(`data: ${c}\n\n`);
      if (hasToolCall) toolCallSentAt.push(Date.now());
      res.end("data: [DONE]\n\n");
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    toolCallSentAt,
    push: (reply) => queue.push(reply),
    /** Resolves once `n` requests have arrived (a condition, not a sleep). */
    waitForRequests: (n) =>
      new Promise((resolve) => {
        const check = () => (requests.length >= n ? resolve() : waiters.push(check));
        check();
      }),
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}
