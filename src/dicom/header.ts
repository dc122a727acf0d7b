import type { ParsedDicom } from "./parse.js";
import { decimal } from "./parse.js";

/**
 * What a dataset report or a log may say about a DICOM: technical attributes, and for the identifying ones only
 * whether they hold a value. The values of PatientName, PatientID and PatientBirthDate are never read into this
 * object, so nothing built from it can leak them.
 */
export interface DicomHeaderSummary {
  modality: string | null;
  manufacturer: string | null;
  /** BodyPartExamined (0018,0015). */
  bodyPart: string | null;
  transferSyntax: string;
  transferSyntaxUid: string;
  bitsAllocated: number;
  bitsStored: number;
  signed: boolean;
  photometric: string;
  samplesPerPixel: number;
  rows: number;
  columns: number;
  frames: number;
  /** (row, column) spacing in mm, or null when absent. */
  pixelSpacing: [number, number] | null;
  /** Which identifying attributes are non-empty (their names, never their values). */
  identifyingTags: Array<"PatientName" | "PatientID" | "PatientBirthDate">;
  burnedInAnnotation: boolean;
}

const IDENTIFYING = [
  ["x00100010", "PatientName"],
  ["x00100020", "PatientID"],
  ["x00100030", "PatientBirthDate"],
] as const;

export function headerSummary(d: ParsedDicom): DicomHeaderSummary {
  const ds = d.dataSet;
  const text = (tag: string) => {
    const v = ds.string(tag)?.replace(/\0/g, "").trim();
    return v ? v.slice(0, 64) : null;
  };
  const rowSpacing = decimal(ds, "x00280030", 0);
  const colSpacing = decimal(ds, "x00280030", 1);
  return {
    modality: text("x00080060"),
    manufacturer: text("x00080070"),
    bodyPart: text("x00180015"),
    transferSyntax: d.syntax.name,
    transferSyntaxUid: d.syntax.uid,
    bitsAllocated: d.pixel.bitsAllocated,
    bitsStored: d.pixel.bitsStored,
    signed: d.pixel.signed,
    photometric: d.pixel.photometric,
    samplesPerPixel: d.pixel.samplesPerPixel,
    rows: d.pixel.rows,
    columns: d.pixel.columns,
    frames: d.pixel.frames,
    pixelSpacing: rowSpacing !== undefined ? [rowSpacing, colSpacing ?? rowSpacing] : null,
    // Present and not only padding: the element's bytes are looked at, not turned into a string that could be kept.
    identifyingTags: IDENTIFYING.filter(([tag]) => hasValue(ds.byteArray, ds.elements[tag])).map(([, name]) => name),
    burnedInAnnotation: (ds.string("x00280301") ?? "").trim().toUpperCase() === "YES",
  };
}

function hasValue(bytes: Uint8Array, el: { dataOffset: number; length: number } | undefined): boolean {
  if (!el || el.length <= 0) return false;
  for (let i = el.dataOffset; i < el.dataOffset + el.length && i < bytes.length; i++) if (bytes[i] !== 0x20 && bytes[i] !== 0) return true;
  return false;
}
