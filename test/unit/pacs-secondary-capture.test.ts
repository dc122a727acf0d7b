import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseDicom } from "../../src/dicom/parse.js";
import { readSource } from "../../src/pacs/source.js";
import { secondaryCapture } from "../../src/pacs/secondary-capture.js";
import type { AnswerFacts } from "../../src/pacs/structured-report.js";
import type { ServedManifest } from "../../src/serving/manifest.js";
import { breastMnistDicom } from "../helpers/breastmnist-dicom.js";
import { dcmdump, haveDcmtk } from "../helpers/dcmtk.js";

// The secondary capture written back: the image as the model saw it, enlarged (28 px -> 532 px, nearest neighbour),
// the Grad-CAM map painted where the map is hot or the boxes drawn, a caption band below; read back by dcmtk.
describe.skipIf(!haveDcmtk)("the secondary capture written back", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pacs-sc-"));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  const manifest = { input: { name: "image", image: {} } } as unknown as ServedManifest;
  const facts: AnswerFacts = {
    modelName: "Ecografía mamaria",
    modelVersion: 2,
    experimentId: 1,
    classes: ["benign", "malignant"],
    scores: [0.3, 0.7],
    decided: ["malignant"],
    caption: "NO APTO PARA DIAGNÓSTICO",
  };
  const pixels = (bytes: Buffer) => {
    const d = parseDicom(bytes);
    const e = d.dataSet.elements.x7fe00010;
    return { w: d.pixel.columns, h: d.pixel.rows, px: d.dataSet.byteArray.subarray(e.dataOffset, e.dataOffset + e.length) };
  };

  it("paints the decided class's map where it is hot, keeps the image grey elsewhere, and burns in the caption", async () => {
    const s = await breastMnistDicom(0);
    // A map hot at column 14, row 10 of the 28x28 image.
    const map = Array.from({ length: 28 }, (_, y) =>
      Array.from({ length: 28 }, (_, x) => Math.max(0, 255 - 60 * Math.hypot(x - 14, y - 10))),
    );
    const sc = await secondaryCapture(readSource(s.bytes), s.bytes, { score: [0.3, 0.7], gradients: { "1": map } }, facts, manifest, {
      maxPixels: 5e7,
    });
    const { w, h, px } = pixels(sc.bytes);
    expect(w).toBe(28 * 19); // enlarged until the shorter side is at least 512
    expect(h).toBeGreaterThan(w); // the caption band below
    const at = (x: number, y: number) => Array.from(px.subarray((y * w + x) * 3, (y * w + x) * 3 + 3));
    const [r, g, b] = at(14 * 19 + 9, 10 * 19 + 9);
    expect(r).toBeGreaterThan(200); // the ramp's top: pale yellow
    expect(g).toBeGreaterThan(200);
    const [cr, cg, cb] = at(2, w - 3); // far from the hot spot: the grey image untouched
    expect(cr === cg && cg === cb).toBe(true);
    expect(b).toBeLessThan(r);
    // The caption band holds text: light pixels on black.
    const band = px.subarray(w * w * 3);
    expect(band.some((v) => v > 200)).toBe(true);
    const file = path.join(dir, "sc.dcm");
    fs.writeFileSync(file, sc.bytes);
    const dump = dcmdump(file);
    expect(dump).toContain("=SecondaryCaptureImageStorage");
    expect(dump).toContain("(0028,0004) CS [RGB]");
    expect(dump).toContain("(0028,0301) CS [YES]");
    expect(dump).toContain(
      "(0020,4000) LT [Builder - Ecografía mamaria - model version 2 - decision: malignant | NO APTO PARA DIAGNÓSTICO]",
    );
    expect(dump).toContain(`(0008,1155) UI [${s.instance}]`);
  });

  it("draws detection boxes on the enlarged image", async () => {
    const s = await breastMnistDicom(1);
    const boxes = [{ box: [4, 5, 20, 22], classIndex: 0, className: "lesion", score: 0.9 }];
    const sc = await secondaryCapture(readSource(s.bytes), s.bytes, { boxes: [[4, 5, 20, 22]] }, { ...facts, boxes }, manifest, {
      maxPixels: 5e7,
    });
    const { w, px } = pixels(sc.bytes);
    const at = (x: number, y: number) => Array.from(px.subarray((y * w + x) * 3, (y * w + x) * 3 + 3));
    expect(at(4 * 19, 12 * 19)).toEqual([255, 64, 64]); // the left edge
    expect(at(12 * 19, 22 * 19)).toEqual([255, 64, 64]); // the bottom edge
    const inside = at(12 * 19, 12 * 19);
    expect(inside[0] === inside[1] && inside[1] === inside[2]).toBe(true);
  });
});
