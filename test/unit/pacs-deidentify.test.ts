import { describe, expect, it } from "vitest";
import { decodeDicom, readDicomHeader } from "../../src/dicom/index.js";
import { parseDicom } from "../../src/dicom/parse.js";
import { dataSet, el, newUid, writePart10 } from "../../src/dicom/write.js";
import { deidentify, DeidentifyError } from "../../src/pacs/deidentify.js";
import { dicomFixtures, haveDicomPython } from "../helpers/dicom-fixtures.js";

// De-identification of what is imported from the PACS (src/pacs/deidentify.ts) on every transfer syntax the DICOM
// fixtures hold, native and encapsulated: the image Builder renders from the written file is the source's, pixel for
// pixel, no identifying header is left, the UIDs are new and remapped consistently. The import's integration test
// (test/integration/pacs-import.test.ts) runs it on files a real Orthanc serves.
describe.skipIf(!haveDicomPython)("de-identifying an imported instance", () => {
  const fx = haveDicomPython ? dicomFixtures() : undefined;

  it("keeps the rendered image of every readable fixture and leaves no identifying header", async () => {
    const ok = fx!.files.filter((f) => f.expect === "ok");
    expect(ok.length).toBeGreaterThan(10);
    const syntaxes = new Set<string>();
    for (const f of ok) {
      const source = fx!.bytes(f.file);
      const uids = new Map<string, string>();
      let d;
      try {
        d = deidentify(source, uids, 50_000_000);
      } catch (err) {
        // Refused by name: a big-endian native file, and a PHI fixture that says text is burned into its pixels.
        const why = (err as Error).message;
        if (why.includes("BurnedInAnnotation")) expect(f.phi, f.file).toBe(true);
        else expect(why, f.file).toMatch(/transfer syntax \(1\.2\.840\.10008\.1\.2\.2\)/);
        continue;
      }
      syntaxes.add(f.transfer_syntax);
      const [before, after] = [await decodeDicom(source, undefined), await decodeDicom(d.bytes, undefined)];
      expect(Buffer.from(after.image.pixels).equals(Buffer.from(before.image.pixels)), f.file).toBe(true);
      expect(readDicomHeader(d.bytes).identifyingTags, f.file).toEqual([]);
      const src = parseDicom(source).dataSet;
      const out = parseDicom(d.bytes).dataSet;
      for (const tag of ["x0020000d", "x0020000e", "x00080018"]) {
        expect(out.string(tag), f.file).toBe(uids.get(src.string(tag)!.replace(/\0/g, "").trim()));
        expect(out.string(tag), f.file).not.toBe(src.string(tag));
      }
      expect(out.string("x00120062")).toBe("YES");
    }
    // Encapsulated syntaxes went through too (JPEG baseline and lossless, JPEG 2000, RLE, as the fixtures hold them).
    expect(syntaxes.size).toBeGreaterThan(4);
  });

  const image = (extra: Record<string, ReturnType<typeof el.str>>) =>
    writePart10(
      dataSet({
        "00080016": el.str("UI", "1.2.840.10008.5.1.4.1.1.7"),
        "00080018": el.str("UI", newUid()),
        "0020000D": el.str("UI", "1.2.3.4"),
        "0020000E": el.str("UI", "1.2.3.5"),
        "00280002": { vr: "US", value: 1 },
        "00280004": el.str("CS", "MONOCHROME2"),
        "00280010": { vr: "US", value: 2 },
        "00280011": { vr: "US", value: 2 },
        "00280100": { vr: "US", value: 8 },
        "00280101": { vr: "US", value: 8 },
        "00280102": { vr: "US", value: 7 },
        "00280103": { vr: "US", value: 0 },
        "7FE00010": { vr: "OB", value: Uint8Array.from([1, 2, 3, 4]) },
        ...extra,
      }),
      "utf8",
    );

  it("maps the same source UID to the same new one across instances, and refuses burned-in annotation", () => {
    const uids = new Map<string, string>();
    const [a, b] = [deidentify(image({}), uids, 100), deidentify(image({}), uids, 100)];
    const study = (bytes: Buffer) => parseDicom(bytes).dataSet.string("x0020000d");
    expect(study(a.bytes)).toBe(study(b.bytes));
    expect(study(a.bytes)).toBe(uids.get("1.2.3.4"));
    expect(() => deidentify(image({ "00280301": el.str("CS", "YES") }), uids, 100)).toThrow(DeidentifyError);
    expect(() => deidentify(image({}), uids, 3)).toThrow(/more than 3 pixels/);
  });
});
