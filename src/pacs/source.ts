import { parseDicom } from "../dicom/parse.js";
import { msg, say, type Message } from "../errors.js";
import type { TextEncoding } from "../dicom/write.js";

/**
 * What an answer written back needs from the image it answers: the UIDs it refers to, and the patient and study
 * attributes it must repeat to land in the same study (a PACS files an object by them: Orthanc by PatientID and
 * StudyInstanceUID). The patient's attributes are copied as raw bytes, in the source's character set, never decoded
 * and re-encoded; Builder's own texts are then written in that character set (TextEncoding).
 */
export interface SourceImage {
  studyUid: string;
  seriesUid: string;
  sopInstanceUid: string;
  sopClassUid: string;
  rows: number;
  columns: number;
  /** Tag ("00100010") to the raw value bytes, for the patient and study attributes present in the source. */
  copied: Map<string, { vr: "PN" | "LO" | "DA" | "TM" | "CS" | "SH"; raw: Uint8Array }>;
  /** SpecificCharacterSet of the source ("" when absent). */
  charset: string;
  encoding: TextEncoding;
}

/** Patient and General Study attributes an object in the same study repeats (PS3.3 C.7.1.1, C.7.2.1). */
export const COPIED = {
  "00100010": "PN", // PatientName
  "00100020": "LO", // PatientID
  "00100021": "LO", // IssuerOfPatientID
  "00100030": "DA", // PatientBirthDate
  "00100040": "CS", // PatientSex
  "00080020": "DA", // StudyDate
  "00080030": "TM", // StudyTime
  "00080050": "SH", // AccessionNumber
  "00080090": "PN", // ReferringPhysicianName
  "00200010": "SH", // StudyID
} as const;

/** Why an image cannot be answered, in catalog words (kept with an auto-score outcome, said in the reader's language). */
export class SourceError extends Error {
  constructor(public readonly text: Message) {
    super(say(text, "en"));
  }
}

export function readSource(bytes: Uint8Array): SourceImage {
  const { dataSet, pixel } = parseDicom(bytes);
  const uid = (tag: string) => dataSet.string(`x${tag.toLowerCase()}`)?.replace(/\0/g, "").trim() ?? "";
  const studyUid = uid("0020000D");
  const seriesUid = uid("0020000E");
  const sopInstanceUid = uid("00080018");
  const sopClassUid = uid("00080016");
  const missing = Object.entries({
    StudyInstanceUID: studyUid,
    SeriesInstanceUID: seriesUid,
    SOPInstanceUID: sopInstanceUid,
    SOPClassUID: sopClassUid,
  })
    .filter(([, v]) => !v)
    .map(([k]) => k);
  if (missing.length) throw new SourceError(msg("pacs.source_lacks", { attributes: missing.join(", ") }));
  const copied: SourceImage["copied"] = new Map();
  for (const [tag, vr] of Object.entries(COPIED)) {
    const e = dataSet.elements[`x${tag.toLowerCase()}`];
    if (!e || e.length === undefined) continue;
    let raw = dataSet.byteArray.subarray(e.dataOffset, e.dataOffset + e.length);
    // Trailing padding is the writer's to add.
    while (raw.length && (raw[raw.length - 1] === 0x20 || raw[raw.length - 1] === 0)) raw = raw.subarray(0, raw.length - 1);
    copied.set(tag, { vr, raw: Uint8Array.from(raw) });
  }
  const charset = (dataSet.string("x00080005") ?? "").trim();
  const first = charset.split("\\")[0]?.trim() ?? "";
  const encoding: TextEncoding =
    charset === "" || charset === "ISO_IR 6" || charset === "ISO_IR 192"
      ? "utf8"
      : first === "ISO_IR 100" && !charset.includes("\\")
        ? "latin1"
        : "ascii";
  return { studyUid, seriesUid, sopInstanceUid, sopClassUid, rows: pixel.rows, columns: pixel.columns, copied, charset, encoding };
}

/** The character set an object written in `encoding` declares; the source's own when its bytes are copied as they are. */
export function declaredCharset(src: SourceImage): string {
  if (src.encoding === "utf8") return "ISO_IR 192";
  return src.charset;
}
