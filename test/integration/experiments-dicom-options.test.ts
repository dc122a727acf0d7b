import fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assertJobSpec } from "../../src/contract/validate.js";
import { parseStudy } from "../../src/experiments/study.js";
import { buildSpec } from "../../src/jobs/spec.js";
import { primaryTarget } from "../helpers/db.js";
import type { TestServer } from "../helpers/server.js";
import { dataRequest, startExperimentServer, visionRequest, type Api } from "./experiments-fixtures.js";

// Issue 41: dicom_window and dicom_frames on POST /v1/experiments, validated at the edge with the field named, stored
// in the study as the job spec's options.dicom (a preset with its center and width written out). No training runs
// here: the zips do not exist, so each accepted experiment stops at its dataset stage.

const PRESETS = JSON.parse(fs.readFileSync(new URL("../../pipelines/contract/dicom-window-presets.json", import.meta.url), "utf8"))
  .presets as Record<string, { center: number; width: number }>;

describe(`POST /v1/experiments dicom_window / dicom_frames on ${primaryTarget()}`, () => {
  let server: TestServer;
  let user: { userId: string; key: string };
  let client: Api;
  let next = 100;
  const post = (extra: Record<string, unknown>) =>
    client.post("/v1/experiments", visionRequest(user.userId, next++, `${user.userId}/dicom/missing.zip`, extra));

  beforeAll(async () => {
    ({ server, user, client } = await startExperimentServer());
  });
  afterAll(async () => {
    await server?.teardown();
  });

  it.each([
    [
      { dicom_window: "kidney" },
      "dicom_window",
      /preset name \(lung, mediastinum, bone, brain, soft_tissue, abdomen, liver\), not 'kidney'/,
    ],
    [{ dicom_window: 40 }, "dicom_window", /"file", a preset name .* or \{"center": number, "width": number\}/],
    [{ dicom_window: { center: 40, width: 0 } }, "dicom_window", /width must be at least 1/],
    [{ dicom_window: { center: 40 } }, "dicom_window", /or \{"center": number, "width": number\}/],
    [{ dicom_window: { center: 40, width: 400, level: 3 } }, "dicom_window", /level/],
    [{ dicom_frames: "middle" }, "dicom_frames", /must be "first" or "all"/],
  ])("refuses %j with a 400 naming the field", async (extra, field, message) => {
    const res = await post(extra);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("invalid_request");
    const detail = res.body.error.details.find((d: { field: string }) => d.field.startsWith(field));
    expect(detail, JSON.stringify(res.body.error.details)).toBeDefined();
    expect(detail.message).toMatch(message);
  });

  it("refuses DICOM options on a table experiment", async () => {
    const res = await client.post(
      "/v1/experiments",
      dataRequest(user.userId, next++, `${user.userId}/t/data.zip`, ["a"], { dicom_frames: "all" }),
    );
    expect(res.status).toBe(400);
    expect(res.body.error.details).toContainEqual(
      expect.objectContaining({ field: "dicom_frames", message: expect.stringMatching(/task vision/) }),
    );
  });

  it("stores a preset with its center and width, an explicit window, the frame policy, and nothing when neither is set", async () => {
    const lung = await post({ dicom_window: "lung", dicom_frames: "all" });
    expect(lung.status).toBe(202);
    expect(lung.body.study.dicom).toEqual({ window: { source: "preset", name: "lung", center: -600, width: 1500 }, frames: "all" });
    expect(PRESETS.lung).toEqual({ center: -600, width: 1500 });

    const explicit = await post({ dicom_window: { center: 300, width: 1 } });
    expect(explicit.status).toBe(202);
    expect(explicit.body.study.dicom).toEqual({ window: { source: "explicit", center: 300, width: 1 }, frames: "first" });

    const file = await post({ dicom_window: "file" });
    expect(file.body.study.dicom).toEqual({ window: { source: "file" }, frames: "first" });

    const plain = await post({});
    expect(plain.status).toBe(202);
    expect(plain.body.study.dicom).toBeNull();

    // Every preset of the shared table is accepted and stored with its own values.
    for (const [name, values] of Object.entries(PRESETS)) {
      const res = await post({ dicom_window: name });
      expect(res.status, name).toBe(202);
      expect(res.body.study.dicom.window).toEqual({ source: "preset", name, ...values });
    }

    // The stored study becomes the job spec's options.dicom, which the job-spec schema accepts.
    const prepared = {
      problem: "binary",
      root: "/d",
      table: "/d/t.csv",
      idCol: "patient_id",
      imagesCol: "image",
      split: { seed: 1, train: ["a"], val: ["b"], test: ["c"] },
      sha256: "0".repeat(64),
    };
    const study = parseStudy(lung.body.study);
    const spec = buildSpec(server.services.config, { id: "x" }, study, prepared as never, "/tmp/out");
    expect(spec.options?.dicom).toEqual(lung.body.study.dicom);
    expect(() => assertJobSpec(spec)).not.toThrow();
    const without = buildSpec(server.services.config, { id: "y" }, parseStudy(plain.body.study), prepared as never, "/tmp/out");
    expect(without.options).not.toHaveProperty("dicom");
  });
});
