import http from "node:http";
import type { AddressInfo } from "node:net";

// A FAKE of a remote service: an OpenAI-compatible chat-completions server (what vLLM, llama.cpp's server, Ollama
// and hosted services speak), small enough to script per test. It speaks the real wire protocol, JSON answers and
// server-sent-event streams with `tool_calls` deltas, to the real `openai` client inside Builder. No LLM is reachable
// from the test machines, so this is the one stand-in the chat tests use.

export interface ChatRequest {
  body: any;
  headers: http.IncomingHttpHeaders;
}

/** One scripted answer: what to send back for the next request. */
export type Step =
  | { kind: "message"; content?: string; toolCalls?: Array<{ id: string; name: string; arguments: string }> }
  | { kind: "stream"; content?: string[]; toolCalls?: Array<{ id: string; name: string; argumentPieces: string[] }> }
  | { kind: "status"; status: number; body: unknown }
  | { kind: "hang"; ms: number }
  /** Streams these content pieces, then drops the connection mid-answer. */
  | { kind: "drop"; content: string[] }
  /** Streams these content pieces, then waits (the answer unfinished) until the client goes away or `ms` pass. */
  | { kind: "stall"; content: string[]; ms: number };

export interface FakeChatServer {
  url: string;
  requests: ChatRequest[];
  script(steps: Step[]): void;
  /** Resolves once the response to request n (of the current script) is closed, by either side. */
  closed(n: number): Promise<void>;
  close(): Promise<void>;
}

const base = { id: "chatcmpl-fake", created: 1_700_000_000, model: "fake-model" };

function chunk(delta: unknown, finish: string | null = null) {
  return `data: ${JSON.stringify({ ...base, object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }] })}\n\n`;
}

async function reply(step: Step, res: http.ServerResponse): Promise<void> {
  switch (step.kind) {
    case "status":
      res.writeHead(step.status, { "content-type": "application/json" }).end(JSON.stringify(step.body));
      return;
    case "hang":
      await new Promise((r) => setTimeout(r, step.ms));
      if (!res.destroyed) res.writeHead(200, { "content-type": "application/json" }).end("{}");
      return;
    case "drop":
      res.writeHead(200, { "content-type": "text/event-stream" });
      for (const piece of step.content) res.write(chunk({ content: piece }));
      await new Promise((r) => setTimeout(r, 50));
      res.socket?.destroy();
      return;
    case "stall": {
      res.writeHead(200, { "content-type": "text/event-stream" });
      for (const piece of step.content) res.write(chunk({ content: piece }));
      await new Promise<void>((r) => {
        const timer = setTimeout(r, step.ms);
        res.on("close", () => (clearTimeout(timer), r()));
      });
      if (!res.destroyed) res.end(chunk({ content: " (never seen)" }, "stop") + "data: [DONE]\n\n");
      return;
    }
    case "message": {
      const tool_calls = step.toolCalls?.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: c.arguments } }));
      const message = { role: "assistant", content: step.content ?? null, ...(tool_calls ? { tool_calls } : {}), refusal: null };
      res.writeHead(200, { "content-type": "application/json" }).end(
        JSON.stringify({
          ...base,
          object: "chat.completion",
          choices: [{ index: 0, message, finish_reason: tool_calls ? "tool_calls" : "stop", logprobs: null }],
          usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
        }),
      );
      return;
    }
    case "stream": {
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      res.write(chunk({ role: "assistant", content: "" }));
      for (const piece of step.content ?? []) res.write(chunk({ content: piece }));
      (step.toolCalls ?? []).forEach((c, index) => {
        res.write(chunk({ tool_calls: [{ index, id: c.id, type: "function", function: { name: c.name, arguments: "" } }] }));
        for (const piece of c.argumentPieces) res.write(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
      });
      res.write(chunk({}, step.toolCalls?.length ? "tool_calls" : "stop"));
      res.end("data: [DONE]\n\n");
      return;
    }
  }
}

export async function startFakeChatServer(): Promise<FakeChatServer> {
  let steps: Step[] = [];
  const requests: ChatRequest[] = [];
  let closes: Array<Promise<void>> = [];
  const server = http.createServer(async (req, res) => {
    let raw = "";
    for await (const c of req) raw += c;
    if (req.method !== "POST" || req.url !== "/v1/chat/completions") {
      res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: "not found" } }));
      return;
    }
    requests.push({ body: JSON.parse(raw), headers: req.headers });
    closes.push(new Promise((r) => res.on("close", () => r())));
    const step = steps.shift();
    if (!step) {
      res
        .writeHead(500, { "content-type": "application/json" })
        .end(JSON.stringify({ error: { message: "fake: no scripted answer left" } }));
      return;
    }
    await reply(step, res);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    script: (s) => {
      steps = [...s];
      requests.length = 0;
      closes = [];
    },
    closed: async (n) => {
      while (!closes[n]) await new Promise((r) => setTimeout(r, 10));
      await closes[n];
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
