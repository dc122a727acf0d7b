import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, createUserWithKey, type UserWithKey } from "../helpers/auth.js";
import { primaryTarget } from "../helpers/db.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { seedAccount } from "./chat-fixtures.js";

// Issue 42, finding 11: the builtin assistant's replies are Markdown, and docs/chat.md promises that text from
// user data (column, class and file names, failure reasons, dataset messages) appears only inside code spans.
// Failure reasons and dataset messages went out bare, so a column named `<img src=x onerror=alert(1)>` became live
// HTML in any chat view. Here every such field of a seeded account holds hostile text, and every reply is checked.

const HOSTILE = "<img src=x onerror=alert(1)> `x` [click](http://evil.example)\n# heading **bold**";
/** What must never be outside a code span. */
const LIVE = ["<img", "onerror", "alert(1)", "](http", "[click]", "# heading", "**bold**"];

let server: TestServer;
let user: UserWithKey;

const ci = (value: number) => ({ value, ci_low: value - 0.05, ci_high: value + 0.05 });
const request = (id: number, over: Record<string, unknown> = {}) => ({
  zip_gcloud: `${user.userId}/d${id}/data.zip`,
  label_cols: [HOSTILE],
  data_cols: ["age", HOSTILE],
  model_type: 0,
  optimization_type: 1,
  experiment_id: id,
  user_id: user.userId,
  study_type: "Builder",
  task: "data",
  type_of_experiment: "classification",
  optimization_metric: "AUC",
  ...over,
});
const manifest = {
  schema_version: 1,
  kind: "tabular",
  problem: "binary",
  model_file: "model.onnx",
  outputs: { scores: "scores" },
  input: {
    name: "input",
    columns: [
      { name: "age", type: "numeric", min: 1, max: 90 },
      { name: HOSTILE, type: "categorical", codes: { a: 0, b: 1 } },
    ],
  },
  classes: [
    { index: 0, code: "0", name: HOSTILE },
    { index: 1, code: "1", name: "yes" },
  ],
  thresholds: [0.5, 0.5],
  threshold_rule: "youden",
  metrics: { test: {} },
};
const summary = {
  rows: 100,
  patients: 100,
  class_counts: { [HOSTILE]: { [HOSTILE]: 50, yes: 50 } },
  split: { train: 70, val: 15, test: 15, from_column: HOSTILE },
};

/** The reply with fenced blocks and inline code spans removed: what a Markdown view renders as markup. */
function outsideCode(reply: string): string {
  let fenced = false;
  const kept: string[] = [];
  for (const line of reply.split("\n")) {
    if (line.startsWith("```")) fenced = !fenced;
    else if (!fenced)
      kept.push(
        line
          .split("`")
          .filter((_, i) => i % 2 === 0)
          .join(""),
      );
  }
  return kept.join("\n");
}

beforeAll(async () => {
  server = await startTestServer(primaryTarget());
  user = await createUserWithKey(server);
  await seedAccount(server, user.userId, [
    {
      id: 1,
      status: "failed",
      request: request(1),
      failureReason: `column ${HOSTILE}: training failed`,
      report: { valid: true, errors: [], warnings: [], errors_omitted: 0, warnings_omitted: 0, summary },
    },
    {
      id: 2,
      status: "invalid_dataset",
      request: request(2),
      failureReason: HOSTILE,
      report: {
        valid: false,
        errors_omitted: 0,
        warnings_omitted: 0,
        warnings: [],
        summary: { rows: 10 },
        errors: [
          {
            severity: "error",
            code: "image_not_found",
            message: `the image '${HOSTILE}' is not in the zip`,
            row: 3,
            column: HOSTILE,
            path: HOSTILE,
          },
          { severity: "error", code: "pipeline_data_error", message: HOSTILE },
        ],
      },
    },
    {
      id: 3,
      status: "ready",
      request: request(3),
      metrics: { auc: ci(0.8) },
      report: { valid: true, errors: [], warnings: [], errors_omitted: 0, warnings_omitted: 0, summary },
      manifest,
    },
  ]);
}, 120_000);

afterAll(async () => {
  await server?.teardown();
});

describe("builtin chat: text from user data stays inside code spans", () => {
  const questions: Array<[string, Record<string, unknown>?]> = [
    ["list my experiments"],
    ["show my failed experiments"],
    ["why did my experiments fail?"],
    ["why was experiment 1 refused?"],
    ["why was experiment 2 refused?"],
    ["how is experiment 1 doing?"],
    ["how is experiment 2 doing?"],
    ["how is experiment 3 doing?"],
    ["how do I call predict for experiment 3?"],
    ["experiment 3 per class"],
    ["Is this lesion malignant?", { experiment_id: 3 }],
  ];
  it.each(questions)("%s", async (message, extra) => {
    const res = await fetch(`${server.url}/v1/chat`, {
      method: "POST",
      headers: bearer(user.key, { "content-type": "application/json" }),
      body: JSON.stringify({ message, ...extra }),
    });
    expect(res.status).toBe(201);
    const { reply } = (await res.json()) as { reply: string };
    const bare = outsideCode(reply);
    expect(
      LIVE.filter((s) => bare.includes(s)),
      reply,
    ).toEqual([]);
  });

  it("still shows the user's text, quoted (a reply that dropped it would pass the check above for nothing)", async () => {
    const res = await fetch(`${server.url}/v1/chat`, {
      method: "POST",
      headers: bearer(user.key, { "content-type": "application/json" }),
      body: JSON.stringify({ message: "why was experiment 2 refused?" }),
    });
    const { reply } = (await res.json()) as { reply: string };
    expect(reply).toContain("`<img src=x onerror=alert(1)> 'x' [click](http://evil.example) # heading **bold**`");
  });
});
