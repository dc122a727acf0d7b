import { afterAll, beforeAll, expect, it } from "vitest";
import { bearer, createUserWithKey, type UserWithKey } from "../helpers/auth.js";
import { describeEachTarget } from "../helpers/db.js";
import { plantLargeExperiment } from "../helpers/large-experiment.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { toolSchemas } from "../../src/chat/tools.js";

// Issue 48, finding 3: once a user owned a large experiment, every chat message read its split (every patient id)
// and its model's manifest (every value of an identifier-like column) from the database and parsed them on the
// event loop, whatever the message: 0.1-0.45 s a message at 260k rows, for every tenant. What the chat reads per
// message must be bounded: here no query result it waits for may pass 64 KiB, with an experiment whose split and
// manifest are each ~0.5 MB. Counted at the database client (what the driver hands back and parses), so the figure
// is deterministic; the time it cost is measured in bench/security/chat-stall.ts.

const ROWS = 20_000;
const MAX_RESULT = 64 * 1024;

interface Reads {
  queries: number;
  largest: number;
  texts: string[];
}

describeEachTarget("the chat's reads on %s with a large experiment", (target) => {
  let server: TestServer;
  let user: UserWithKey;
  let reads: Reads | undefined;

  beforeAll(async () => {
    server = await startTestServer(target);
    user = await createUserWithKey(server, { rateLimitPerMinute: 100_000 });
    await plantLargeExperiment(server.services.experiments.repo as never, user.userId, 1, ROWS);
    // Every query of drizzle goes through its client's query() (PGlite's, or pg's Pool): count what comes back.
    const client = (server.services.db as unknown as { $client: { query: (...a: unknown[]) => Promise<{ rows?: unknown[] }> } }).$client;
    const query = client.query.bind(client);
    client.query = async (...args: unknown[]) => {
      const out = await query(...args);
      if (reads) {
        reads.queries++;
        reads.largest = Math.max(reads.largest, JSON.stringify(out?.rows ?? []).length);
        reads.texts.push(typeof args[0] === "string" ? args[0] : String((args[0] as { text?: string })?.text ?? ""));
      }
      return out;
    };
  }, 120_000);
  afterAll(async () => server?.teardown());

  async function counted<T>(f: () => Promise<T>): Promise<{ out: T; reads: Reads }> {
    reads = { queries: 0, largest: 0, texts: [] };
    try {
      return { out: await f(), reads };
    } finally {
      reads = undefined;
    }
  }

  async function chat(message: string, extra: Record<string, unknown> = {}) {
    const { out, reads: r } = await counted(async () => {
      const res = await fetch(`${server.url}/v1/chat`, {
        method: "POST",
        headers: bearer(user.key, { "content-type": "application/json" }),
        body: JSON.stringify({ message, ...extra }),
      });
      return { status: res.status, body: await res.text() };
    });
    expect(out.status, out.body).toBe(201);
    return { reply: (JSON.parse(out.body) as { reply: string }).reply, reads: r };
  }

  it.each([
    ["hello"],
    ["how is experiment 1 doing?"],
    ["what are the thresholds of experiment 1?"],
    ["how do I call predict for experiment 1?"],
    ["which inputs does experiment 1 take?"],
    ["how long does a build take?"],
    ["is experiment 1 good enough for clinic?"],
    ["what does the 95% interval of experiment 1's AUC mean?"],
  ])("%s: reads no query result over 64 KiB", async (message) => {
    const { reply, reads: r } = await chat(message);
    expect(reply.length).toBeGreaterThan(0);
    expect(r.queries).toBeGreaterThan(0);
    expect(r.largest).toBeLessThan(MAX_RESULT);
  });

  it("focused on the experiment, reads no query result over 64 KiB, and still quotes its figures", async () => {
    const { reply, reads: r } = await chat("how is it doing?", { experiment_id: 1 });
    expect(reply).toContain("0.812");
    expect(r.largest).toBeLessThan(MAX_RESULT);
  });

  it("every tool, as an LLM would call it, reads no query result over 64 KiB", async () => {
    const tools = server.services.chat.toolsFor(user.scope);
    const args: Record<keyof typeof toolSchemas, unknown> = {
      list_experiments: {},
      find_experiments: { query: "registry" },
      get_experiment: { experiment_id: 1 },
      compare_experiments: { metric: "auc" },
      model_inputs: { experiment_id: 1 },
      build_times: {},
      search_docs: { query: "threshold" },
      explain: { term: "auc" },
    };
    for (const [name, a] of Object.entries(args)) {
      const { reads: r } = await counted(() => tools.call(name, a));
      expect(r.largest, name).toBeLessThan(MAX_RESULT);
    }
  });

  it("what the bounded reads give is what the chat said before: the column's count of values, the dataset and its warnings", async () => {
    const tools = server.services.chat.toolsFor(user.scope);
    const inputs = (await tools.call("model_inputs", { experiment_id: 1 })).result as {
      inputs: { columns: Array<{ name: string; type: string; categories?: number }> };
    };
    expect(inputs.inputs.columns).toEqual([
      { name: "age", type: "numeric" },
      { name: "patient_code", type: "categorical", categories: ROWS },
    ]);
    const facts = (await tools.call("get_experiment", { experiment_id: 1 })).result as {
      dataset: { rows: number; patients: number; split: unknown };
      problems: { errors: unknown[]; warnings: Array<{ message: string }> };
      thresholds: number[];
      classes: Record<string, string>;
    };
    expect(facts.dataset.rows).toBe(ROWS);
    expect(facts.dataset.patients).toBe(ROWS);
    expect(facts.dataset.split).toEqual({ train: 14_000, val: 3_000, test: 3_000 });
    expect(facts.thresholds).toEqual([0.5, 0.42]);
    expect(facts.problems.warnings).toHaveLength(10);
    expect(facts.problems.warnings[9].message).toContain("warning 10)");
    const listed = (await tools.call("list_experiments", {})).result as { experiments: Array<{ experiment_id: number; metric?: unknown }> };
    expect(listed.experiments).toEqual([
      expect.objectContaining({ experiment_id: 1, metric: { name: "auc", value: 0.812, ci_low: 0.801, ci_high: 0.823 } }),
    ]);
  });

  it("reads a model version's manifest once: the next message about it reads nothing of it", async () => {
    await chat("which inputs does experiment 1 take?");
    const { reads: r } = await chat("which inputs does experiment 1 take?");
    expect(r.texts.some((t) => /"models"/.test(t))).toBe(true);
    expect(r.texts.filter((t) => t.includes('"manifest"'))).toEqual([]);
  });
});
