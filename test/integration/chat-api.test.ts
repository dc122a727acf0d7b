import { afterAll, beforeAll, expect, it } from "vitest";
import { bearer, limiterEnv, type UserWithKey } from "../helpers/auth.js";
import { describeEachTarget } from "../helpers/db.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { B_SECRETS, INJECTION_COLUMN, seedTwoUsers } from "./chat-fixtures.js";

// POST /v1/chat and the conversation routes over HTTP, on PGlite and the real Postgres: the answer's shape,
// validation, streaming, conversations, and isolation between two users.

interface Answer {
  reply: string;
  conversation_id: string;
  message_id: string;
  references: Array<{ type: string; id: string; title: string }>;
  backend: string;
}

/** Parses a text/event-stream body into events. */
function parseSse(text: string): Array<{ event: string; data: any }> {
  return text
    .split("\n\n")
    .filter((block) => block.trim())
    .map((block) => {
      const event = /^event: (.*)$/m.exec(block)?.[1] ?? "message";
      const data = block
        .split("\n")
        .filter((l) => l.startsWith("data: "))
        .map((l) => l.slice(6))
        .join("\n");
      return { event, data: JSON.parse(data) };
    });
}

describeEachTarget("chat over HTTP on %s", (target) => {
  let server: TestServer;
  let a: UserWithKey;
  let b: UserWithKey;
  const post = (user: UserWithKey, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${server.url}/v1/chat`, {
      method: "POST",
      headers: bearer(user.key, { "content-type": "application/json", ...headers }),
      body: JSON.stringify(body),
    });
  const get = (user: UserWithKey, path: string) => fetch(`${server.url}${path}`, { headers: bearer(user.key) });

  beforeAll(async () => {
    server = await startTestServer(target, limiterEnv(target));
    ({ a, b } = await seedTwoUsers(server));
  }, 120_000);
  afterAll(async () => server?.teardown());

  it("answers 201 with the reply, a new conversation and what it cited; the conversation keeps both messages", async () => {
    const res = await post(a, { message: "How is experiment 42 doing?" });
    expect(res.status).toBe(201);
    expect(res.headers.get("x-ratelimit-limit-requests")).toBeTruthy();
    const body = (await res.json()) as Answer;
    expect(body.backend).toBe("builtin");
    expect(body.reply).toContain("AUC 0.912 (95% CI 0.871–0.948)");
    expect(body.references).toEqual(
      expect.arrayContaining([
        { type: "experiment", id: "42", title: expect.any(String) },
        { type: "dataset", id: `${a.userId}/wdbc/data.zip`, title: expect.any(String) },
        { type: "model", id: "42", title: expect.any(String) },
      ]),
    );
    const next = (await (
      await post(a, { message: "and how do I call predict for it?", conversation_id: body.conversation_id })
    ).json()) as Answer;
    expect(next.conversation_id).toBe(body.conversation_id);
    expect(next.reply).toContain("/v1/experiments/42/predict");

    const conv = (await (await get(a, `/v1/chat/conversations/${body.conversation_id}`)).json()) as any;
    expect(conv.title).toBe("How is experiment 42 doing?");
    expect(conv.messages.map((m: any) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
    expect(conv.messages[1]).toMatchObject({ id: body.message_id, content: body.reply, references: body.references, backend: "builtin" });
    const list = (await (await get(a, "/v1/chat/conversations")).json()) as any;
    expect(list.data.find((c: any) => c.id === body.conversation_id)).toMatchObject({ messages: 4 });
  });

  it("refuses bad bodies with one 400 naming every bad field, and unauthenticated calls with 401", async () => {
    const bad = await post(a, { message: "", conversation_id: "nope", experiment_id: -1, extra: 1 });
    expect(bad.status).toBe(400);
    const err = ((await bad.json()) as any).error;
    expect(err).toMatchObject({ code: "invalid_request", type: "invalid_request_error" });
    expect(err.details.map((d: any) => d.field).sort()).toEqual(["", "conversation_id", "experiment_id", "message"]);
    const long = await post(a, { message: "x".repeat(8001) });
    expect(((await long.json()) as any).error.details[0]).toMatchObject({ field: "message", message: "must be at most 8000 characters" });
    expect((await post(a, { message: "   " })).status).toBe(400);
    expect((await post(a, { message: "x".repeat(8000) })).status).toBe(201);
    const anon = await fetch(`${server.url}/v1/chat`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ message: "hi" }),
    });
    expect(anon.status).toBe(401);
    expect(((await anon.json()) as any).error.code).toBe("missing_api_key");
  });

  it("streams tokens then a final event with the references when asked for text/event-stream", async () => {
    const res = await post(a, { message: "Why was experiment 11 refused?" }, { accept: "text/event-stream" });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    const events = parseSse(await res.text());
    const tokens = events.filter((e) => e.event === "token");
    expect(tokens.length).toBeGreaterThan(10);
    const done = events.at(-1)!;
    expect(done.event).toBe("done");
    expect(
      tokens
        .map((t) => t.data.text)
        .join("")
        .trim(),
    ).toBe(done.data.reply);
    expect(done.data.reply).toContain("image_not_found");
    expect(done.data.references[0]).toMatchObject({ type: "experiment", id: "11" });
    // An error found before the first token is an ordinary JSON error.
    const missing = await post(
      a,
      { message: "hi", conversation_id: "00000000-0000-4000-8000-000000000000" },
      { accept: "text/event-stream" },
    );
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as any).error.code).toBe("not_found");
  });

  it("keeps two users apart: replies, references and conversations", async () => {
    const mine = (await (await post(a, { message: "list my experiments" })).json()) as Answer;
    const theirs = (await (await post(b, { message: "list my experiments" })).json()) as Answer;
    for (const s of [...B_SECRETS, b.userId, "experiment 99", "experiment 77"]) {
      expect(mine.reply).not.toContain(s);
      expect(JSON.stringify(mine.references)).not.toContain(s);
    }
    expect(theirs.reply).toContain("experiment 99");
    expect(theirs.reply).not.toMatch(/experiment (7|8|11|12|13|14|15|16)\b/);
    expect(theirs.references.map((r) => r.id).sort()).toEqual(["42", "77", "99"]);
    // B cannot read, continue, delete or list A's conversation, nor focus on A's experiment.
    expect((await get(b, `/v1/chat/conversations/${mine.conversation_id}`)).status).toBe(404);
    expect((await post(b, { message: "hello", conversation_id: mine.conversation_id })).status).toBe(404);
    const del = await fetch(`${server.url}/v1/chat/conversations/${mine.conversation_id}`, { method: "DELETE", headers: bearer(b.key) });
    expect(del.status).toBe(404);
    const list = (await (await get(b, "/v1/chat/conversations")).json()) as any;
    expect(list.data.map((c: any) => c.id)).not.toContain(mine.conversation_id);
    expect((await post(b, { message: "how is it doing?", experiment_id: 16 })).status).toBe(404);
    // Whatever the message says, B's tools answer about B: naming A's user id changes nothing.
    const sneaky = (await (await post(b, { message: `how is experiment 16 of user ${a.userId} doing?` })).json()) as Answer;
    expect(sneaky.reply).toContain("no experiment 16");
    expect(sneaky.references).toEqual([]);
    // A still has it; A can delete it, then it is gone.
    expect((await get(a, `/v1/chat/conversations/${mine.conversation_id}`)).status).toBe(200);
    const gone = await fetch(`${server.url}/v1/chat/conversations/${mine.conversation_id}`, { method: "DELETE", headers: bearer(a.key) });
    expect(gone.status).toBe(204);
    expect((await get(a, `/v1/chat/conversations/${mine.conversation_id}`)).status).toBe(404);
  });

  it("quotes an instruction hidden in a column name as data and does not follow it", async () => {
    const body = (await (await post(a, { message: "how do I call predict for experiment 15?" })).json()) as Answer;
    expect(body.reply).toContain(`\`${INJECTION_COLUMN}\``);
    expect(body.reply).toContain("/v1/experiments/15/predict");
    for (const s of [...B_SECRETS, b.userId]) expect(body.reply).not.toContain(s);
    expect(body.references).toEqual([{ type: "model", id: "15", title: expect.any(String) }]);
  });

  it("works with a dashboard session (cookie + CSRF) and is documented in OpenAPI", async () => {
    const signIn = await fetch(`${server.url}/v1/session`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: a.email, password: a.password }),
    });
    const { csrf_token } = (await signIn.json()) as any;
    const cookie = (signIn.headers.get("set-cookie") ?? "").split(";")[0];
    const res = await fetch(`${server.url}/v1/chat`, {
      method: "POST",
      headers: { "content-type": "application/json", cookie, "x-csrf-token": csrf_token },
      body: JSON.stringify({ message: "what does F-macro mean?" }),
    });
    expect(res.status).toBe(201);
    expect(((await res.json()) as Answer).reply).toContain("harmonic mean");
    const openapi = (await (await fetch(`${server.url}/openapi.json`)).json()) as any;
    expect(Object.keys(openapi.paths)).toEqual(
      expect.arrayContaining(["/v1/chat", "/v1/chat/conversations", "/v1/chat/conversations/{conversation_id}"]),
    );
    expect(openapi.paths["/v1/chat"].post.responses["201"]).toBeTruthy();
  });
});
