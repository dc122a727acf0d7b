import { Readable } from "node:stream";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { bearer, createUserWithKey, type UserWithKey } from "../helpers/auth.js";
import { primaryTarget } from "../helpers/db.js";
import { dicomFixtures, haveDicomPython } from "../helpers/dicom-fixtures.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { makeZip } from "../helpers/zips.js";
import { api, waitForStatus, visionRequest, type Api } from "./experiments-fixtures.js";

// A DICOM zip through the whole path (issue 41): POST /v1/experiments -> the real vision pipeline -> ready, with a
// file of every transfer syntax make_dicoms.py writes (native LE/BE/implicit/deflated, RLE, JPEG-LS, JPEG 2000,
// JPEG baseline, an extensionless file; MONOCHROME1/2, RGB, YBR, multi-frame) and headers carrying a planted
// patient name, ID and birth date. The dataset report warns by tag; the planted values appear nowhere: not in the
// API's answers, the job log, the server's log lines, the manifest or the model card. Small budget: plumbing, not
// model quality.

vi.setConfig({ testTimeout: 300_000 });
const PHI_VALUES = ["Zzyzx", "Quentavious", "PHI-7731-XQ", "19230817"];

describe.skipIf(!haveDicomPython)(`DICOM experiment on ${primaryTarget()}`, () => {
  const dx = dicomFixtures();
  let server: TestServer;
  let user: UserWithKey;
  let client: Api;
  const logLines: string[] = [];

  beforeAll(async () => {
    server = await startTestServer(primaryTarget());
    // Every log line the server writes while the experiment runs, at debug level, whatever LOG_LEVEL says.
    const capture = pino({ level: "debug" }, { write: (line: string) => void logLines.push(line) });
    vi.spyOn(server.services.logger, "child").mockImplementation((bindings) => capture.child(bindings));
    for (const level of ["info", "warn", "error", "debug"] as const)
      vi.spyOn(server.services.logger, level).mockImplementation(
        ((...args: unknown[]) => void logLines.push(JSON.stringify(args))) as never,
      );
    user = await createUserWithKey(server);
    client = api(server.url, user.key);
  });
  afterAll(async () => {
    vi.restoreAllMocks();
    await server?.teardown();
  });

  it("builds a zip of every supported transfer syntax to ready, and planted patient data appears nowhere", async () => {
    const ok = dx.files.filter((f) => f.expect === "ok");
    expect(ok.some((f) => f.phi)).toBe(true);
    const entries: Record<string, Buffer | string> = {
      "labels.csv": ["patient,label,image", ...ok.map((f, i) => `p${i},${i % 2},scans/${f.file}`)].join("\n") + "\n",
    };
    for (const f of ok) entries[`scans/${f.file}`] = dx.bytes(f.file);
    const zipPath = `${user.userId}/dicom/data.zip`;
    await server.services.bucket.write(zipPath, Readable.from(makeZip(entries)));

    const answers: string[] = [];
    const validate = await fetch(`${server.url}/v1/datasets/validate`, {
      method: "POST",
      headers: bearer(user.key, { "content-type": "application/json" }),
      body: JSON.stringify({ zip_gcloud: zipPath, task: "vision", label_cols: ["label"], images_col: "image" }),
    });
    const report = (await validate.json()) as any;
    answers.push(JSON.stringify(report));
    expect(report.valid).toBe(true);
    expect(report.warnings.map((w: any) => w.code)).toContain("dicom_identifying_headers");

    const post = await client.post("/v1/experiments", visionRequest(user.userId, 1, zipPath, { time_budget_s: 5 }));
    expect(post.status).toBe(202);
    answers.push(JSON.stringify(post.body));
    const done = await waitForStatus(client, 1, ["ready", "failed", "invalid_dataset"], 280_000);
    answers.push(JSON.stringify(done));
    expect(done.failure_reason).toBeNull();
    expect(done.status).toBe("ready");
    expect(done.model.kind).toBe("vision_classification");

    // Every answer a user or reviewer can get about this experiment, and what the model store holds.
    for (const p of [
      "/v1/experiments/1",
      "/v1/experiments/1/logs",
      "/v1/experiments/1/model-card",
      "/v1/experiments/1/report.html",
      "/v1/experiments",
    ]) {
      const r = await client.get(p);
      expect(r.status, p).toBe(200);
      answers.push(typeof r.body === "string" ? r.body : JSON.stringify(r.body));
    }
    const manifestPath = `models/${user.userId}/1/v1/manifest.json`;
    const chunks: Buffer[] = [];
    for await (const c of await server.services.bucket.read(manifestPath)) chunks.push(c as Buffer);
    const manifest = Buffer.concat(chunks).toString();
    expect(JSON.parse(manifest).input.image.dicom).toMatchObject({ window: { source: "file" }, invert_monochrome1: true });

    // A DICOM sent to the trained model is answered with the seed's 201 body.
    const pred = await fetch(`${server.url}/predict`, {
      method: "POST",
      headers: bearer(user.key, { "content-type": "application/json", "x-experiment-id": "1" }),
      body: JSON.stringify({ message: `data:application/dicom;base64,${dx.bytes(ok.find((f) => f.phi)!.file).toString("base64")}` }),
    });
    expect(pred.status).toBe(201);
    answers.push(await pred.text());

    expect(logLines.length).toBeGreaterThan(0);
    for (const [what, text] of [
      ["API answers", answers.join("\n")],
      ["server logs", logLines.join("\n")],
      ["manifest", manifest],
    ] as const)
      for (const v of PHI_VALUES) expect(text.includes(v), `${v} in ${what}`).toBe(false);
  });
});
