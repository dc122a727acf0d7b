import { dataSet, dicomDateTime, el, newUid, writePart10, type DataSet, type Element } from "../dicom/write.js";
import { COPIED, declaredCharset, type SourceImage } from "./source.js";

/**
 * Builder's answer as a DICOM Comprehensive SR (PS3.3 A.35.3), in the source image's study, a new series, a new UID:
 * the model's name and version, each class's score, the decision at the operating point (with its threshold,
 * sensitivity and specificity on the test set when the model has them), the detection boxes as SCOORD polylines
 * in the source image's pixels, each selected from the source image, which the report also names as evidence.
 * Concepts without a standard code use Builder's local scheme 99BLDR (docs/pacs.md lists them).
 */

export const COMPREHENSIVE_SR = "1.2.840.10008.5.1.4.1.1.88.33";
export const SECONDARY_CAPTURE = "1.2.840.10008.5.1.4.1.1.7";
export const MANUFACTURER = "Builder";

/** What the answer says, in words a report holds (names, not indices). */
export interface AnswerFacts {
  modelName: string;
  modelVersion: number;
  experimentId: number;
  /** Class names by index. */
  classes: string[];
  /** Classification: one score per class. */
  scores?: number[];
  /** Classification: the classes decided at the operating point (thresholds). */
  decided?: string[];
  thresholds?: number[];
  /** Binary models: the class the operating point's figures are about, and the figures (0..1). */
  positiveClass?: string;
  sensitivity?: number;
  specificity?: number;
  /** Detection: boxes [x1, y1, x2, y2] in the source image's pixels, with their class and score. */
  boxes?: { box: number[]; classIndex: number; className: string; score: number }[];
  /** Free text shown in the report (e.g. the "not for diagnosis" wording). */
  caption: string;
}

type Code = [value: string, scheme: string, meaning: string];
const code = ([value, scheme, meaning]: Code): DataSet =>
  dataSet({ "00080100": el.str("SH", value), "00080102": el.str("SH", scheme), "00080104": el.str("LO", meaning) });

export const CODES = {
  report: ["18748-4", "LN", "Diagnostic imaging report"],
  algorithmName: ["111001", "DCM", "Algorithm Name"],
  algorithmVersion: ["111003", "DCM", "Algorithm Version"],
  source: ["121112", "DCM", "Source of Measurement"],
  imageRegion: ["111030", "DCM", "Image Region"],
  finding: ["121071", "DCM", "Finding"],
  comment: ["121106", "DCM", "Comment"],
  score: ["SCORE", "99BLDR", "Model score"],
  decision: ["DECISION", "99BLDR", "Decision at operating point"],
  threshold: ["THRESHOLD", "99BLDR", "Operating point threshold"],
  sensitivity: ["SENSITIVITY", "99BLDR", "Sensitivity at operating point (test set)"],
  specificity: ["SPECIFICITY", "99BLDR", "Specificity at operating point (test set)"],
  detection: ["DETECTION", "99BLDR", "Detection"],
  className: ["CLASS", "99BLDR", "Class"],
  noUnits: ["1", "UCUM", "no units"],
} satisfies Record<string, Code>;

const item = (relationship: string | undefined, valueType: string, concept: Code, rest: Record<string, Element>): DataSet =>
  dataSet({
    ...(relationship ? { "0040A010": el.str("CS", relationship) } : {}),
    "0040A040": el.str("CS", valueType),
    "0040A043": el.seq(code(concept)),
    ...rest,
  });
const text = (concept: Code, value: string, rel = "CONTAINS") => item(rel, "TEXT", concept, { "0040A160": el.str("UT", value) });
/** DS holds 16 characters: scores keep 6 significant digits. */
const ds = (v: number) => Number(v.toPrecision(6)).toString();
const num = (concept: Code, value: number, qualifier?: Code) =>
  item("CONTAINS", "NUM", concept, {
    "0040A300": el.seq(dataSet({ "0040A30A": el.str("DS", ds(value)), "004008EA": el.seq(code(CODES.noUnits)) })),
    ...(qualifier ? { "0040A730": el.seq(item("HAS CONCEPT MOD", "CODE", CODES.className, { "0040A168": el.seq(code(qualifier)) })) } : {}),
  });
/** A class as a code: its index in the model (names may be longer than a code value's 16 characters, or repeat). */
const classCode = (index: number, name: string): Code => [`CLASS-${index}`, "99BLDR", name.slice(0, 64)];
const imageRef = (src: SourceImage, rel: string, concept: Code) =>
  item(rel, "IMAGE", concept, {
    "00081199": el.seq(dataSet({ "00081150": el.str("UI", src.sopClassUid), "00081155": el.str("UI", src.sopInstanceUid) })),
  });

/** The content tree under the root container. */
function content(src: SourceImage, a: AnswerFacts): DataSet[] {
  const out: DataSet[] = [
    text(CODES.algorithmName, a.modelName),
    text(CODES.algorithmVersion, String(a.modelVersion)),
    imageRef(src, "CONTAINS", CODES.source),
  ];
  a.scores?.forEach((s, i) => out.push(num(CODES.score, s, classCode(i, a.classes[i] ?? String(i)))));
  if (a.decided) out.push(text(CODES.decision, a.decided.length ? a.decided.join(", ") : "none of the classes"));
  if (a.positiveClass !== undefined) {
    const i = a.classes.indexOf(a.positiveClass);
    const positive = classCode(i, a.positiveClass);
    const t = a.thresholds?.[i];
    if (t !== undefined) out.push(num(CODES.threshold, t, positive));
    if (a.sensitivity !== undefined) out.push(num(CODES.sensitivity, a.sensitivity, positive));
    if (a.specificity !== undefined) out.push(num(CODES.specificity, a.specificity, positive));
  }
  for (const b of a.boxes ?? []) {
    const [x1, y1, x2, y2] = b.box;
    // A closed polyline, corner by corner, in the image's pixels (PS3.3 C.18.6.1.2: 0,0 is the top-left pixel's corner).
    const polyline = item("CONTAINS", "SCOORD", CODES.imageRegion, {
      "00700022": { vr: "FL", value: [x1, y1, x2, y1, x2, y2, x1, y2, x1, y1] },
      "00700023": el.str("CS", "POLYLINE"),
      "0040A730": el.seq(imageRef(src, "SELECTED FROM", CODES.source)),
    });
    out.push(
      item("CONTAINS", "CONTAINER", CODES.detection, {
        "0040A050": el.str("CS", "SEPARATE"),
        "0040A730": el.seq(text(CODES.className, b.className), num(CODES.score, b.score, classCode(b.classIndex, b.className)), polyline),
      }),
    );
  }
  out.push(text(CODES.comment, a.caption));
  return out;
}

/** The attributes every object Builder writes into the source study shares (patient, study, equipment, SOP common). */
export function commonAttributes(
  src: SourceImage,
  o: {
    sopClass: string;
    sopInstance: string;
    series: string;
    seriesNumber: number;
    modality: string;
    modelName: string;
    modelVersion: number;
    now: Date;
  },
): Record<string, Element> {
  const { date, time } = dicomDateTime(o.now);
  const copied: Record<string, Element> = {};
  // Type 2 attributes are present even when empty; IssuerOfPatientID only when the source has it.
  for (const [tag, vr] of Object.entries(COPIED)) {
    const c = src.copied.get(tag);
    if (c) copied[tag] = { vr: c.vr, value: "", raw: c.raw };
    else if (tag !== "00100021") copied[tag] = { vr, value: "" };
  }
  return {
    ...copied,
    "00080005": el.str("CS", declaredCharset(src)),
    "00080012": el.str("DA", date),
    "00080013": el.str("TM", time),
    "00080016": el.str("UI", o.sopClass),
    "00080018": el.str("UI", o.sopInstance),
    "00080021": el.str("DA", date),
    "00080031": el.str("TM", time),
    "00080060": el.str("CS", o.modality),
    "00080070": el.str("LO", MANUFACTURER),
    "0008103E": el.str("LO", `${MANUFACTURER} AI result`),
    "00081090": el.str("LO", o.modelName.slice(0, 64)),
    "00181020": el.str("LO", `model version ${o.modelVersion}`),
    "0020000D": el.str("UI", src.studyUid),
    "0020000E": el.str("UI", o.series),
    "00200011": el.str("IS", o.seriesNumber),
    "00200013": el.str("IS", 1),
  };
}

/** Series numbers of Builder's series: high, so they sort after the modality's own in a viewer. */
export const SR_SERIES_NUMBER = 9901;
export const SC_SERIES_NUMBER = 9902;

export interface WrittenObject {
  sopClass: string;
  sopInstance: string;
  series: string;
  bytes: Buffer;
}

export function structuredReport(
  src: SourceImage,
  a: AnswerFacts,
  now = new Date(),
  ids = { series: newUid(), instance: newUid() },
): WrittenObject {
  const { date, time } = dicomDateTime(now);
  const root = dataSet({
    ...commonAttributes(src, {
      sopClass: COMPREHENSIVE_SR,
      sopInstance: ids.instance,
      series: ids.series,
      seriesNumber: SR_SERIES_NUMBER,
      modality: "SR",
      modelName: a.modelName,
      modelVersion: a.modelVersion,
      now,
    }),
    "00080023": el.str("DA", date),
    "00080033": el.str("TM", time),
    "00081111": el.seq(), // ReferencedPerformedProcedureStepSequence (type 2)
    "0040A040": el.str("CS", "CONTAINER"),
    "0040A043": el.seq(code(CODES.report)),
    "0040A050": el.str("CS", "SEPARATE"),
    "0040A372": el.seq(), // PerformedProcedureCodeSequence (type 2)
    "0040A375": el.seq(
      dataSet({
        "00081115": el.seq(
          dataSet({
            "00081199": el.seq(dataSet({ "00081150": el.str("UI", src.sopClassUid), "00081155": el.str("UI", src.sopInstanceUid) })),
            "0020000E": el.str("UI", src.seriesUid),
          }),
        ),
        "0020000D": el.str("UI", src.studyUid),
      }),
    ),
    "0040A491": el.str("CS", "COMPLETE"),
    "0040A493": el.str("CS", "UNVERIFIED"),
    "0040A730": el.seq(...content(src, a)),
  });
  return { sopClass: COMPREHENSIVE_SR, sopInstance: ids.instance, series: ids.series, bytes: writePart10(root, src.encoding) };
}
