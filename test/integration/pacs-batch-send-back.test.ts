import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, createUserWithKey, type UserWithKey } from "../helpers/auth.js";
import { breastMnistDicom } from "../helpers/breastmnist-dicom.js";
import { haveDcmtk, srItems, srPolylines, srValues } from "../helpers/dcmtk.js";
import { primaryTarget } from "../helpers/db.js";
import { haveOrthanc, startOrthanc, type StoredInstance, type TestOrthanc } from "../helpers/orthanc.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { makeZip } from "../helpers/zips.js";
import { haveFixturePython, servingFixtures } from "../fixtures/serving/fixtures.js";
import { publishFixture } from "../fixtures/serving/publish.js";

// Send to PACS on batch scoring (issue 51 item 3) with a real Orthanc: a zip of DICOM images (stored in Orthanc)
// scored with ?send_back=true writes each image's answer into its own study as an SR, with the scores of the batch's
// results.csv; the same zip sent again leaves one SR per study (derived UIDs); a PNG in the zip is counted as not
// sent. And a detection model's boxes, written back from a batch, read back over DICOMweb JSON (Orthanc's WADO-RS
// metadata, not Builder's code nor dcmtk) as the SR's SCOORD data, equal /predict's boxes for the same image.

const SR_CLASS = "1.2.840.10008.5.1.4.1.1.88.33";

/** Every value of a tag anywhere in a DICOM JSON object (nested sequences included), in document order. */
function valuesOf(node: unknown, tag: string): unknown[][] {
  if (Array.isArray(node)) return node.flatMap((n) => valuesOf(n, tag));
  if (!node || typeof node !== "object") return [];
  return Object.entries(node as Record<string, { Value?: unknown[] }>).flatMap(([k, v]) => [
    ...(k === tag && v?.Value ? [v.Value] : []),
    ...valuesOf(v?.Value ?? [], tag),
  ]);
}

describe.skipIf(!haveFixturePython || !haveOrthanc || !haveDcmtk)("batch scoring with send back to the PACS", () => {
  const fx = servingFixtures();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pacs-batch-"));
  let server: TestServer;
  let orthanc: TestOrthanc;
  let user: UserWithKey;

  beforeAll(async () => {
    orthanc = await startOrthanc();
    server = await startTestServer(primaryTarget(), { FETCH_ALLOW_HOSTS: "127.0.0.1", PACS_RETRY_BASE_MS: "1" });
    user = await createUserWithKey(server);
    await publishFixture(server, user.userId, 1, fx.modelDir("vision_binary"));
    await publishFixture(server, user.userId, 2, fx.modelDir("detection"));
  });
  afterAll(async () => {
    await server?.teardown();
    await orthanc?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const api = async (method: string, url: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(`${server.url}${url}`, {
      method,
      headers: bearer(user.key, body === undefined ? headers : { "content-type": "application/json", ...headers }),
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text.startsWith("{") ? JSON.parse(text) : text } as { status: number; body: any };
  };
  const batch = async (experiment: number, zip: Buffer, query = "&send_back=true", lang = "en") => {
    const res = await fetch(`${server.url}/v1/models/${experiment}/batch?file_name=pacs.zip${query}`, {
      method: "POST",
      headers: bearer(user.key, { "content-type": "application/zip", "accept-language": lang }),
      body: new Uint8Array(zip),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  const finished = async (batchId: string) => {
    await server.services.batches.idle();
    return (await api("GET", `/v1/batches/${batchId}`)).body;
  };
  /** The SRs in a study, as files for dcmtk. */
  const srsIn = async (s: StoredInstance) =>
    (await orthanc.studyFiles(s.study))
      .filter((f) => f.sopClass === SR_CLASS)
      .map((f) => {
        const file = path.join(dir, `${f.orthancId}.dcm`);
        fs.writeFileSync(file, f.bytes);
        return { ...f, file };
      });

  it("refuses send_back=true without a PACS, or for a table, before scoring", async () => {
    const zip = makeZip({ "a.dcm": (await breastMnistDicom(0)).bytes });
    const none = await batch(1, zip, "&send_back=true", "es");
    expect([none.status, none.body.error.code]).toEqual([400, "send_back_unavailable"]);
    expect(none.body.error.message).toBe("send_back: no hay ningún PACS configurado (Ajustes → PACS); no se puntuó nada");
    expect(
      (await api("PUT", "/v1/pacs", { dicomweb_url: orthanc.dicomWeb, username: orthanc.username, password: orthanc.password })).status,
    ).toBe(200);
    const res = await fetch(`${server.url}/v1/models/1/batch?send_back=true`, {
      method: "POST",
      headers: bearer(user.key, { "content-type": "text/csv" }),
      body: "id,x\n1,2\n",
    });
    const table = (await res.json()) as any;
    expect([res.status, table.error.code]).toEqual([400, "send_back_unavailable"]);
    expect(table.error.details[0].field).toBe("send_back");
  });

  it("writes each DICOM's answer into its study as an SR with the batch's scores, once however often it is sent", async () => {
    const stored: Array<StoredInstance & { bytes: Buffer }> = [];
    for (const i of [10, 11, 12]) {
      const src = await breastMnistDicom(i);
      stored.push({ ...(await orthanc.store(src.bytes)), bytes: src.bytes });
    }
    const entries: Record<string, Buffer> = Object.fromEntries(stored.map((s, i) => [`img${i}.dcm`, s.bytes]));
    entries["photo.png"] = fx.image("grey.png");
    const zip = makeZip(entries);
    const first = await batch(1, zip);
    expect(first.status).toBe(202);
    expect(first.body.send_back).toBe(true);
    const done = await finished(first.body.batch_id);
    expect(done).toMatchObject({ status: "done", done: 4, failed: 0, send_back: true, pacs_sent: 3, pacs_failed: 1 });

    // Each study now holds one SR for its image, with the scores results.csv gives that image.
    const results = (await api("GET", `/v1/batches/${first.body.batch_id}/results.csv`)).body as string;
    const lines = results.trim().split("\n");
    const header = lines[0].split(",");
    const scoreCols = header.map((h, i) => [h, i] as const).filter(([h]) => h.startsWith("score_"));
    const srUids: string[] = [];
    for (const [i, s] of stored.entries()) {
      const srs = await srsIn(s);
      expect(srs).toHaveLength(1);
      const row = lines.find((l) => l.startsWith(`img${i}.dcm,`))!.split(",");
      const items = srItems(srs[0].file);
      expect(srValues(items, "Model score").map(Number)).toEqual(scoreCols.map(([, at]) => Number(Number(row[at]).toPrecision(6))));
      srUids.push(srs[0].orthancId);
    }

    // Sent again: the same objects (derived UIDs), so each study still holds exactly one SR, the same one.
    const again = await finished((await batch(1, zip)).body.batch_id);
    expect(again).toMatchObject({ status: "done", pacs_sent: 3 });
    for (const [i, s] of stored.entries()) {
      const srs = await srsIn(s);
      expect(srs.map((x) => x.orthancId)).toEqual([srUids[i]]);
    }
    // Every send is audited; the PNG's says why nothing was sent.
    const audit = ((await api("GET", "/v1/audit?limit=100")).body.data as any[]).filter((e) => e.action.startsWith("pacs_send"));
    expect(audit.filter((e) => e.action === "pacs_send_failed").length).toBeGreaterThanOrEqual(2);
  });

  it("a detection model's boxes come back as SR coordinates equal to /predict's, read over DICOMweb JSON", async () => {
    // Images with at least one box from the fixture model, so the comparison compares something.
    const candidates: Array<StoredInstance & { boxes: number[][] }> = [];
    for (let i = 20; i < 40 && candidates.length < 2; i++) {
      const src = await breastMnistDicom(i);
      const s = await orthanc.store(src.bytes);
      const r = await api("POST", "/predict?experiment_id=2", { message: s.url });
      expect(r.status).toBe(201);
      if ((r.body.boxes as number[][]).length) candidates.push({ ...s, boxes: r.body.boxes });
    }
    expect(candidates.length).toBe(2);
    const zip = makeZip(
      Object.fromEntries(
        await Promise.all(
          candidates.map(async (c, i) => [
            `det${i}.dcm`,
            Buffer.from(await (await orthanc.rest(`/instances/${c.orthancId}/file`)).arrayBuffer()),
          ]),
        ),
      ),
    );
    const done = await finished((await batch(2, zip)).body.batch_id);
    expect(done).toMatchObject({ status: "done", pacs_sent: 2, pacs_failed: 0 });
    for (const c of candidates) {
      const [sr] = await srsIn(c);
      // QIDO-RS finds the SR in the study; WADO-RS metadata gives its content as DICOM JSON.
      const meta = (await (
        await orthanc.rest(`/dicom-web/studies/${c.study}/instances?includefield=00080016`, {
          headers: { accept: "application/dicom+json" },
        })
      ).json()) as Array<Record<string, { Value?: string[] }>>;
      const srMeta = meta.find((m) => m["00080016"]?.Value?.[0] === SR_CLASS)!;
      const [seriesUid, sopUid] = [srMeta["0020000E"].Value![0], srMeta["00080018"].Value![0]];
      const metadata = await (
        await orthanc.rest(`/dicom-web/studies/${c.study}/series/${seriesUid}/instances/${sopUid}/metadata`, {
          headers: { accept: "application/dicom+json" },
        })
      ).json();
      // GraphicData (0070,0022) of each SCOORD: the closed polyline x1,y1 x2,y1 x2,y2 x1,y2 x1,y1 of each box.
      const polylines = valuesOf(metadata, "00700022") as number[][];
      expect(polylines).toHaveLength(c.boxes.length);
      polylines.forEach((p, i) => {
        const [x1, y1, x2, y2] = c.boxes[i];
        [x1, y1, x2, y1, x2, y2, x1, y2, x1, y1].forEach((v, k) => expect(p[k]).toBeCloseTo(Math.fround(v), 3));
      });
      // dcmtk reads the same coordinates from the file Orthanc stored.
      const fromDcmtk = srPolylines(sr.file);
      expect(fromDcmtk).toHaveLength(polylines.length);
      fromDcmtk.forEach((p, i) => p.forEach((v, k) => expect(v).toBeCloseTo(polylines[i][k], 3)));
    }
  });
});
