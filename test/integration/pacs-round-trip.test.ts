import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, createUserWithKey, type UserWithKey } from "../helpers/auth.js";
import { breastMnistDicom, type SourceDicom } from "../helpers/breastmnist-dicom.js";
import { dcmdump, haveDcmtk, srItems, srPolylines, srValues } from "../helpers/dcmtk.js";
import { primaryTarget } from "../helpers/db.js";
import { haveOrthanc, startOrthanc, type StoredInstance, type TestOrthanc } from "../helpers/orthanc.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { haveFixturePython, servingFixtures } from "../fixtures/serving/fixtures.js";
import { publishFixture } from "../fixtures/serving/publish.js";

// The PACS round trip (issue 51 item 3) with a real Orthanc (DICOMweb plugin, basic authentication on): a
// BreastMNIST image stored in it as DICOM; /predict on its WADO-RS URL answers 201 with the same body as without
// send_back, and with send_back on a Comprehensive SR and a Secondary Capture appear in that study, which dcmtk reads
// with the right references and values. Sending runs after the answer; the test waits for it through the service
// (pacsSendBack.idle), not a clock.
describe.skipIf(!haveFixturePython || !haveOrthanc || !haveDcmtk)("answers written back into the PACS", () => {
  const fx = servingFixtures();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pacs-round-trip-"));
  let server: TestServer;
  let orthanc: TestOrthanc;
  let user: UserWithKey;
  const SENSITIVITY = 0.875;
  const SPECIFICITY = 0.8125;

  beforeAll(async () => {
    orthanc = await startOrthanc();
    server = await startTestServer(primaryTarget(), { FETCH_ALLOW_HOSTS: "127.0.0.1", GRADCAM_MAX_SIDE: "64", PACS_RETRY_BASE_MS: "1" });
    user = await createUserWithKey(server);
    // The binary fixture model as a trained one describes itself: test-set sensitivity and specificity, positive class.
    const model = fs.mkdtempSync(path.join(dir, "model-"));
    fs.copyFileSync(path.join(fx.modelDir("vision_binary"), "model.onnx"), path.join(model, "model.onnx"));
    const manifest = JSON.parse(fs.readFileSync(path.join(fx.modelDir("vision_binary"), "manifest.json"), "utf8"));
    manifest.metrics.test.sensitivity = { value: SENSITIVITY, ci_low: 0.7, ci_high: 0.95 };
    manifest.metrics.test.specificity = { value: SPECIFICITY, ci_low: 0.7, ci_high: 0.9 };
    fs.writeFileSync(path.join(model, "manifest.json"), JSON.stringify(manifest));
    await publishFixture(server, user.userId, 1, model);
    await publishFixture(server, user.userId, 2, fx.modelDir("detection"));
    await api("PATCH", "/v1/experiments/1", { name: "Ecografía mamaria" });
    expect(
      (await api("PUT", "/v1/pacs", { dicomweb_url: `${orthanc.dicomWeb}/`, username: orthanc.username, password: orthanc.password }))
        .status,
    ).toBe(200);
  });
  afterAll(async () => {
    await server?.teardown();
    await orthanc?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const api = async (method: string, url: string, body?: unknown) => {
    const res = await fetch(`${server.url}${url}`, {
      method,
      headers: bearer(user.key, body === undefined ? {} : { "content-type": "application/json" }),
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, headers: res.headers, body: res.status === 204 ? null : ((await res.json()) as any) };
  };
  const predict = (message: string, experiment: number, query = "") =>
    api("POST", `/predict?experiment_id=${experiment}${query}`, { message });
  /** A new BreastMNIST image stored in Orthanc. */
  const stored = async (i: number): Promise<StoredInstance & { source: SourceDicom }> => {
    const source = await breastMnistDicom(i);
    return { ...(await orthanc.store(source.bytes)), source };
  };
  /** The study's objects other than the source, written to files for dcmtk, after the sends under way are done. */
  const written = async (s: StoredInstance) => {
    await server.services.pacsSendBack.idle();
    const files = (await orthanc.studyFiles(s.study)).filter((f) => f.orthancId !== s.orthancId);
    return files.map((f) => {
      const file = path.join(dir, `${f.orthancId}.dcm`);
      fs.writeFileSync(file, f.bytes);
      return { ...f, file };
    });
  };
  const audit = async () =>
    ((await api("GET", "/v1/audit?limit=100")).body.data as any[]).filter(
      (e) => e.action === "pacs_sent" || e.action === "pacs_send_failed",
    );

  it("tests the connection: the PACS answers with the credentials kept, and a wrong password is named", async () => {
    expect((await api("GET", "/v1/pacs")).body.pacs).toMatchObject({
      dicomweb_url: orthanc.dicomWeb,
      username: orthanc.username,
      has_password: true,
    });
    expect(JSON.stringify((await api("GET", "/v1/pacs")).body)).not.toContain(orthanc.password);
    expect((await api("POST", "/v1/pacs/test")).body).toMatchObject({ ok: true, status: 200 });
    await api("PUT", "/v1/pacs", { dicomweb_url: orthanc.dicomWeb, username: orthanc.username, password: "wrong" });
    expect((await api("POST", "/v1/pacs/test")).body).toEqual({ ok: false, status: 401, message: "the PACS refused the credentials" });
    // Leaving the password out keeps the one kept; it is back to the right one here.
    await api("PUT", "/v1/pacs", { dicomweb_url: orthanc.dicomWeb, username: orthanc.username, password: orthanc.password });
    await api("PUT", "/v1/pacs", { dicomweb_url: orthanc.dicomWeb, username: orthanc.username, secondary_capture: true });
    expect((await api("POST", "/v1/pacs/test")).body.ok).toBe(true);
    // The kept password never follows the address to another server, and an address holding credentials is refused.
    const moved = await api("PUT", "/v1/pacs", { dicomweb_url: "http://127.0.0.2:1/dicom-web", username: orthanc.username });
    expect([moved.status, moved.body.error.details[0].field]).toEqual([400, "password"]);
    const inUrl = await api("PUT", "/v1/pacs", { dicomweb_url: `http://u:p@127.0.0.1/dicom-web` });
    expect([inUrl.status, inUrl.body.error.details[0].field]).toEqual([400, "dicomweb_url"]);
    expect((await api("GET", "/v1/pacs")).body.pacs.dicomweb_url).toBe(orthanc.dicomWeb);
  });

  it("answers 201 with the same body, and writes an SR and a secondary capture into the instance's study", async () => {
    const s = await stored(0);
    const plain = await predict(s.url, 1);
    const sent = await predict(s.url, 1, "&send_back=true");
    expect([plain.status, sent.status]).toEqual([201, 201]);
    expect(sent.body).toEqual(plain.body);
    expect(sent.headers.get("x-builder-pacs")).toBe("sending");
    expect(plain.headers.get("x-builder-pacs")).toBeNull();

    const objects = await written(s);
    expect(objects.map((o) => o.sopClass).sort()).toEqual(["1.2.840.10008.5.1.4.1.1.7", "1.2.840.10008.5.1.4.1.1.88.33"]);
    const sr = objects.find((o) => o.sopClass.endsWith(".88.33"))!;
    const sc = objects.find((o) => o.sopClass.endsWith(".1.7"))!;
    for (const o of [sr, sc]) {
      const dump = dcmdump(o.file);
      expect(dump).toContain(`(0020,000d) UI [${s.study}]`);
      expect(dump).not.toContain(`(0020,000e) UI [${s.series}]    `); // a series of its own
      expect(dump).toContain("(0008,0070) LO [Builder]");
      expect(dump).toContain("(0008,1090) LO [Ecografía mamaria]");
      expect(dump).toContain("(0010,0010) PN [Pérez^Lucía]");
      expect(dump).toContain("(0010,0020) LO [BMN-0]");
    }
    // The SR: the model, its scores as /predict gave them, the decision and the operating point's figures.
    const items = srItems(sr.file);
    const classes = Object.values(plain.body.classes as Record<string, string>);
    expect(srValues(items, "Algorithm Name")).toEqual(["Ecografía mamaria"]);
    expect(srValues(items, "Algorithm Version")).toEqual(["1"]);
    expect(srValues(items, "Model score").map(Number)).toEqual((plain.body.score as number[]).map((v) => Number(v.toPrecision(6))));
    const decided = classes.filter((_, i) => plain.body.prediccion[i] === 1);
    expect(srValues(items, "Decision at operating point")).toEqual([decided.join(", ")]);
    expect(srValues(items, "Sensitivity at operating point (test set)")).toEqual([String(SENSITIVITY)]);
    expect(srValues(items, "Specificity at operating point (test set)")).toEqual([String(SPECIFICITY)]);
    expect(srValues(items, "Comment")).toEqual(["NOT FOR DIAGNOSIS - research use only"]);
    const srDump = dcmdump(sr.file);
    expect(srDump).toContain(`(0008,1155) UI [${s.instance}]`); // evidence and the image item: the source instance
    expect(srDump).toContain(`(0020,000e) UI [${s.series}]`);
    // The secondary capture: RGB, the caption burned in and said in ImageComments, derived from the source.
    const scDump = dcmdump(sc.file);
    expect(scDump).toContain("(0028,0004) CS [RGB]");
    expect(scDump).toContain("(0028,0301) CS [YES]");
    expect(scDump).toMatch(/\(0020,4000\) LT \[Builder - Ecografía mamaria - model version 1 - decision: [^\]]+\| NOT FOR DIAGNOSIS/);
    expect(scDump).toContain(`(0008,1155) UI [${s.instance}]`);
    // Each send is in the audit log, with Builder's own UIDs and no patient data.
    const sends = (await audit()).filter((e) => e.details.study_sha256);
    expect(
      sends
        .slice(0, 2)
        .map((e) => [e.action, e.details.object, e.details.status])
        .sort(),
    ).toEqual([
      ["pacs_sent", "sc", 200],
      ["pacs_sent", "sr", 200],
    ]);
    const uids = objects.map((o) => /\(0008,0018\) UI \[([^\]]+)\]/.exec(dcmdump(o.file))![1]);
    expect(
      sends
        .slice(0, 2)
        .map((e) => e.details.sop_instance_uid)
        .sort(),
    ).toEqual(uids.sort());
    expect(JSON.stringify(sends)).not.toMatch(/BMN-0|Pérez|Lucía/);
    expect(JSON.stringify(sends)).not.toContain(s.study);
  });

  it("writes a detection model's boxes as SR coordinates equal to /predict's boxes", async () => {
    const s = await stored(1);
    const r = await predict(s.url, 2, "&send_back=1");
    expect(r.status).toBe(201);
    const sr = (await written(s)).find((o) => o.sopClass.endsWith(".88.33"))!;
    const boxes = r.body.boxes as number[][];
    const polylines = srPolylines(sr.file);
    expect(polylines).toHaveLength(boxes.length);
    polylines.forEach((p, i) => {
      const [x1, y1, x2, y2] = boxes[i];
      // FL: the coordinates as 32-bit floats.
      [x1, y1, x2, y1, x2, y2, x1, y2, x1, y1].forEach((v, k) => expect(p[k]).toBeCloseTo(Math.fround(v), 3));
    });
    expect(srValues(srItems(sr.file), "Model score").length).toBe(boxes.length);
  });

  it("follows the model's setting: every DICOMweb link of the PACS is sent back, other images are answered only", async () => {
    expect((await api("PUT", "/v1/models/1/pacs", { send_back: true })).body).toEqual({ send_back: true });
    expect((await api("GET", "/v1/models/1/pacs")).body).toEqual({ send_back: true });
    const s = await stored(2);
    expect((await predict(s.url, 1)).headers.get("x-builder-pacs")).toBe("sending");
    expect((await written(s)).length).toBe(2);
    const quiet = await stored(3);
    expect((await predict(quiet.url, 1, "&send_back=false")).headers.get("x-builder-pacs")).toBeNull();
    expect((await written(quiet)).length).toBe(0);
    // An image that is no DICOMweb link of the PACS is answered, and nothing is sent.
    const dataUri = `data:application/dicom;base64,${(await breastMnistDicom(6)).bytes.toString("base64")}`;
    const r = await predict(dataUri, 1);
    expect([r.status, r.headers.get("x-builder-pacs")]).toEqual([201, null]);
    await api("PUT", "/v1/models/1/pacs", { send_back: false });
    expect((await api("PUT", "/v1/models/99/pacs", { send_back: true })).status).toBe(404);
  });

  it("refuses send_back=true where it cannot be done, before predicting, in Spanish when asked", async () => {
    const dataUri = `data:application/dicom;base64,${(await breastMnistDicom(4)).bytes.toString("base64")}`;
    const r = await predict(dataUri, 1, "&send_back=true");
    expect([r.status, r.body.error, r.body.code]).toEqual([400, 1, "send_back_unavailable"]);
    expect(r.body.message).toMatch(/DICOMweb WADO-RS/);
    const es = await fetch(`${server.url}/predict?experiment_id=1&send_back=true`, {
      method: "POST",
      headers: bearer(user.key, { "content-type": "application/json", "accept-language": "es" }),
      body: JSON.stringify({ message: dataUri }),
    });
    const spanish = ((await es.json()) as any).message as string;
    expect(spanish).toMatch(/debe ser un enlace DICOMweb WADO-RS/);
    expect(spanish).toMatch(/no se predijo nada/);
  });
});
