import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, createUserWithKey, type UserWithKey } from "../helpers/auth.js";
import { primaryTarget } from "../helpers/db.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { ci, imageManifest, request, seedAccount, tabularManifest, validReport, type Seed } from "./chat-fixtures.js";

// The builtin chat finds a model by its name, not only by its number. The account holds two breast models and a
// diabetes one; the image model is the newest, so an assistant that falls back to "the newest" answers wrongly here.
// Another user has an experiment with the very same name as A's WDBC model and must never be picked for A.

let server: TestServer;
let a: UserWithKey;
let b: UserWithKey;

function seeds(userId: string): Seed[] {
  return [
    {
      id: 1,
      status: "ready",
      name: "Breast cancer (WDBC)",
      description: "fine-needle aspirates, malignant vs benign",
      request: request(userId, 1, {
        label_cols: ["diagnosis"],
        data_cols: ["radius_mean", "area_mean"],
        zip_gcloud: `${userId}/exp1/data.zip`,
      }),
      metrics: { auc: ci(0.961, 0.932, 0.984) },
      report: validReport({ rows: 569, patients: 569, split: { train: 398, val: 85, test: 86 } }),
      manifest: tabularManifest(
        [
          { name: "radius_mean", type: "numeric", min: 6.98, max: 28.1 },
          { name: "area_mean", type: "numeric", min: 143.5, max: 2501 },
        ],
        ["benign", "malignant"],
        [0.5, 0.5],
      ),
    },
    {
      id: 2,
      status: "failed",
      name: "Diabetes (Pima)",
      request: request(userId, 2, { label_cols: ["outcome"], data_cols: ["glucose", "bmi"], zip_gcloud: `${userId}/exp2/pima.zip` }),
      failureReason: "the training process was killed: out of memory (exit code 137)",
      report: validReport({ rows: 768, patients: 768 }),
    },
    {
      id: 3,
      status: "ready",
      name: "Breast ultrasound",
      request: request(userId, 3, { task: "vision", images_col: "image", zip_gcloud: `${userId}/exp3/scans.zip` }),
      metrics: { auc: ci(0.873, 0.821, 0.917) },
      report: validReport({ rows: 780, patients: 600, images: 780, split: { train: 420, val: 90, test: 90 } }),
      manifest: imageManifest("vision_classification", 224, 1, ["normal", "benign", "malignant"], "multiclass"),
    },
  ];
}

/** B: one experiment named exactly like A's WDBC model, with numbers of its own that must never reach A. */
const seedsOfB = (userId: string): Seed[] => [
  {
    id: 9,
    status: "ready",
    name: "Breast cancer (WDBC)",
    request: request(userId, 9, { label_cols: ["diagnosis"], zip_gcloud: `${userId}/b_secret_cohort/data.zip` }),
    metrics: { auc: ci(0.512, 0.401, 0.623) },
    manifest: tabularManifest([{ name: "b_secret_col", type: "numeric" }], ["b0", "b1"]),
  },
];

async function converse(user: UserWithKey, message: string, conversationId?: string): Promise<{ reply: string; conversation_id: string }> {
  const body = { message, ...(conversationId ? { conversation_id: conversationId } : {}) };
  const res = await fetch(`${server.url}/v1/chat`, {
    method: "POST",
    headers: bearer(user.key, { "content-type": "application/json" }),
    body: JSON.stringify(body),
  });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as { reply: string; conversation_id: string };
}
const ask = async (user: UserWithKey, message: string) => (await converse(user, message)).reply;

beforeAll(async () => {
  server = await startTestServer(primaryTarget());
  a = await createUserWithKey(server);
  b = await createUserWithKey(server);
  await seedAccount(server, a.userId, seeds(a.userId));
  await seedAccount(server, b.userId, seedsOfB(b.userId));
}, 120_000);

afterAll(async () => {
  await server?.teardown();
});

describe("builtin chat: experiments named in words", () => {
  it("answers about the model the name fits, not the newest", async () => {
    const reply = await ask(a, "How good is my breast cancer model?");
    expect(reply).toContain("0.961");
    expect(reply).not.toContain("0.873");
  });

  it("finds a failed model by its name", async () => {
    const reply = await ask(a, "what happened to the diabetes model?");
    expect(reply).toContain("out of memory");
    expect(reply).not.toContain("0.873");
  });

  it("asks back, listing both breast models quoted, instead of guessing", async () => {
    const reply = await ask(a, "how is my breast model doing?");
    expect(reply).toContain("experiment 1 `Breast cancer (WDBC)`");
    expect(reply).toContain("experiment 3 `Breast ultrasound`");
    expect(reply).not.toContain("0.961");
    expect(reply).not.toContain("0.873");
  });

  it("picks the image model for a heat-map question about the ultrasound one", async () => {
    const reply = await ask(a, "Show me the heat map of the ultrasound one");
    expect(reply).toContain("experiment 3 `Breast ultrasound` (image, ready) is an image model");
    expect(reply).toContain("0.873");
  });

  it("says a tabular model has no heat map", async () => {
    const reply = await ask(a, "the heat map of the diabetes model");
    expect(reply).toContain("experiment 2 `Diabetes (Pima)` (tabular, failed) is a tabular model");
    expect(reply).toContain("no heat map");
  });

  it("checks the kind however the model was named: by number, and for an image sent to a tabular model", async () => {
    const byNumber = await ask(a, "show me the Grad-CAM heat map of experiment 1");
    expect(byNumber).toContain("experiment 1 `Breast cancer (WDBC)` (tabular, ready) is a tabular model");
    expect(byNumber).not.toContain("0.961");
    const image = await ask(a, "How do I send an image to my breast cancer model?");
    expect(image).toContain("is a tabular model, not an image one");
    expect(image).not.toContain("/v1/experiments/1/predict");
    // The same question about the image model gets the call.
    expect(await ask(a, "How do I send an image to the ultrasound model?")).toContain("/v1/experiments/3/predict");
  });

  it("shows names, quoted, in lists and rankings", async () => {
    expect(await ask(a, "list my experiments")).toContain("- experiment 2 `Diabetes (Pima)`: tabular, **failed**");
    expect(await ask(a, "which is my best model by AUC?")).toContain("- experiment 3 `Breast ultrasound` (vision): AUC 0.873");
  });

  it("keeps a model named in words for the follow-up question", async () => {
    const first = await converse(a, "Tell me about my breast cancer model");
    const followUp = await converse(a, "and can I trust its metrics?", first.conversation_id);
    expect(followUp.reply).toContain("0.961");
    expect(followUp.reply).not.toContain("0.873");
  });

  it("says none fits a model it does not have, and lists the caller's experiments", async () => {
    const reply = await ask(a, "what is the AUC of my kidney model?");
    expect(reply).toContain("None of your experiments matches `kidney`");
    expect(reply).toContain("experiment 3 `Breast ultrasound`");
    expect(reply).not.toContain("0.961");
    expect(reply).not.toContain("0.873");
  });

  it("reads a Spanish reference and the newest one", async () => {
    expect(await ask(a, "¿Qué tal mi modelo de diabetes?")).toContain("out of memory");
    expect(await ask(a, "how is the last one doing?")).toContain("0.873");
  });

  it("never picks another user's experiment of the same name", async () => {
    const replyA = await ask(a, "How good is my breast cancer model?");
    expect(replyA).toContain("0.961");
    expect(replyA).not.toContain("0.512");
    expect(replyA).not.toContain("b_secret");
    // B's only experiment has that name: B gets it, and nothing of A's.
    const replyB = await ask(b, "How good is my breast cancer model?");
    expect(replyB).toContain("0.512");
    expect(replyB).not.toContain("0.961");
    const noneForB = await ask(b, "my diabetes model");
    expect(noneForB).toContain("None of your experiments matches");
    expect(noneForB).not.toContain("Pima");
  });

  it("gives an LLM the names: list and get return them, find_experiments matches only the caller's", async () => {
    const toolsA = server.services.chat.toolsFor(a.scope);
    const listed = JSON.stringify((await toolsA.call("list_experiments", {})).result);
    expect(listed).toContain('"name":"Breast ultrasound"');
    expect(JSON.stringify((await toolsA.call("get_experiment", { experiment_id: 1 })).result)).toContain(
      '"description":"fine-needle aspirates, malignant vs benign"',
    );
    const found = (await toolsA.call("find_experiments", { query: "breast cancer" })) as {
      result: { matches: Array<{ experiment_id: number }> };
      references: Array<{ id: string }>;
    };
    expect(found.result.matches.map((m) => m.experiment_id)).toEqual([1]);
    expect(found.references.map((r) => r.id)).toEqual(["1"]);
    const ofB = JSON.stringify(await server.services.chat.toolsFor(b.scope).call("find_experiments", { query: "breast cancer" }));
    expect(ofB).toContain('"experiment_id":9');
    expect(ofB).not.toContain('"experiment_id":1');
    expect(JSON.stringify(await server.services.chat.toolsFor(b.scope).call("find_experiments", { query: "ultrasound" }))).toContain(
      '"matches":[]',
    );
  });
});
