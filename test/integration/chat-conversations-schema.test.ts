import { Ajv2020 } from "ajv/dist/2020.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, createUserWithKey, type UserWithKey } from "../helpers/auth.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

// The dashboard's chat panel reads its types from the OpenAPI document (web/src/api/openapi.d.ts), so the
// conversation routes' documented 200 bodies must be what the server sends: checked here against real bodies.

let server: TestServer;
let user: UserWithKey;

beforeAll(async () => {
  server = await startTestServer("pglite");
  user = await createUserWithKey(server);
}, 120_000);

afterAll(async () => {
  await server?.teardown();
});

describe("chat conversation routes: documented bodies", () => {
  it("the list and one conversation match their OpenAPI schemas", async () => {
    const asked = await fetch(`${server.url}/v1/chat`, {
      method: "POST",
      headers: bearer(user.key, { "content-type": "application/json" }),
      body: JSON.stringify({ message: "what does F-macro mean?" }),
    });
    expect(asked.status).toBe(201);
    const { conversation_id } = (await asked.json()) as { conversation_id: string };

    const doc = (await (await fetch(`${server.url}/openapi.json`)).json()) as {
      paths: Record<string, { get: { responses: Record<string, { content: { "application/json": { schema: object } } }> } }>;
    };
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    ajv.addFormat("uuid", /^[0-9a-f-]{36}$/i);
    const schemaOf = (p: string) => doc.paths[p].get.responses["200"].content["application/json"].schema;
    const check = async (p: string, url: string) => {
      const body: unknown = await (await fetch(`${server.url}${url}`, { headers: bearer(user.key) })).json();
      const validate = ajv.compile(schemaOf(p));
      expect(validate(body), JSON.stringify(validate.errors)).toBe(true);
      return body;
    };
    const list = (await check("/v1/chat/conversations", "/v1/chat/conversations")) as { data: Array<{ id: string; messages: number }> };
    expect(list.data).toEqual([expect.objectContaining({ id: conversation_id, messages: 2 })]);
    const one = (await check("/v1/chat/conversations/{conversation_id}", `/v1/chat/conversations/${conversation_id}`)) as {
      messages: Array<{ role: string; references: unknown[] }>;
    };
    expect(one.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(one.messages[1].references.length).toBeGreaterThan(0);
  });
});
