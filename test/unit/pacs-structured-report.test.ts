import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { dcmdump, haveDcmtk, srItems, srPolylines, srValues } from "../helpers/dcmtk.js";
import { dicomFixtures, haveDicomPython } from "../helpers/dicom-fixtures.js";
import { readSource } from "../../src/pacs/source.js";
import { COMPREHENSIVE_SR, structuredReport, type AnswerFacts } from "../../src/pacs/structured-report.js";

// The structured report Builder writes back, read by an independent tool: dcmtk's dcmdump (the file and every
// attribute), dsrdump and dsr2xml (the SR tree, which they refuse when it breaks the SR document's rules).
describe.skipIf(!haveDcmtk || !haveDicomPython)("the structured report written back, read by dcmtk", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pacs-sr-"));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  const source = dicomFixtures().bytes("evrle_mono2_u8_phi.dcm");
  const facts: AnswerFacts = {
    modelName: "Mamografía BreastMNIST",
    modelVersion: 3,
    experimentId: 7,
    classes: ["benigno", "maligno"],
    scores: [0.2734, 0.7266],
    decided: ["maligno"],
    thresholds: [0.6, 0.4],
    positiveClass: "maligno",
    sensitivity: 0.91,
    specificity: 0.82,
    caption: "NOT FOR DIAGNOSIS - research use only",
  };

  it("is a Comprehensive SR in the source's study, a new series, with the patient's attributes as they were", () => {
    const src = readSource(source);
    const sr = structuredReport(src, facts, new Date(2026, 10, 29, 3, 4, 5));
    const file = path.join(dir, "sr.dcm");
    fs.writeFileSync(file, sr.bytes);
    const dump = dcmdump(file);
    expect(dcmdump(file, false)).toContain("(0008,0005) CS [ISO_IR 192]");
    expect(dump).toContain("=ComprehensiveSRStorage");
    expect(dump).toMatch(new RegExp(`\\(0020,000d\\) UI \\[${src.studyUid.replace(/\./g, "\\.")}\\]`));
    expect(dump).toMatch(/\(0020,000e\) UI \[2\.25\.\d+\]/);
    expect(sr.series).not.toBe(src.seriesUid);
    expect(dump).toContain(`(0008,0018) UI [${sr.sopInstance}]`);
    expect(sr.sopClass).toBe(COMPREHENSIVE_SR);
    expect(dump).toContain("(0010,0010) PN [Zzyzx^Quentavious]");
    expect(dump).toContain("(0010,0020) LO [PHI-7731-XQ]");
    expect(dump).toContain("(0010,0030) DA [19230817]");
    expect(dump).toContain("(0008,0070) LO [Builder]");
    expect(dump).toContain("(0008,1090) LO [Mamografía BreastMNIST]");
    expect(dump).toContain("(0008,0060) CS [SR]");
    // The evidence: the source instance, by its series and study.
    expect(dump).toContain(`(0008,1155) UI [${src.sopInstanceUid}]`);
    expect(dump).toContain(`(0020,000e) UI [${src.seriesUid}]`);
  });

  it("holds the model, its scores, the decision and the operating point's figures, which dsr2xml reads as a valid tree", () => {
    const file = path.join(dir, "sr-tree.dcm");
    fs.writeFileSync(file, structuredReport(readSource(source), facts).bytes);
    const items = srItems(file);
    const value = (meaning: string) => srValues(items, meaning);
    expect(value("Algorithm Name")).toEqual(["Mamografía BreastMNIST"]);
    expect(value("Algorithm Version")).toEqual(["3"]);
    expect(value("Model score")).toEqual(["0.2734", "0.7266"]);
    expect(value("Decision at operating point")).toEqual(["maligno"]);
    expect(value("Operating point threshold")).toEqual(["0.4"]);
    expect(value("Sensitivity at operating point (test set)")).toEqual(["0.91"]);
    expect(value("Specificity at operating point (test set)")).toEqual(["0.82"]);
    expect(value("Comment")).toEqual(["NOT FOR DIAGNOSIS - research use only"]);
    // Each score is qualified by its class; the source image is named.
    expect(items.filter((i) => i.meaning === "Class" && i.type === "CODE").map((i) => i.value)).toEqual([
      '(CLASS-0,99BLDR,"benigno")',
      '(CLASS-1,99BLDR,"maligno")',
      '(CLASS-1,99BLDR,"maligno")',
      '(CLASS-1,99BLDR,"maligno")',
      '(CLASS-1,99BLDR,"maligno")',
    ]);
    expect(items.filter((i) => i.type === "IMAGE").map((i) => i.meaning)).toEqual(["Source of Measurement"]);
  });

  it("writes detection boxes as closed SCOORD polylines selected from the source image", () => {
    const src = readSource(source);
    const boxes = [
      { box: [3.5, 4.25, 20, 30.75], classIndex: 0, className: "masa", score: 0.87 },
      { box: [0, 0, 10, 12], classIndex: 1, className: "calcificación", score: 0.51 },
    ];
    const file = path.join(dir, "sr-boxes.dcm");
    fs.writeFileSync(
      file,
      structuredReport(src, { ...facts, scores: undefined, decided: undefined, positiveClass: undefined, boxes }).bytes,
    );
    expect(srPolylines(file)).toEqual([
      [3.5, 4.25, 20, 4.25, 20, 30.75, 3.5, 30.75, 3.5, 4.25],
      [0, 0, 10, 0, 10, 12, 0, 12, 0, 0],
    ]);
    const items = srItems(file);
    expect(srValues(items, "Class").filter((v) => !v.startsWith("("))).toEqual(["masa", "calcificación"]);
    expect(srValues(items, "Model score")).toEqual(["0.87", "0.51"]);
    // Each polyline is selected from the source image, one level below it.
    const scoords = items.flatMap((it, i) => (it.type === "SCOORD" ? [i] : []));
    expect(scoords.map((i) => [items[i + 1].relationship, items[i + 1].type, items[i + 1].depth - items[i].depth])).toEqual([
      ["selected from", "IMAGE", 1],
      ["selected from", "IMAGE", 1],
    ]);
    expect(dcmdump(file)).toContain(`(0008,1155) UI [${src.sopInstanceUid}]`);
  });

  it("keeps a Latin-1 source's character set: the patient's bytes as they were, its own texts in Latin-1", () => {
    // The same file with SpecificCharacterSet ISO_IR 100 and a Latin-1 patient name, written through pydicom-free bytes.
    const latin = Buffer.from(source);
    const name = Buffer.from("Zzyzx^Quentavious");
    const at = latin.indexOf(name);
    Buffer.from("Muñoz^Ana        ", "latin1").copy(latin, at);
    const src = { ...readSource(latin), charset: "ISO_IR 100", encoding: "latin1" as const };
    const file = path.join(dir, "sr-latin1.dcm");
    fs.writeFileSync(file, structuredReport(src, facts).bytes);
    expect(dcmdump(file, false)).toContain("(0008,0005) CS [ISO_IR 100]");
    const dump = dcmdump(file);
    expect(dump).toContain("(0010,0010) PN [Muñoz^Ana]");
    expect(dump).toContain("(0008,1090) LO [Mamografía BreastMNIST]");
  });

  it("dcmtk's SR readers do refuse what is not an SR document (the check can fail)", () => {
    const file = path.join(dir, "not-sr.dcm");
    fs.writeFileSync(file, source);
    expect(() => srItems(file)).toThrow();
  });
});
