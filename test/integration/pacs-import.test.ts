import fs from "node:fs";
import path from "node:path";
import { sql } from "drizzle-orm";
import yauzl from "yauzl";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dataSet, el, newUid, writePart10 } from "../../src/dicom/write.js";
import { dcmdump, haveDcmtk } from "../helpers/dcmtk.js";
import { bearer, createUserWithKey, type UserWithKey } from "../helpers/auth.js";
import { breastMnistPixels } from "../helpers/breastmnist-dicom.js";
import { primaryTarget } from "../helpers/db.js";
import { haveOrthanc, startOrthanc, type StoredInstance, type TestOrthanc } from "../helpers/orthanc.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { readObject } from "../helpers/storage.js";

// Build from the PACS (issue 51 item 2) with a real Orthanc: BreastMNIST images stored in it as DICOM with
// identifying attributes planted in them; a CSV of their UIDs (instances, a series, a study) and labels becomes a
// dataset zip in the caller's folder that today's checks find valid; the bad UIDs are named with the reason, and
// no planted value, nor any source UID, is in anything Builder stored (the zip's files, the data folder, the database).

const PLANTED = {
  name: "Zamora^Remedios",
  birth: "19520317",
  institution: "Hospital San Plantado",
  address: "Calle Falsa 123, Macondo",
  physician: "Quimby^Julius",
  other_id: "NHC-OTHER-5566",
  private: "PRIVATE-SECRET-42",
  description: "Ecografia de Remedios Zamora",
};

/** Patient p's image k, with the planted attributes and a private element; patient ids HC-<p>. */
async function plantedDicom(p: number, k: number, study: string, series: string): Promise<Buffer> {
  const ds = dataSet({
    "00080005": el.str("CS", "ISO_IR 192"),
    "00080016": el.str("UI", "1.2.840.10008.5.1.4.1.1.7"),
    "00080018": el.str("UI", newUid()),
    "00080020": el.str("DA", "20260412"),
    "00080050": el.str("SH", `ACC-PLANT-${p}`),
    "00080060": el.str("CS", "US"),
    "00080064": el.str("CS", "WSD"),
    "00080080": el.str("LO", PLANTED.institution),
    "00080090": el.str("PN", PLANTED.physician),
    "00081030": el.str("LO", PLANTED.description),
    "00100010": el.str("PN", PLANTED.name),
    "00100020": el.str("LO", `HC-${p}-PLANT`),
    "00100030": el.str("DA", PLANTED.birth),
    "00100040": el.str("CS", "F"),
    "00101000": el.str("LO", PLANTED.other_id),
    "00101040": el.str("LO", PLANTED.address),
    "0020000D": el.str("UI", study),
    "0020000E": el.str("UI", series),
    "00200013": el.str("IS", k + 1),
    "00280002": { vr: "US", value: 1 },
    "00280004": el.str("CS", "MONOCHROME2"),
    "00280010": { vr: "US", value: 28 },
    "00280011": { vr: "US", value: 28 },
    "00280100": { vr: "US", value: 8 },
    "00280101": { vr: "US", value: 8 },
    "00280102": { vr: "US", value: 7 },
    "00280103": { vr: "US", value: 0 },
    "00090010": el.str("LO", "PLANTED VENDOR"),
    "00091001": el.str("LO", PLANTED.private),
    "7FE00010": { vr: "OB", value: await breastMnistPixels(p * 2 + k) },
  });
  return writePart10(ds, "utf8");
}

async function unzip(bytes: Buffer): Promise<Map<string, Buffer>> {
  const zip = await new Promise<yauzl.ZipFile>((res, rej) =>
    yauzl.fromBuffer(bytes, { lazyEntries: true }, (e, z) => (e ? rej(e) : res(z!))),
  );
  const out = new Map<string, Buffer>();
  await new Promise<void>((resolve, reject) => {
    zip.on("entry", (entry: yauzl.Entry) =>
      zip.openReadStream(entry, async (err, s) => {
        if (err || !s) return reject(err);
        const chunks: Buffer[] = [];
        for await (const c of s) chunks.push(c as Buffer);
        out.set(entry.fileName, Buffer.concat(chunks));
        zip.readEntry();
      }),
    );
    zip.on("end", resolve);
    zip.on("error", reject);
    zip.readEntry();
  });
  return out;
}

describe.skipIf(!haveOrthanc)("a dataset built from the PACS", () => {
  let server: TestServer;
  let orthanc: TestOrthanc;
  let user: UserWithKey;
  /** 12 patients, one study of two images each; patient p's label is benign for even p. */
  const patients: Array<{ label: string; images: StoredInstance[] }> = [];

  beforeAll(async () => {
    orthanc = await startOrthanc();
    server = await startTestServer(primaryTarget(), { FETCH_ALLOW_HOSTS: "127.0.0.1" });
    user = await createUserWithKey(server);
    for (let p = 0; p < 12; p++) {
      const [study, series] = [newUid(), newUid()];
      const images = [];
      for (let k = 0; k < 2; k++) images.push(await orthanc.store(await plantedDicom(p, k, study, series)));
      patients.push({ label: p % 2 ? "malignant" : "benign", images });
    }
  });
  afterAll(async () => {
    await server?.teardown();
    await orthanc?.stop();
  });

  const api = async (method: string, url: string, body?: unknown) => {
    const res = await fetch(`${server.url}${url}`, {
      method,
      headers: bearer(user.key, body === undefined ? {} : { "content-type": "application/json", "accept-language": "en" }),
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as any };
  };

  it("without a PACS configured, says so", async () => {
    const r = await api("POST", "/v1/datasets/from-pacs", {
      csv: "uid,label\n1.2.3,benign\n",
      zip_gcloud: `${user.userId}/pacs/none.zip`,
      label_cols: ["label"],
    });
    expect([r.status, r.body.error.message]).toEqual([404, expect.stringContaining("Settings → PACS")]);
  });

  it("retrieves instances, a series and a study, de-identifies them, names the bad UIDs, and the dataset validates", async () => {
    await api("PUT", "/v1/pacs", { dicomweb_url: orthanc.dicomWeb, username: orthanc.username, password: orthanc.password });
    // Patients 0-9 by their instances (one row each), patient 10 by its series, patient 11 by its study; then a UID
    // the PACS does not have and one that is no UID.
    const lines = ["uid,label,site"];
    for (let p = 0; p < 10; p++) for (const s of patients[p].images) lines.push(`${s.instance},${patients[p].label},north`);
    lines.push(`${patients[10].images[0].series},${patients[10].label},south`);
    lines.push(`${patients[11].images[0].study},${patients[11].label},south`);
    lines.push("1.2.826.0.1.999999.1,benign,south", "not-a-uid,malignant,south");
    const zipPath = `${user.userId}/pacs/breast.zip`;
    const r = await api("POST", "/v1/datasets/from-pacs", {
      csv: lines.join("\n"),
      zip_gcloud: zipPath,
      label_cols: ["label"],
      subgroup_cols: ["site"],
    });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ zip_gcloud: zipPath, images_col: "image", rows: 24, instances: 24 });
    expect(r.body.failed).toEqual([
      {
        row: 23,
        uid: "1.2.826.0.1.999999.1",
        reason: "no study, series or instance with this UID in the PACS",
        reason_es: "el PACS no tiene ningún estudio, serie o instancia con este UID",
      },
      {
        row: 24,
        uid: "not-a-uid",
        reason: "not a DICOM UID (digits and dots, at most 64)",
        reason_es: "no es un UID DICOM (dígitos y puntos, como máximo 64)",
      },
    ]);
    // The report says what de-identification did.
    const d = r.body.deidentification;
    expect(d.profile).toMatch(/PS3\.15 Basic Application Confidentiality Profile/);
    const replaced = Object.fromEntries(d.replaced.map((x: any) => [x.attribute, [x.with, x.instances]]));
    expect(replaced).toMatchObject({
      PatientName: ["empty", 24],
      PatientID: ["empty", 24],
      PatientBirthDate: ["empty", 24],
      AccessionNumber: ["empty", 24],
      StudyInstanceUID: ["a new UID", 24],
      SOPInstanceUID: ["a new UID", 24],
    });
    const removed = d.removed.map((x: any) => x.attribute);
    expect(removed).toEqual(expect.arrayContaining(["InstitutionName", "PatientAddress", "OtherPatientIDs", "StudyDescription"]));
    expect(removed).not.toContain("(0008,0005)"); // the character set is rewritten, not removed
    expect(d.private_removed).toBe(48); // the private creator and the private element, in each of the 24
    // Today's checks on the result: valid, 12 patients, no identifying header left.
    expect(r.body.report.valid).toBe(true);
    expect(r.body.report.summary).toMatchObject({ rows: 24, images: 24, patients: 12 });
    expect(JSON.stringify(r.body.report)).not.toContain("dicom_identifying_headers");

    // The zip: the CSV in today's layout, a patient's two images under one pseudonym, UIDs remapped consistently.
    const files = await unzip(await readObject(server.services.bucket, zipPath));
    const csv = files.get("dataset.csv")!.toString("utf8").trim().split("\n");
    expect(csv[0]).toBe("patient_id,image,label,site");
    expect(csv.length).toBe(25);
    const byPatient = new Map<string, string[]>();
    for (const line of csv.slice(1)) {
      const [pid, image] = line.split(",");
      byPatient.set(pid, [...(byPatient.get(pid) ?? []), image]);
      expect(files.has(image)).toBe(true);
    }
    expect([...byPatient.values()].map((v) => v.length)).toEqual(Array(12).fill(2));

    // Nothing planted, and no source UID, in anything Builder stored: the zip's files, the data folder, the database.
    const needles = [
      ...Object.values(PLANTED),
      "Zamora",
      "PLANT",
      ...patients.flatMap((p) => p.images.flatMap((s) => [s.study, s.series, s.instance])),
    ];
    const haystacks: Array<[string, Buffer]> = [...files].map(([n, b]) => [`zip:${n}`, b]);
    for (const f of fs.readdirSync(server.dataDir, { recursive: true, withFileTypes: true }) as fs.Dirent[])
      if (f.isFile()) haystacks.push([f.name, fs.readFileSync(path.join(f.parentPath, f.name))]);
    const tables = (await server.services.db.execute(
      sql`select table_name from information_schema.tables where table_schema = 'public'`,
    )) as any;
    for (const t of (tables.rows ?? tables) as Array<{ table_name: string }>)
      haystacks.push([
        `db:${t.table_name}`,
        Buffer.from(JSON.stringify(await server.services.db.execute(sql.raw(`select * from "${t.table_name}"`)))),
      ]);
    expect(haystacks.length).toBeGreaterThan(30);
    const found = haystacks.flatMap(([where, bytes]) =>
      needles.filter((n) => bytes.includes(Buffer.from(n, "utf8"))).map((n) => `${n} in ${where}`),
    );
    expect(found).toEqual([]);
    // The files are still the images: the pixel data is the source's, byte for byte.
    const first = files.get(csv[1].split(",")[1])!;
    const pixels = [];
    for (let i = 0; i < 24; i++) pixels.push(Buffer.from(await breastMnistPixels(i)));
    expect(pixels.some((px) => first.subarray(first.length - 784).equals(px))).toBe(true);
    // dcmtk reads the written file: de-identification declared, patient attributes empty.
    if (haveDcmtk) {
      const file = path.join(server.dataDir, "check.dcm");
      fs.writeFileSync(file, first);
      const dump = dcmdump(file);
      fs.rmSync(file);
      expect(dump).toContain("(0012,0062) CS [YES]");
      expect(dump).toMatch(/\(0010,0010\) PN \(no value available\)/);
      expect(dump).toContain("(0028,0010) US 28");
    }
  });

  it("with Accept: text/event-stream, reports progress and each unusable row as it happens, then the 201 body", async () => {
    await api("PUT", "/v1/pacs", { dicomweb_url: orthanc.dicomWeb, username: orthanc.username, password: orthanc.password });
    const lines = ["uid,label"];
    for (let p = 0; p < 4; p++) for (const s of patients[p].images) lines.push(`${s.instance},${patients[p].label}`);
    lines.push(`${patients[5].images[0].study},${patients[5].label}`, "1.2.826.0.1.999999.3,benign", "x.y,benign");
    const res = await fetch(`${server.url}/v1/datasets/from-pacs`, {
      method: "POST",
      headers: bearer(user.key, { "content-type": "application/json", accept: "text/event-stream", "accept-language": "es" }),
      body: JSON.stringify({ csv: lines.join("\n"), zip_gcloud: `${user.userId}/pacs/stream.zip`, label_cols: ["label"] }),
    });
    expect([res.status, res.headers.get("content-type")]).toEqual([200, expect.stringContaining("text/event-stream")]);
    const events = (await res.text())
      .split("\n\n")
      .filter(Boolean)
      .map((block) => ({ event: /^event: (.*)$/m.exec(block)![1], data: JSON.parse(/^data: (.*)$/m.exec(block)![1]) }));
    const kinds = events.map((e) => e.event);
    expect(kinds.at(-1)).toBe("done");
    const progress = events.filter((e) => e.event === "progress").map((e) => e.data);
    // Each phase in order, each starting at 0 and ending at its total: 11 rows located, 10 instances retrieved.
    expect([...new Set(progress.map((p) => p.phase))]).toEqual(["locating", "retrieving", "storing", "checking"]);
    expect(progress.filter((p) => p.phase === "locating").at(-1)).toEqual({ phase: "locating", done: 11, total: 11, failed: 2 });
    expect(progress.filter((p) => p.phase === "retrieving").at(-1)).toEqual({ phase: "retrieving", done: 10, total: 10, failed: 2 });
    for (const phase of ["locating", "retrieving"]) {
      const dones = progress.filter((p) => p.phase === phase).map((p) => p.done);
      expect(dones[0]).toBe(0);
      expect(dones).toEqual([...dones].sort((a, b) => a - b));
    }
    // The two bad rows, named as they were found (before the end), with the reason in both languages.
    const failed = events.filter((e) => e.event === "failed").map((e) => e.data);
    expect(failed.sort((a, b) => a.row - b.row)).toEqual([
      expect.objectContaining({
        row: 10,
        uid: "1.2.826.0.1.999999.3",
        reason_es: "el PACS no tiene ningún estudio, serie o instancia con este UID",
      }),
      expect.objectContaining({ row: 11, uid: "x.y", reason: "not a DICOM UID (digits and dots, at most 64)" }),
    ]);
    expect(kinds.indexOf("failed")).toBeLessThan(kinds.indexOf("done"));
    const done = events.at(-1)!.data;
    expect(done).toMatchObject({ zip_gcloud: `${user.userId}/pacs/stream.zip`, rows: 11, instances: 10, images_col: "image" });
    // Today's report on it (five patients are too few to build from, which is the report's business, not the stream's).
    expect(done.report.summary).toMatchObject({ rows: 10, images: 10, patients: 5 });
    // A refusal found before the first event is a plain JSON error, as without the stream.
    const refused = await fetch(`${server.url}/v1/datasets/from-pacs`, {
      method: "POST",
      headers: bearer(user.key, { "content-type": "application/json", accept: "text/event-stream" }),
      body: JSON.stringify({ csv: "study,label\n1.2.3,benign\n", zip_gcloud: `${user.userId}/pacs/bad.zip`, label_cols: ["label"] }),
    });
    expect([refused.status, ((await refused.json()) as any).error.details[0].field]).toEqual([400, "uid_col"]);
  });

  it("stops when the caller leaves mid-stream, and stores nothing", async () => {
    await api("PUT", "/v1/pacs", { dicomweb_url: orthanc.dicomWeb, username: orthanc.username, password: orthanc.password });
    const lines = ["uid,label"];
    for (let r = 0; r < 10; r++) for (const p of patients) for (const s of p.images) lines.push(`${s.instance},${p.label}`);
    const zipPath = `${user.userId}/pacs/left.zip`;
    const abort = new AbortController();
    const res = await fetch(`${server.url}/v1/datasets/from-pacs`, {
      method: "POST",
      headers: bearer(user.key, { "content-type": "application/json", accept: "text/event-stream" }),
      body: JSON.stringify({ csv: lines.join("\n"), zip_gcloud: zipPath, label_cols: ["label"] }),
      signal: abort.signal,
    });
    const reader = res.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toContain("event: progress");
    abort.abort();
    // The import's work folder goes when it stops; then nothing may be in the bucket.
    const tmp = path.join(server.dataDir, "tmp");
    for (let i = 0; i < 200 && fs.existsSync(tmp) && fs.readdirSync(tmp).some((f) => f.startsWith("pacs-import-")); i++)
      await new Promise((r) => setTimeout(r, 50));
    expect(fs.readdirSync(tmp).filter((f) => f.startsWith("pacs-import-"))).toEqual([]);
    expect(await server.services.bucket.stat(zipPath)).toBeFalsy();
  });

  it("refuses a CSV without the UID column, and stores nothing when no UID can be retrieved", async () => {
    const noCol = await api("POST", "/v1/datasets/from-pacs", {
      csv: "study,label\n1.2.3,benign\n",
      zip_gcloud: `${user.userId}/pacs/bad.zip`,
      label_cols: ["label"],
    });
    expect([noCol.status, noCol.body.error.details[0].field]).toEqual([400, "uid_col"]);
    const es = await fetch(`${server.url}/v1/datasets/from-pacs`, {
      method: "POST",
      headers: bearer(user.key, { "content-type": "application/json", "accept-language": "es" }),
      body: JSON.stringify({ csv: "study,label\n1.2.3,benign\n", zip_gcloud: `${user.userId}/pacs/bad.zip`, label_cols: ["label"] }),
    });
    expect(((await es.json()) as any).error.message).toBe("uid_col: el CSV no tiene la columna 'uid' (sus columnas: study, label)");
    const none = await api("POST", "/v1/datasets/from-pacs", {
      csv: "uid,label\n1.2.826.0.1.999999.2,benign\n",
      zip_gcloud: `${user.userId}/pacs/empty.zip`,
      label_cols: ["label"],
    });
    expect([none.status, none.body.error.code]).toEqual([422, "pacs_import_empty"]);
    expect(none.body.error.message).toContain("row 1 (1.2.826.0.1.999999.2): no study, series or instance with this UID in the PACS");
    expect(await server.services.bucket.stat(`${user.userId}/pacs/empty.zip`)).toBeFalsy();
  });
});
