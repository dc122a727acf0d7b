import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, createUserWithKey, type UserWithKey } from "../helpers/auth.js";
import { primaryTarget } from "../helpers/db.js";
import { deflateBomb, j2kDicom } from "../helpers/dicom-bombs.js";
import { dicomFixtures, haveDicomPython } from "../helpers/dicom-fixtures.js";
import { SYNTAX, writeDicom } from "../helpers/dicom-writer.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { makeZip } from "../helpers/zips.js";

// A training zip of DICOM files through POST /v1/datasets/validate (issue 41): every file make_dicoms.py writes
// (each transfer syntax, MONOCHROME1/2, RGB/YBR, 8-16 bit, multi-frame, an extensionless file, one with a PHI header,
// a corrupt and an unsupported one). The report counts what the files are, names each undecodable file with its
// transfer syntax, warns about identifying headers by tag and count, and never holds an identifying value.
const PHI_VALUES = ["Zzyzx", "Quentavious", "PHI-7731-XQ", "19230817"];

describe.skipIf(!haveDicomPython)("POST /v1/datasets/validate with DICOM images", () => {
  const dx = dicomFixtures();
  let server: TestServer;
  let user: UserWithKey;
  let n = 0;

  beforeAll(async () => {
    server = await startTestServer(primaryTarget());
    user = await createUserWithKey(server);
  });
  afterAll(async () => server?.teardown());

  async function validate(files: string[]) {
    const entries: Record<string, Buffer | string> = {
      "labels.csv": ["patient,image,label", ...files.map((f, i) => `p${i},scans/${f},${i % 2}`)].join("\n") + "\n",
    };
    for (const f of files) entries[`scans/${f}`] = dx.bytes(f);
    const zip_gcloud = `${user.userId}/dicom${++n}/data.zip`;
    const put = await fetch(`${server.url}/v1/files/${zip_gcloud}`, { method: "PUT", headers: bearer(user.key), body: makeZip(entries) });
    expect(put.status).toBe(201);
    const res = await fetch(`${server.url}/v1/datasets/validate`, {
      method: "POST",
      headers: bearer(user.key, { "content-type": "application/json" }),
      body: JSON.stringify({ zip_gcloud, task: "vision", label_cols: ["label"], images_col: "image" }),
    });
    expect(res.status).toBe(200);
    return { body: (await res.json()) as any };
  }

  it("summarises a zip of every transfer syntax and warns about identifying headers without their values", async () => {
    const ok = dx.files.filter((f) => f.expect === "ok");
    const { body } = await validate(ok.map((f) => f.file));
    expect(body.errors).toEqual([]);
    expect(body.valid).toBe(true);
    const d = body.summary.dicom;
    expect(d.files).toBe(ok.length);
    const syntaxes = new Set(ok.map((f) => `${f.transfer_syntax_name} (${f.transfer_syntax})`));
    expect(new Set(Object.keys(d.transfer_syntaxes))).toEqual(syntaxes);
    expect(Object.values(d.photometric as Record<string, number>).reduce((a, b) => a + b, 0)).toBe(ok.length);
    expect(d.photometric.MONOCHROME1).toBe(ok.filter((f) => f.photometric === "MONOCHROME1").length);
    expect(d.frames.multi_frame_files).toBe(ok.filter((f) => f.frames > 1).length);
    const phi = ok.filter((f) => f.phi).length;
    expect(phi).toBeGreaterThan(0);
    expect(d.identifying_headers).toEqual({ PatientName: phi, PatientID: phi, PatientBirthDate: phi });
    const warning = body.warnings.find((w: any) => w.code === "dicom_identifying_headers");
    expect(warning.message).toContain(`PatientName (${phi})`);
    expect(warning.key).toBe("problems:dataset.dicom_identifying_headers");
    // Thumbnails of DICOM classes are rendered too.
    expect(Object.values(body.summary.samples.label).flat().length).toBeGreaterThan(0);
    const text = JSON.stringify(body);
    for (const v of PHI_VALUES) expect(text).not.toContain(v);
  });

  it("names each file that cannot be decoded and its transfer syntax", async () => {
    const bad = dx.files.filter((f) => f.expect === "error");
    const { body } = await validate([...bad.map((f) => f.file), "evrle_mono2_u8.dcm", "rle_mono2_u8.dcm"]);
    expect(body.valid).toBe(false);
    for (const f of bad) {
      const e = body.errors.find((x: any) => x.path === `scans/${f.file}`);
      expect(e, f.file).toBeDefined();
      expect(e.code).toBe("image_unreadable");
      expect(e.message).toContain(f.file);
      expect(e.message).toContain(`${f.transfer_syntax_name} (${f.transfer_syntax})`);
    }
  });
});

// Security issue 48, finding 9 (and 1, 2 through a zip): the zip check held no pixel limit on DICOM, so a
// 144-megapixel file was decoded whole (+880 MB) and accepted. It now refuses, unread, what /predict would refuse:
// a header over FETCH_MAX_PIXELS (10 M here), a codestream stating more than its header, a deflated data set that
// inflates past what such an image needs. Files built by test/helpers/dicom-writer.ts (no Python needed).
describe("POST /v1/datasets/validate holds DICOM files to the pixel limit", () => {
  let server: TestServer;
  let user: UserWithKey;

  beforeAll(async () => {
    server = await startTestServer(primaryTarget(), { FETCH_MAX_PIXELS: "10000000" });
    user = await createUserWithKey(server);
  });
  afterAll(async () => server?.teardown());

  it("refuses a file over the limit, a frame stating more than its header and a deflate bomb, naming each", async () => {
    const small = (i: number) =>
      writeDicom({ syntax: SYNTAX.explicitLittle, rows: 8, columns: 8, pixels: Uint8Array.from({ length: 64 }, (_, k) => (k * i) % 256) });
    const files: Record<string, Buffer> = {
      "over.dcm": j2kDicom(4096, 4096), // 16.8 megapixels, a valid image over the limit
      "lies.dcm": j2kDicom(16384, 64), // a 64x64 header around a codestream that states 16384x16384
      "bomb.dcm": deflateBomb(200_000), // inflates to ~200 MB
      ...Object.fromEntries([1, 2, 3, 4, 5, 6].map((i) => [`ok${i}.dcm`, small(i)])),
    };
    const names = Object.keys(files);
    const entries: Record<string, Buffer | string> = {
      "labels.csv": ["patient,image,label", ...names.map((f, i) => `p${i},scans/${f},${i % 2}`)].join("\n") + "\n",
    };
    for (const [name, bytes] of Object.entries(files)) entries[`scans/${name}`] = bytes;
    const zip_gcloud = `${user.userId}/limits/data.zip`;
    const put = await fetch(`${server.url}/v1/files/${zip_gcloud}`, { method: "PUT", headers: bearer(user.key), body: makeZip(entries) });
    expect(put.status).toBe(201);
    const res = await fetch(`${server.url}/v1/datasets/validate`, {
      method: "POST",
      headers: bearer(user.key, { "content-type": "application/json" }),
      body: JSON.stringify({ zip_gcloud, task: "vision", label_cols: ["label"], images_col: "image" }),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as any;
    const unreadable = Object.fromEntries(
      body.errors.filter((e: any) => e.code === "image_unreadable").map((e: any) => [e.path, e.message as string]),
    );
    expect(Object.keys(unreadable).sort()).toEqual(["scans/bomb.dcm", "scans/lies.dcm", "scans/over.dcm"]);
    expect(unreadable["scans/over.dcm"]).toContain("the image has 4096x4096 pixels; the limit is 10000000 pixels");
    expect(unreadable["scans/lies.dcm"]).toContain(
      "the compressed frame states 16384x16384 pixels with 1 sample(s) each; the header says 64x64",
    );
    expect(unreadable["scans/bomb.dcm"]).toContain("the deflated DICOM data set inflates to more than");
    expect(body.summary.dicom.files).toBe(6);
  });
});
