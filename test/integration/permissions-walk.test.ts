// Issue 50's first done-when: every operation of the OpenAPI document the server serves is called by each role
// (a dashboard session in a shared workspace) and by a key of each scope, and answered as ONE table says (permissions-walk-table.ts).
// The table is keyed by the document's operations: an operation without an entry, or an entry whose route is gone,
// fails the first test, so a new route cannot be forgotten. Path parameters are real rows of the workspace (a 404
// must not hide a missing permission), bodies are valid but harmless (a 400 from the body's validation would too).
import fs from "node:fs";
import path from "node:path";
import { randomUUID } from "node:crypto";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { experiments, models, monitoringAlerts, users, workspaces } from "../../src/db/schema.js";
import { PERMISSIONS, ROLES, type WorkspaceRole } from "../../src/workspaces/permissions.js";
import { KEY_SCOPES, keyScopeAllows, type KeyScope } from "../../src/auth/key-scopes.js";
import { WorkspaceMemberRepository } from "../../src/workspaces/workspace.repository.js";
import { bearer, createUserWithKey, type UserWithKey } from "../helpers/auth.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { haveFixturePython, servingFixtures } from "../fixtures/serving/fixtures.js";
import { fixtureRequest } from "../fixtures/serving/publish.js";
import {
  answeredAs,
  NOT_ROUTED_YET,
  roleExpectation,
  TABLE,
  variants,
  type Actor,
  type Ctx,
  type Entry,
} from "./permissions-walk-table.js";

const UNSAFE = new Set(["POST", "PUT", "PATCH", "DELETE"]);

describe.skipIf(!haveFixturePython)("permissions walk: every OpenAPI operation, for each role and each key scope", () => {
  let server: TestServer;
  let doc: { paths: Record<string, Record<string, { security?: Record<string, string[]>[]; "x-builder-scope"?: string }>> };
  let ctx: Ctx;
  let owner: UserWithKey;
  const actors = {} as Record<WorkspaceRole, Actor>;
  let nextExperiment = 100;

  const signIn = async (u: { email: string; password: string }) => {
    const res = await fetch(`${server.url}/v1/session`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: u.email, password: u.password }),
    });
    const { csrf_token } = (await res.json()) as { csrf_token: string };
    return { cookie: res.headers.get("set-cookie")!.split(";")[0]!, "x-csrf-token": csrf_token };
  };
  const member = async (role: WorkspaceRole, opts: { admin?: boolean } = {}): Promise<Actor> => {
    const u = await createUserWithKey(server);
    if (opts.admin) await server.services.db.update(users).set({ role: "admin" }).where(eq(users.id, u.userId));
    await new WorkspaceMemberRepository(server.services.db).add(ctx.shared, u.userId, role);
    return { userId: u.userId, email: u.email, password: u.password, headers: { ...(await signIn(u)), "x-builder-workspace": ctx.shared } };
  };
  const keyActor = async (scopes: readonly KeyScope[], maker: Actor): Promise<Actor> => {
    const { key } = await server.services.auth.apiKeys.create(maker.userId, { scopes, name: "walk", workspaceId: ctx.shared });
    return { ...maker, headers: bearer(key) };
  };

  const opKeys = () => Object.entries(doc.paths).flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`));

  const call = async (op: string, entry: Entry, actor: Actor) => {
    const [method, template] = op.split(" ") as [string, string];
    const params = (await entry.params?.(ctx, actor.headers)) ?? {};
    const url = template.replace(/\{(\w+)\}/g, (_m, name: string) => encodeURIComponent(String(params[name])));
    const headers: Record<string, string> = { ...actor.headers };
    let body: string | undefined;
    if (entry.raw) {
      headers["content-type"] = entry.raw.contentType;
      body = entry.raw.body;
    } else if (entry.body) {
      headers["content-type"] = "application/json";
      body = JSON.stringify(entry.body(ctx, actor));
    } else if (UNSAFE.has(method)) {
      headers["content-type"] = "application/json";
      body = "{}";
    }
    const controller = new AbortController();
    const res = await fetch(`${server.url}${url}`, { method, headers, body, signal: controller.signal });
    // Event streams never end: the status and the first bytes are the answer.
    const text = res.headers.get("content-type")?.includes("text/event-stream") ? "" : await res.text();
    controller.abort();
    let json: { error?: { code?: string } } | null = null;
    try {
      json = text ? JSON.parse(text) : null;
    } catch {
      json = null;
    }
    return { status: res.status, code: json?.error?.code ?? (json as { code?: string } | null)?.code, url };
  };

  beforeAll(async () => {
    server = await startTestServer("pglite");
    const { db, bucket } = server.services;
    const [{ id: shared }] = await db.insert(workspaces).values({ name: "Cardiology" }).returning({ id: workspaces.id });
    // The model's builder is none of the walking actors, so that approving it is the approval rule's, not its exception.
    owner = await createUserWithKey(server);
    await new WorkspaceMemberRepository(db).add(shared, owner.userId, "editor");
    const modelDir = servingFixtures().modelDir("tabular_binary");
    const manifest = JSON.parse(fs.readFileSync(path.join(modelDir, "manifest.json"), "utf8"));
    const insertExperiment = async (n: number, withModel: boolean) => {
      const [row] = await db
        .insert(experiments)
        .values({
          userId: owner.userId,
          workspaceId: shared,
          experimentId: n,
          request: { ...fixtureRequest(owner.userId, n, manifest), zip_gcloud: `${shared}/study/data.zip` },
          requestHash: `walk-${n}`,
          status: "ready",
          name: "Shared cohort",
        })
        .returning();
      if (withModel) {
        const storePath = `models/${shared}/${n}/v1`;
        for (const f of ["model.onnx", "manifest.json"]) await bucket.uploadFile(path.join(modelDir, f), `${storePath}/${f}`);
        await db.insert(models).values({
          userId: owner.userId,
          workspaceId: shared,
          experimentUuid: row.id,
          experimentId: n,
          version: 1,
          kind: manifest.kind,
          storePath,
          manifest,
        });
      }
      return row;
    };
    const modelRow = await insertExperiment(1, true);
    const [alert] = await db
      .insert(monitoringAlerts)
      .values({ experimentUuid: modelRow.id, rule: "drift", severity: "warning", modelVersion: 1 })
      .returning();
    ctx = {
      server,
      shared,
      modelExp: 1,
      batchId: "",
      alertId: alert.id,
      adminTarget: (await createUserWithKey(server)).userId,
      throwawayExperiment: async () => {
        const n = nextExperiment++;
        await insertExperiment(n, false);
        return n;
      },
      throwawayMember: async () => (await member("viewer")).userId,
      throwawayWorkspace: async () => {
        const [{ id }] = await db.insert(workspaces).values({ name: "Short-lived" }).returning({ id: workspaces.id });
        for (const role of ROLES) await new WorkspaceMemberRepository(db).add(id, actors[role].userId, role);
        return id;
      },
      ownConversation: async (h) => {
        const res = await fetch(`${server.url}/v1/chat`, {
          method: "POST",
          headers: { ...h, "content-type": "application/json" },
          body: JSON.stringify({ message: "How many experiments are there?" }),
        });
        const got = (await res.json()) as { conversation_id?: string };
        return got.conversation_id ?? randomUUID();
      },
    };
    for (const role of ROLES) actors[role] = await member(role, { admin: role === "owner" });
    const sent = await fetch(`${server.url}/v1/models/1/batch`, {
      method: "POST",
      headers: { ...actors.owner.headers, "content-type": "text/csv" },
      body: "patient_id,bmi,site,age,sex\nP1,27.5,north,63,F\nP2,31.0,south,40,M\n",
    });
    expect(sent.status).toBe(202);
    ctx.batchId = ((await sent.json()) as { batch_id: string }).batch_id;
    doc = (await (await fetch(`${server.url}/openapi.json`)).json()) as typeof doc;
  }, 120_000);
  afterAll(async () => {
    await server?.teardown();
  });

  it("the table has exactly the document's operations, and says how a key reaches each as the document does", () => {
    const inDoc = opKeys();
    expect(
      inDoc.filter((op) => !(op in TABLE)),
      "operations with no entry in the table",
    ).toEqual([]);
    expect(
      Object.keys(TABLE).filter((op) => !inDoc.includes(op)),
      "entries whose route is gone",
    ).toEqual([]);
    for (const op of inDoc) {
      const [method, p] = op.split(" ") as [string, string];
      const o = doc.paths[p]![method.toLowerCase()]!;
      const schemes = (o.security ?? []).flatMap((s) => Object.keys(s));
      const via = schemes.length === 0 ? "public" : schemes.includes("bearer") ? o["x-builder-scope"] : "session";
      expect(`${op} → ${via}`).toBe(`${op} → ${TABLE[op]!.via}`);
      expect(TABLE[op]!.need === "public", `${op}: public in the table iff in the document`).toBe(via === "public");
    }
    // Every permission of the code's table is asked by some route, or listed (with why) as not routed yet.
    const named = new Set(Object.values(TABLE).flatMap((e) => variants(e).map((v) => v.need)));
    expect(
      PERMISSIONS.filter((p) => !named.has(p) && !(p in NOT_ROUTED_YET)),
      "permissions no route asks for",
    ).toEqual([]);
    expect(
      PERMISSIONS.filter((p) => named.has(p) && p in NOT_ROUTED_YET),
      "routed now: drop from NOT_ROUTED_YET",
    ).toEqual([]);
  });

  /**
   * Calls every operation (and its variants) as `who` says and returns the answers that are not `expect`'s: the walks
   * below differ only in who calls and what they expect.
   */
  const walk = async (
    skip: (e: Entry) => boolean,
    who: (e: Entry) => Promise<Actor>,
    expectOf: (e: Entry) => string | null,
    label: string,
  ): Promise<string[]> => {
    const wrong: string[] = [];
    for (const op of opKeys()) {
      const entry = TABLE[op];
      if (!entry || entry.exclude || skip(entry)) continue; // a missing entry fails the first test
      for (const v of variants(entry)) {
        const got = await call(op, v, await who(v));
        if (process.env.WALK_LOG) console.log(`WALK ${label} ${op} ${got.status} ${got.code ?? ""}`);
        const expected = expectOf(v);
        if (!answeredAs(got, expected))
          wrong.push(`${op} (${got.url}): ${got.status} ${got.code ?? ""}, expected ${expected ?? "allowed"}`);
      }
    }
    return wrong;
  };

  for (const role of ROLES) {
    it(`a session of a ${role} is answered as the table says, for every operation`, async () => {
      const wrong = await walk(
        (e) => e.need === "public",
        async (e) => (e.throwawayActor ? member(role) : actors[role]),
        (e) => roleExpectation(role, e.need),
        role,
      );
      expect(wrong).toEqual([]);
    }, 60_000);
  }

  for (const scope of KEY_SCOPES) {
    it(`a key with only ${scope} (made by an owner of the workspace) is answered as the table says, for every operation`, async () => {
      const wrong = await walk(
        (e) => e.via === "public",
        async (e) => keyActor([scope], e.throwawayActor ? await member("owner") : actors.owner),
        // A key never reaches a session-only route; within its scope it is answered as its maker's role would be.
        (e) =>
          e.via === "session" || e.via === "public"
            ? "session_required"
            : keyScopeAllows([scope], e.via)
              ? roleExpectation("owner", e.need)
              : "api_key_scope_missing",
        `key:${scope}`,
      );
      expect(wrong).toEqual([]);
    }, 60_000);
  }

  // A key's scopes never lift its maker's role: a key with every scope, made by each other role, is refused what the role is.
  for (const role of ROLES.filter((r) => r !== "owner")) {
    it(`a key with every scope made by a ${role} is answered as a ${role}'s session would be`, async () => {
      const wrong = await walk(
        (e) => e.via === "public",
        async (e) => keyActor(KEY_SCOPES, e.throwawayActor ? await member(role) : actors[role]),
        (e) => (e.via === "session" ? "session_required" : roleExpectation(role, e.need)),
        `key-of:${role}`,
      );
      expect(wrong).toEqual([]);
    }, 60_000);
  }
});
