import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createUserWithKey } from "../helpers/auth.js";
import { primaryTarget } from "../helpers/db.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { api, dataRequest, tabularZip, waitForStatus, type Api } from "./experiments-fixtures.js";

// The "done when": on a server with no LLM configured, "how is experiment 42 doing?" answers with the real
// status and metrics of an experiment trained by the real tabular pipeline (a few seconds of LightGBM), and the
// /predict example the assistant gives runs as it is written.

vi.setConfig({ testTimeout: 180_000 });

describe(`chat about a really trained model on ${primaryTarget()}`, () => {
  let server: TestServer;
  let client: Api;
  let userId: string;
  const chat = async (message: string) =>
    (await client.post("/v1/chat", { message })).body as { reply: string; references: Array<{ type: string; id: string }> };

  beforeAll(async () => {
    server = await startTestServer(primaryTarget());
    const user = await createUserWithKey(server);
    userId = user.userId;
    client = api(server.url, user.key);
    const data = tabularZip();
    const zipPath = `${userId}/tabular/data.zip`;
    await server.services.bucket.write(zipPath, Readable.from(data.zip));
    expect((await client.post("/v1/experiments", dataRequest(userId, 42, zipPath, data.dataCols, { time_budget_s: 4 }))).status).toBe(202);
    expect((await client.post("/v1/experiments", dataRequest(userId, 43, zipPath, ["no_such_column"]))).status).toBe(202);
    await waitForStatus(client, 43, ["invalid_dataset", "failed", "ready"], 60_000);
    await waitForStatus(client, 42, ["ready", "failed", "invalid_dataset"], 150_000);
  }, 200_000);
  afterAll(async () => server?.teardown());

  it("answers 'how is experiment 42 doing?' with its real status and metrics", async () => {
    const exp = (await client.get("/v1/experiments/42")).body;
    expect(exp.status).toBe("ready");
    const { reply, references } = await chat("how is experiment 42 doing?");
    expect(reply).toContain("is **ready**");
    for (const [name, label] of [
      ["auc", "AUC"],
      ["f_macro", "F-macro"],
      ["recall", "Recall"],
    ] as const) {
      const m = exp.metrics[name];
      expect(reply).toContain(`${label} ${m.value.toFixed(3)} (95% CI ${m.ci_low.toFixed(3)}–${m.ci_high.toFixed(3)})`);
    }
    const split = exp.dataset_report.summary.split;
    expect(reply).toContain(`${split.train} train / ${split.val} validation / ${split.test} test`);
    // A perfect test score (this small, easy set can give AUC 1.000) raises the severe leakage warning, and the trust
    // line then says so instead of reading the interval as reassurance; otherwise it reads the interval.
    const severe = (exp.warnings as Array<{ code: string; severity: string }>).filter((w) => w.severity === "severe");
    if (severe.length) expect(reply).toContain(`Can you trust it? Not as it is: `);
    else expect(reply).toContain(`was measured on ${split.test} held-out test patients`);
    // Each severe warning is named in words with its code beside it, e.g. "check for leakage (`perfect_score_check_leakage`)".
    for (const w of severe) expect(reply).toContain(`(\`${w.code}\`)`);
    expect(references.map((r) => `${r.type}:${r.id}`)).toEqual(["experiment:42", `dataset:${userId}/tabular/data.zip`, "model:42"]);
  });

  it("gives a /predict call that works as written", async () => {
    const { reply } = await chat("how do I call predict for experiment 42?");
    const body = /-d '(\{.*\})'/.exec(reply)?.[1];
    expect(body, reply).toBeTruthy();
    const res = await client.post("/v1/experiments/42/predict", JSON.parse(body!));
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.error).toBe(0);
  });

  it("explains a real refusal with the real problem code and what it means", async () => {
    const exp = (await client.get("/v1/experiments/43")).body;
    expect(exp.status).toBe("invalid_dataset");
    const { reply } = await chat("why was experiment 43 refused?");
    expect(reply).toContain("`column_missing`");
    expect(reply).toContain("no_such_column");
    expect(reply).toContain("a requested column is not in the header");
  });
});
