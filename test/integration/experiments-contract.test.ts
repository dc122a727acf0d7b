import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { primaryTarget } from "../helpers/db.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { createUserWithKey } from "../helpers/auth.js";
import { api, dataRequest, tabularZip, waitForStatus, type Api } from "./experiments-fixtures.js";

// The orchestrator's side of the contract, with a stand-in pipeline (PYTHON_BIN = a shell script that reads the
// arguments Builder passes: -c <prelude> <command> --spec S --out D). A pipeline that breaks the contract must
// fail the experiment with the reason, and publish nothing.

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "fake-pipeline-"));
const script = (name: string, body: string) => {
  const file = path.join(dir, name);
  fs.writeFileSync(file, `#!/usr/bin/env bash\nspec="$5"; out="$7"\n${body}\n`, { mode: 0o755 });
  return file;
};
// Chooses the behaviour from the experiment's budget (written into the spec), so one server covers every case.
const fake = script(
  "pipeline.sh",
  `budget=$(grep -o '"time_budget_s": [0-9]*' "$spec" | grep -o '[0-9]*$')
case "$budget" in
  1) echo '{"type":"progress","stage":"training","progress":0.2,"surprise":true}'; sleep 20 ;;
  2) echo '{}' > "$out/manifest.json"; echo model > "$out/model.onnx"; echo '{"type":"result","manifest":"manifest.json"}' ;;
  3) echo '{"type":"log","level":"error","message":"diagnosis has a single class in the training patients"}'; exit 3 ;;
  4) echo 'Traceback: boom' >&2; echo '{"type":"log","level":"error","message":"RuntimeError: boom"}'; exit 1 ;;
esac`,
);

describe(`pipeline contract failures on ${primaryTarget()}`, () => {
  let server: TestServer;
  let client: Api;
  let userId: string;
  let zipPath: string;
  let dataCols: string[];
  beforeAll(async () => {
    server = await startTestServer(primaryTarget(), { PYTHON_BIN: fake, BUILDER_GPU_SLOTS: "2" });
    const u = await createUserWithKey(server);
    userId = u.userId;
    client = api(server.url, u.key);
    const data = tabularZip();
    dataCols = data.dataCols;
    zipPath = `${userId}/tabular/data.zip`;
    await server.services.bucket.write(zipPath, Readable.from(data.zip));
  });
  afterAll(async () => {
    await server?.teardown();
  });

  const run = async (id: number, budget: number) => {
    expect((await client.post("/v1/experiments", dataRequest(userId, id, zipPath, dataCols, { time_budget_s: budget }))).status).toBe(202);
    return waitForStatus(client, id, ["ready", "failed", "invalid_dataset", "cancelled"], 60_000);
  };

  it("a malformed event fails the job with the reason", async () => {
    const done = await run(1, 1);
    expect(done.status).toBe("failed");
    expect(done.failure_reason).toMatch(/event\.schema\.json/);
    expect(done.model).toBeNull();
  });

  it("a manifest that fails its schema fails the job and publishes nothing", async () => {
    const done = await run(2, 2);
    expect(done.status).toBe("failed");
    expect(done.failure_reason).toMatch(/manifest is not valid/);
    expect(done.history.map((h: { status: string }) => h.status)).toEqual([
      "queued",
      "fetching",
      "validating",
      "training",
      "evaluating",
      "failed",
    ]);
    expect(await server.services.bucket.list(`models/${userId}/2/`)).toEqual([]);
  });

  it("exit 3 (data the pipeline cannot use) is invalid_dataset with the message in the report", async () => {
    const done = await run(3, 3);
    expect(done.status).toBe("invalid_dataset");
    expect(done.dataset_report.errors.at(-1)).toMatchObject({
      code: "pipeline_data_error",
      message: expect.stringMatching(/single class/),
    });
  });

  it("a crash is failed with the pipeline's last error, and the job log keeps its stderr", async () => {
    const done = await run(4, 4);
    expect(done.status).toBe("failed");
    expect(done.failure_reason).toBe("the training stopped on an unexpected error (RuntimeError: boom); the job log has the details");
    expect(done.failure_code).toBe("build.pipeline_failed");
    const logs = await client.get("/v1/experiments/4/logs");
    expect(logs.body).toContain("Traceback: boom");
  });
});
