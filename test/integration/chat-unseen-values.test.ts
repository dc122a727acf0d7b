import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { bearer, createUserWithKey, type UserWithKey } from "../helpers/auth.js";
import { primaryTarget } from "../helpers/db.js";
import { startFakeChatServer, type FakeChatServer } from "../helpers/fake-chat-completions.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { makeZip } from "../helpers/zips.js";
import { api, dataRequest, diagnosisRows, waitForStatus, type Api } from "./experiments-fixtures.js";

// Issue 42, finding 4: a Retrospective study whose categorical column holds patients' names (new data coded
// differently from training) failed with a reason quoting five of them, and the chat repeated that reason; the
// `openai` backend sent it to the model server, which may be hosted outside the hospital. Through the real Python
// pipeline and the real chat tools, against a FAKE of an OpenAI-compatible server (test/helpers/fake-chat-completions.ts,
// no LLM is reachable here): what the model server receives names the column and the count, never a value.

vi.setConfig({ testTimeout: 180_000 });

const NAME = "Richard Roe";

let fake: FakeChatServer;
let server: TestServer;
let user: UserWithKey;
let client: Api;

beforeAll(async () => {
  fake = await startFakeChatServer();
  server = await startTestServer(primaryTarget(), {
    CHAT_BACKEND: "openai",
    CHAT_BASE_URL: fake.url,
    CHAT_MODEL: "fake-model",
    CHAT_TIMEOUT_MS: "10000",
    CHAT_MAX_RETRIES: "0",
  });
  user = await createUserWithKey(server);
  client = api(server.url, user.key);
  const sites = ["north", "south", "east"];
  const train = diagnosisRows(240, 11, { name: "site", value: (i) => sites[i % 3] });
  await server.services.bucket.write(`${user.userId}/sites/train.zip`, Readable.from(makeZip({ "data.csv": train.join("\n") + "\n" })));
  expect(
    (await client.post("/v1/experiments", dataRequest(user.userId, 1, `${user.userId}/sites/train.zip`, ["f1", "f2", "site"]))).status,
  ).toBe(202);
  expect((await waitForStatus(client, 1, ["ready", "failed", "invalid_dataset"], 150_000)).status).toBe("ready");
  // The new data: the site column holds names, one per patient.
  const next = diagnosisRows(60, 23, { name: "site", value: (i) => `${NAME}-${i}` });
  await server.services.bucket.write(`${user.userId}/sites/new.zip`, Readable.from(makeZip({ "data.csv": next.join("\n") + "\n" })));
  const retro = dataRequest(user.userId, 2, `${user.userId}/sites/new.zip`, ["f1", "f2", "site"], {
    study_type: "Retrospective",
    source_experiment_id: 1,
  });
  expect((await client.post("/v1/experiments", retro)).status).toBe(202);
}, 300_000);

afterAll(async () => {
  await server?.teardown();
  await fake?.close();
});

describe("a Retrospective study refused for a column of names, through the chat", () => {
  it("fails naming the column and the count of rows, and no value", async () => {
    const done = await waitForStatus(client, 2, ["ready", "failed", "invalid_dataset"], 150_000);
    expect(done.status).not.toBe("ready");
    expect(done.failure_reason).toContain("column 'site': 60 of 60 rows hold values the model never saw in training");
    expect(JSON.stringify(done)).not.toContain(NAME);
  });

  it("sends the model server tool results that carry the column and the count, and no value", async () => {
    fake.script([
      {
        kind: "message",
        toolCalls: [
          { id: "l", name: "list_experiments", arguments: "{}" },
          { id: "g", name: "get_experiment", arguments: '{"experiment_id": 2}' },
        ],
      },
      { kind: "message", content: "Experiment 2 was refused." },
    ]);
    const res = await fetch(`${server.url}/v1/chat`, {
      method: "POST",
      headers: bearer(user.key, { "content-type": "application/json" }),
      body: JSON.stringify({ message: "why was experiment 2 refused?" }),
    });
    expect(res.status).toBe(201);
    const tools = (fake.requests[1].body.messages as Array<{ role: string; content: string }>)
      .filter((m) => m.role === "tool")
      .map((m) => m.content);
    expect(tools).toHaveLength(2);
    for (const content of tools) {
      expect(content).toContain("column 'site': 60 of 60 rows");
      expect(content).not.toContain(NAME);
    }
    // Nothing else the server was sent (system prompt, history, this question) carries a value either.
    for (const r of fake.requests) expect(JSON.stringify(r.body)).not.toContain(NAME);
  });
});
