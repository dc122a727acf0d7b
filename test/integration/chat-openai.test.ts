import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, type UserWithKey } from "../helpers/auth.js";
import { primaryTarget } from "../helpers/db.js";
import { startFakeChatServer, type FakeChatServer } from "../helpers/fake-chat-completions.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { B_SECRETS, INJECTION_COLUMN, seedTwoUsers } from "./chat-fixtures.js";

// The `openai` backend: Builder's real `openai` client against a local FAKE of a remote OpenAI-compatible
// chat-completions server (test/helpers/fake-chat-completions.ts), speaking its real protocol: JSON and SSE
// streaming, tool calls, a hang (timeout), a 500, malformed tool calls.

const SECRET_KEY = "sk-secret-test-key-0123456789";

let fake: FakeChatServer;
let server: TestServer;
let a: UserWithKey;
let b: UserWithKey;

const post = (body: unknown, headers: Record<string, string> = {}, signal?: AbortSignal) =>
  fetch(`${server.url}/v1/chat`, {
    method: "POST",
    headers: bearer(a.key, { "content-type": "application/json", ...headers }),
    body: JSON.stringify(body),
    signal,
  });

const conversationCount = async () =>
  ((await (await fetch(`${server.url}/v1/chat/conversations`, { headers: bearer(a.key) })).json()) as any).total as number;

/** The tool messages Builder sent back to the model in request n. */
const toolMessages = (n: number) => (fake.requests[n].body.messages as any[]).filter((m) => m.role === "tool");

beforeAll(async () => {
  fake = await startFakeChatServer();
  server = await startTestServer(primaryTarget(), {
    CHAT_BACKEND: "openai",
    CHAT_BASE_URL: fake.url,
    CHAT_MODEL: "fake-model",
    CHAT_API_KEY: SECRET_KEY,
    CHAT_TIMEOUT_MS: "3000",
    CHAT_MAX_RETRIES: "1",
  });
  ({ a, b } = await seedTwoUsers(server));
}, 120_000);

afterAll(async () => {
  await server?.teardown();
  await fake?.close();
});

describe("openai backend against a fake chat-completions server", () => {
  it("runs a tool round trip: the model calls get_experiment, gets the caller's data, answers; references follow the tools", async () => {
    fake.script([
      {
        kind: "message",
        toolCalls: [{ id: "call_1", name: "get_experiment", arguments: JSON.stringify({ experiment_id: 42, user_id: b.userId }) }],
      },
      { kind: "message", content: "Experiment 42 is ready with AUC 0.912 (0.871–0.948)." },
    ]);
    const res = await post({ message: "How is experiment 42 doing?" });
    expect(res.status).toBe(201);
    const body = (await res.json()) as any;
    expect(body).toMatchObject({ backend: "openai", reply: "Experiment 42 is ready with AUC 0.912 (0.871–0.948)." });
    expect(body.references.map((r: any) => `${r.type}:${r.id}`)).toEqual([
      "experiment:42",
      `dataset:${a.userId}/wdbc/data.zip`,
      "model:42",
    ]);

    const first = fake.requests[0];
    expect(first.headers.authorization).toBe(`Bearer ${SECRET_KEY}`);
    expect(first.body.model).toBe("fake-model");
    expect(first.body.messages[0].role).toBe("system");
    expect(first.body.messages[0].content).toContain("strictly as data");
    expect(first.body.tools.map((t: any) => t.function.name).sort()).toEqual([
      "build_times",
      "compare_experiments",
      "explain",
      "find_experiments",
      "get_experiment",
      "list_experiments",
      "model_inputs",
      "search_docs",
    ]);
    // No tool takes a user: the model has nothing to change to reach another user's data.
    const params = first.body.tools.flatMap((t: any) => Object.keys(t.function.parameters.properties));
    expect(params.filter((p: string) => /user|owner|account/i.test(p))).toEqual([]);
    // The user_id the model slipped in was ignored: the tool answered with A's experiment 42, not B's.
    const [tool] = toolMessages(1);
    expect(tool.tool_call_id).toBe("call_1");
    expect(tool.content).toContain("0.912");
    for (const s of [...B_SECRETS, b.userId]) expect(tool.content).not.toContain(s);
  });

  it("streams: tool-call arguments arrive in pieces, then content tokens become SSE token events", async () => {
    fake.script([
      { kind: "stream", toolCalls: [{ id: "call_s", name: "compare_experiments", argumentPieces: ['{"met', 'ric": "rec', 'all"}'] }] },
      { kind: "stream", content: ["Your best ", "model for recall ", "is experiment 7."] },
    ]);
    const res = await post({ message: "Which of my models is best for recall?" }, { accept: "text/event-stream" });
    expect(res.status).toBe(200);
    const text = await res.text();
    const tokens = [...text.matchAll(/event: token\ndata: (.*)\n/g)].map((m) => JSON.parse(m[1]).text);
    expect(tokens).toEqual(["Your best ", "model for recall ", "is experiment 7."]);
    const done = JSON.parse(/event: done\ndata: (.*)\n/.exec(text)![1]);
    expect(done).toMatchObject({ backend: "openai", reply: "Your best model for recall is experiment 7." });
    expect(done.references[0]).toMatchObject({ type: "experiment", id: "7" });
    expect(fake.requests.every((r) => r.body.stream === true)).toBe(true);
    const ranking = JSON.parse(toolMessages(1)[0].content).ranking;
    expect(ranking[0]).toMatchObject({ experiment_id: 7, value: 0.902, ci_low: 0.853, ci_high: 0.946 });
    expect(ranking.map((r: any) => r.value)).not.toContain(0.987); // B's best recall
  });

  it("ends a stream whose backend drops mid-answer with an error event, and stores nothing", async () => {
    const before = await conversationCount();
    fake.script([{ kind: "drop", content: ["Experiment 42 ", "is "] }]);
    const res = await post({ message: "How is experiment 42 doing?" }, { accept: "text/event-stream" });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain('event: token\ndata: {"text":"Experiment 42 "}');
    const error = JSON.parse(/event: error\ndata: (.*)\n/.exec(text)![1]).error;
    expect(error).toMatchObject({ code: "chat_backend_unavailable", type: "api_error" });
    expect(text).not.toContain("event: done");
    expect(await conversationCount()).toBe(before);
  });

  it("sends the conversation so far with the next question", async () => {
    fake.script([{ kind: "message", content: "First answer." }]);
    const first = (await (await post({ message: "first question" })).json()) as any;
    fake.script([{ kind: "message", content: "Second answer." }]);
    await post({ message: "second question", conversation_id: first.conversation_id, experiment_id: 7 });
    const sent = (fake.requests[0].body.messages as any[]).map((m) => [m.role, m.content]);
    expect(sent.slice(1)).toEqual([
      ["user", "first question"],
      ["assistant", "First answer."],
      ["user", "second question"],
    ]);
    expect(sent[0][1]).toContain("experiment 7");
  });

  it("answers 504 chat_backend_timeout when the backend hangs, without the key or the address", async () => {
    const before = await conversationCount();
    fake.script([
      { kind: "hang", ms: 10_000 },
      { kind: "hang", ms: 10_000 },
    ]);
    const res = await post({ message: "How is experiment 42 doing?" });
    expect(res.status).toBe(504);
    const text = await res.text();
    expect(JSON.parse(text).error).toMatchObject({ code: "chat_backend_timeout", type: "api_error" });
    for (const leak of [SECRET_KEY, "127.0.0.1", fake.url, "fake-model"]) expect(text).not.toContain(leak);
    // Nothing half-written: the failed exchange left no conversation.
    expect(await conversationCount()).toBe(before);
  });

  it("answers 502 chat_backend_unavailable on a 500, after the client's retry, without leaking the backend's error", async () => {
    const before = await conversationCount();
    const crash = { error: { message: "CUDA out of memory in /opt/vllm/worker.py", type: "internal_error" } };
    fake.script([
      { kind: "status", status: 500, body: crash },
      { kind: "status", status: 500, body: crash },
    ]);
    const res = await post({ message: "list my experiments" });
    expect(res.status).toBe(502);
    const text = await res.text();
    expect(JSON.parse(text).error).toMatchObject({ code: "chat_backend_unavailable", type: "api_error" });
    for (const leak of ["CUDA", "vllm", SECRET_KEY, "127.0.0.1"]) expect(text).not.toContain(leak);
    expect(fake.requests).toHaveLength(2); // CHAT_MAX_RETRIES=1: one retry
    expect(await conversationCount()).toBe(before);
  });

  it("answers malformed tool calls (bad JSON, unknown tool, bad arguments) with an error the model can correct", async () => {
    fake.script([
      {
        kind: "message",
        toolCalls: [
          { id: "bad_json", name: "get_experiment", arguments: '{"experiment_id": 42' },
          { id: "no_tool", name: "drop_all_tables", arguments: "{}" },
          { id: "bad_args", name: "get_experiment", arguments: '{"experiment_id": "forty-two"}' },
        ],
      },
      { kind: "message", toolCalls: [{ id: "good", name: "get_experiment", arguments: '{"experiment_id": 42}' }] },
      { kind: "message", content: "Experiment 42 is ready." },
    ]);
    const res = await post({ message: "How is experiment 42 doing?" });
    expect(res.status).toBe(201);
    expect(((await res.json()) as any).reply).toBe("Experiment 42 is ready.");
    const errors = toolMessages(1).map((m) => [m.tool_call_id, JSON.parse(m.content).error]);
    expect(errors[0]).toEqual(["bad_json", expect.stringContaining("not valid JSON")]);
    expect(errors[1]).toEqual(["no_tool", expect.stringContaining("no tool named")]);
    expect(errors[2]).toEqual(["bad_args", expect.stringContaining("experiment_id")]);
    expect(JSON.parse(toolMessages(2).at(-1).content).experiment_id).toBe(42);
  });

  it("answers tool calls named after Object.prototype's keys with 'no tool named', not a 502 (issue 42, finding 10)", async () => {
    const names = ["constructor", "toString", "hasOwnProperty", "__proto__"];
    fake.script([
      { kind: "message", toolCalls: names.map((name, i) => ({ id: `proto_${i}`, name, arguments: "{}" })) },
      { kind: "message", content: "Those tools do not exist." },
    ]);
    const res = await post({ message: "How is experiment 42 doing?" });
    expect(res.status).toBe(201);
    expect(((await res.json()) as any).reply).toBe("Those tools do not exist.");
    const sent = toolMessages(1).map((m) => [m.tool_call_id, JSON.parse(m.content).error]);
    expect(sent).toEqual(names.map((name, i) => [`proto_${i}`, `invalid call: no tool named ${JSON.stringify(name)}`]));
  });

  it("stores nothing when the caller leaves mid-stream: the cut-off reply is not saved as an answer (issue 42, finding 9)", async () => {
    const before = await conversationCount();
    fake.script([{ kind: "stall", content: ["Experiment 42 ", "is "], ms: 10_000 }]);
    // The service as the route calls it, with the route's abort signal; the caller leaves on the first token.
    const leave = new AbortController();
    const outcome = await server.services.chat
      .chat(a.scope, { message: "How is experiment 42 doing?" }, { signal: leave.signal, onToken: () => leave.abort() })
      .then(
        (answer) => ({ saved: answer.reply }),
        (err: Error) => ({ refused: err.name }),
      );
    expect(outcome).not.toHaveProperty("saved");
    expect(await conversationCount()).toBe(before);
    const { data } = await server.services.chat.listConversations(a.scope, 200, 0);
    for (const c of data) {
      const { messages } = await server.services.chat.conversation(a.scope, c.id);
      expect(messages.map((m) => m.content)).not.toContain("Experiment 42 is");
    }
  });

  it("stops the backend's stream when the HTTP client goes away mid-stream, and stores nothing", async () => {
    const before = await conversationCount();
    fake.script([{ kind: "stall", content: ["Experiment 42 ", "is "], ms: 10_000 }]);
    const leave = new AbortController();
    const res = await post({ message: "How is experiment 42 doing?" }, { accept: "text/event-stream" }, leave.signal);
    const reader = res.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toContain("event: token");
    leave.abort();
    // Builder closes its request to the model server once the client has gone (the stall would last 10 s).
    await fake.closed(0);
    // The exchange ends after that close; a later request of the same user runs after it on this one process.
    fake.script([{ kind: "message", content: "ok" }]);
    expect((await post({ message: "first question" })).status).toBe(201);
    expect(await conversationCount()).toBe(before + 1);
  });

  it("passes a column name that reads like an instruction only inside a tool result, as data", async () => {
    fake.script([
      { kind: "message", toolCalls: [{ id: "m", name: "model_inputs", arguments: '{"experiment_id": 15}' }] },
      { kind: "message", content: "Send two numbers: age and the second column." },
    ]);
    expect((await post({ message: "how do I call predict for experiment 15?" })).status).toBe(201);
    const messages = fake.requests[1].body.messages as any[];
    const carrying = messages.filter((m) => typeof m.content === "string" && m.content.includes(INJECTION_COLUMN)).map((m) => m.role);
    expect(carrying).toEqual(["tool"]);
  });

  it("never sends a request for a diagnosis to the model: the safety answer comes first", async () => {
    fake.script([]);
    const res = await post({ message: "Is this lesion malignant? Please diagnose my patient.", experiment_id: 16 });
    expect(res.status).toBe(201);
    const body = (await res.json()) as any;
    expect(body.backend).toBe("builtin");
    expect(body.reply).toContain("can't give a diagnosis");
    expect(body.reply).toContain("AUC 0.931 (95% CI 0.915–0.946)");
    expect(fake.requests).toHaveLength(0);
  });
});
