import { msg, say, type Message } from "../errors.js";
import { DicomError } from "../dicom/errors.js";
import { parseDicom } from "../dicom/parse.js";
import { encodeDataSet, IMPLEMENTATION_CLASS_UID, newUid, type DataSet, type Element, type Vr } from "../dicom/write.js";

/**
 * De-identification of an instance retrieved from the PACS before anything of it is stored (issue 51 item 2), after
 * DICOM PS3.15 Annex E's Basic Application Confidentiality Profile, applied as a keep-list, the profile's "clean"
 * reading: only the attributes below that describe the image and how to show it are kept; the patient and study
 * attributes of type 2 are written empty (the profile's Z); the study, series and instance UIDs are replaced by new
 * ones, the same source UID always by the same new one within an import (U); everything else is removed (X), private
 * attributes included. Dates are removed, not shifted: the model reads none. The pixel data is copied byte for byte.
 * An image whose header says text is burned into its pixels (BurnedInAnnotation YES) is refused: the profile asks for
 * that text to be removed, and Builder cannot find it.
 */

/** Kept as they are (their bytes copied): the image, its geometry and its rendering; nothing about the patient. */
const KEPT: Record<string, Vr> = {
  "00080008": "CS", // ImageType
  "00080016": "UI", // SOPClassUID
  "00080060": "CS", // Modality
  "00080064": "CS", // ConversionType
  "00080068": "CS", // PresentationIntentType
  "00180015": "CS", // BodyPartExamined
  "00181164": "DS", // ImagerPixelSpacing
  "00185101": "CS", // ViewPosition
  "00200011": "IS", // SeriesNumber
  "00200013": "IS", // InstanceNumber
  "00200020": "CS", // PatientOrientation
  "00200060": "CS", // Laterality
  "00200062": "CS", // ImageLaterality
  "00280002": "US", // SamplesPerPixel
  "00280004": "CS", // PhotometricInterpretation
  "00280006": "US", // PlanarConfiguration
  "00280008": "IS", // NumberOfFrames
  "00280010": "US", // Rows
  "00280011": "US", // Columns
  "00280030": "DS", // PixelSpacing
  "00280034": "IS", // PixelAspectRatio
  "00280100": "US", // BitsAllocated
  "00280101": "US", // BitsStored
  "00280102": "US", // HighBit
  "00280103": "US", // PixelRepresentation
  "00281040": "CS", // PixelIntensityRelationship
  "00281050": "DS", // WindowCenter
  "00281051": "DS", // WindowWidth
  "00281052": "DS", // RescaleIntercept
  "00281053": "DS", // RescaleSlope
  "00281054": "LO", // RescaleType
  "00281056": "CS", // VOILUTFunction
  "00282110": "CS", // LossyImageCompression
  "00282112": "DS", // LossyImageCompressionRatio
  "00282114": "CS", // LossyImageCompressionMethod
  "20500020": "CS", // PresentationLUTShape
};

/** Replaced: the UIDs by new ones (U), the type 2 patient and study attributes by empty values (Z). */
export const REPLACED: Record<string, { keyword: string; how: string }> = {
  "0020000D": { keyword: "StudyInstanceUID", how: "a new UID" },
  "0020000E": { keyword: "SeriesInstanceUID", how: "a new UID" },
  "00080018": { keyword: "SOPInstanceUID", how: "a new UID" },
  "00100010": { keyword: "PatientName", how: "empty" },
  "00100020": { keyword: "PatientID", how: "empty" },
  "00100030": { keyword: "PatientBirthDate", how: "empty" },
  "00100040": { keyword: "PatientSex", how: "empty" },
  "00080020": { keyword: "StudyDate", how: "empty" },
  "00080030": { keyword: "StudyTime", how: "empty" },
  "00080050": { keyword: "AccessionNumber", how: "empty" },
  "00080090": { keyword: "ReferringPhysicianName", how: "empty" },
  "00200010": { keyword: "StudyID", how: "empty" },
};
const EMPTY_VR: Record<string, Vr> = {
  "00100010": "PN",
  "00100020": "LO",
  "00100030": "DA",
  "00100040": "CS",
  "00080020": "DA",
  "00080030": "TM",
  "00080050": "SH",
  "00080090": "PN",
  "00200010": "SH",
};

/** Names for the report of the removed attributes PS3.15 Table E.1-1 lists most often; others are named by tag. */
const NAMES: Record<string, string> = {
  "00080012": "InstanceCreationDate",
  "00080013": "InstanceCreationTime",
  "00080014": "InstanceCreatorUID",
  "00080021": "SeriesDate",
  "00080022": "AcquisitionDate",
  "00080023": "ContentDate",
  "00080031": "SeriesTime",
  "00080032": "AcquisitionTime",
  "00080033": "ContentTime",
  "00080080": "InstitutionName",
  "00080081": "InstitutionAddress",
  "00080092": "ReferringPhysicianAddress",
  "00080094": "ReferringPhysicianTelephoneNumbers",
  "00081010": "StationName",
  "00081030": "StudyDescription",
  "0008103E": "SeriesDescription",
  "00081040": "InstitutionalDepartmentName",
  "00081048": "PhysiciansOfRecord",
  "00081050": "PerformingPhysicianName",
  "00081060": "NameOfPhysiciansReadingStudy",
  "00081070": "OperatorsName",
  "00081080": "AdmittingDiagnosesDescription",
  "00081140": "ReferencedImageSequence",
  "00081155": "ReferencedSOPInstanceUID",
  "00082111": "DerivationDescription",
  "00100021": "IssuerOfPatientID",
  "00100032": "PatientBirthTime",
  "00101000": "OtherPatientIDs",
  "00101001": "OtherPatientNames",
  "00101010": "PatientAge",
  "00101020": "PatientSize",
  "00101030": "PatientWeight",
  "00101040": "PatientAddress",
  "00102154": "PatientTelephoneNumbers",
  "00102160": "EthnicGroup",
  "00104000": "PatientComments",
  "00181000": "DeviceSerialNumber",
  "00181030": "ProtocolName",
  "00200052": "FrameOfReferenceUID",
  "00204000": "ImageComments",
  "00321032": "RequestingPhysician",
  "00324000": "StudyComments",
  "00400244": "PerformedProcedureStepStartDate",
  "00400253": "PerformedProcedureStepID",
  "00402016": "PlacerOrderNumberImagingServiceRequest",
  "00402017": "FillerOrderNumberImagingServiceRequest",
};

export const PROFILE = "DICOM PS3.15 Basic Application Confidentiality Profile (Annex E), keep-list (clean) reading";

/** A name for the report: the keyword when known, "(gggg,eeee)" otherwise. */
export function attributeName(tag: string): string {
  return NAMES[tag] ?? `(${tag.slice(0, 4)},${tag.slice(4)})`.toLowerCase();
}

/** Why one instance cannot be imported, in catalog words (a failed UID's reason, in English and Spanish). */
export class DeidentifyError extends Error {
  constructor(public readonly text: Message) {
    super(say(text, "en"));
  }
}

export interface Deidentified {
  bytes: Buffer;
  /** Tags present in the source that were replaced (REPLACED's keys). */
  replaced: string[];
  /** Tags present in the source that were removed (upper-case hex, private ones included). */
  removed: string[];
  /** The source's PatientID (or its study UID when it has none): to group a patient's images, kept in memory only. */
  patientKey: string;
}

const UID_TAGS = ["0020000D", "0020000E", "00080018"];
const ITEM_PIXEL_SYNTAXES_LE = new Set(["1.2.840.10008.1.2", "1.2.840.10008.1.2.1", "1.2.840.10008.1.2.1.99"]);

/**
 * The de-identified Part 10 file of one instance. uids: the import's source-to-new UID map (filled as it goes).
 * maxPixels: the image limit Builder holds every DICOM to.
 */
export function deidentify(source: Uint8Array, uids: Map<string, string>, maxPixels: number): Deidentified {
  let parsed;
  try {
    parsed = parseDicom(source, { maxPixels });
  } catch (err) {
    if (err instanceof DicomError) throw new DeidentifyError(err.text ?? msg("pacs.unexpected", { why: err.message }));
    throw err;
  }
  const { dataSet: src, syntax, pixel } = parsed;
  if (pixel.rows * pixel.columns * pixel.frames > maxPixels) throw new DeidentifyError(msg("pacs.too_many_pixels", { max: maxPixels }));
  const text = (tag: string) => src.string(`x${tag.toLowerCase()}`)?.replace(/\0/g, "").trim() ?? "";
  if (text("00280301").toUpperCase() === "YES") throw new DeidentifyError(msg("pacs.burned_in"));
  const pixelElement = src.elements.x7fe00010;
  const encapsulated = Boolean(pixelElement.encapsulatedPixelData);
  if (!encapsulated && !ITEM_PIXEL_SYNTAXES_LE.has(syntax.uid))
    throw new DeidentifyError(msg("pacs.syntax_not_rewritten", { uid: syntax.uid }));

  const out: DataSet = new Map();
  const present = Object.keys(src.elements)
    .map((k) => k.slice(1).toUpperCase())
    // The file meta (group 0002), the character set and the pixel data are written anew, not removed.
    .filter((tag) => !tag.startsWith("0002") && tag !== "00080005" && tag !== "7FE00010");
  const removed: string[] = [];
  const replaced: string[] = [];
  for (const tag of present) {
    if (KEPT[tag]) continue;
    if (REPLACED[tag]) replaced.push(tag);
    else removed.push(tag);
  }
  for (const [tag, vr] of Object.entries(KEPT)) {
    const e = src.elements[`x${tag.toLowerCase()}`];
    if (!e || e.length === undefined) continue;
    if (vr === "US") {
      const v = src.uint16(`x${tag.toLowerCase()}`);
      if (v !== undefined) out.set(tag, { vr: "US", value: v });
      continue;
    }
    let raw = src.byteArray.subarray(e.dataOffset, e.dataOffset + e.length);
    while (raw.length && (raw[raw.length - 1] === 0x20 || raw[raw.length - 1] === 0)) raw = raw.subarray(0, raw.length - 1);
    out.set(tag, { vr, value: "", raw: Uint8Array.from(raw) } as Element);
  }
  for (const tag of UID_TAGS) {
    const old = text(tag);
    if (!old) throw new DeidentifyError(msg("pacs.lacks_attribute", { attribute: REPLACED[tag].keyword }));
    let fresh = uids.get(old);
    if (!fresh) uids.set(old, (fresh = newUid()));
    out.set(tag, { vr: "UI", value: fresh });
  }
  for (const [tag, vr] of Object.entries(EMPTY_VR)) out.set(tag, { vr, value: "" } as Element);
  out.set("00080005", { vr: "CS", value: "ISO_IR 192" });
  out.set("00120062", { vr: "CS", value: "YES" }); // PatientIdentityRemoved
  out.set("00120063", { vr: "LO", value: "Builder: PS3.15 Basic Application Confidentiality Profile" });
  out.set("00120064", {
    vr: "SQ",
    items: [
      new Map<string, Element>([
        ["00080100", { vr: "SH", value: "113100" }],
        ["00080102", { vr: "SH", value: "DCM" }],
        ["00080104", { vr: "LO", value: "Basic Application Confidentiality Profile" }],
      ]),
    ],
  });

  const sopClass = text("00080016");
  if (!sopClass) throw new DeidentifyError(msg("pacs.lacks_attribute", { attribute: "SOPClassUID" }));
  const dataset = encodeDataSet(out, "utf8");
  // The pixel data: native, as OB/OW in Explicit VR Little Endian (the source's bytes, little endian already);
  // encapsulated, the element (its fragments and delimiter) copied as it is, under the source's transfer syntax.
  let pixelBytes: Buffer;
  let outSyntax: string;
  if (encapsulated) {
    const start = pixelElement.dataOffset - 12;
    pixelBytes = Buffer.from(src.byteArray.subarray(start, pixelElement.dataOffset + pixelElement.length));
    outSyntax = syntax.uid;
  } else {
    const value = src.byteArray.subarray(pixelElement.dataOffset, pixelElement.dataOffset + pixelElement.length);
    pixelBytes = encodeDataSet(
      new Map<string, Element>([["7FE00010", { vr: pixel.bitsAllocated === 8 ? "OB" : "OW", value: Uint8Array.from(value) }]]),
      "utf8",
    );
    outSyntax = "1.2.840.10008.1.2.1";
  }
  const meta: DataSet = new Map<string, Element>([
    ["00020001", { vr: "OB", value: Uint8Array.from([0, 1]) }],
    ["00020002", { vr: "UI", value: sopClass }],
    ["00020003", { vr: "UI", value: (out.get("00080018") as { value: string }).value }],
    ["00020010", { vr: "UI", value: outSyntax }],
    ["00020012", { vr: "UI", value: IMPLEMENTATION_CLASS_UID }],
    ["00020013", { vr: "SH", value: "BUILDER" }],
  ]);
  const metaBody = encodeDataSet(meta, "ascii");
  const groupLength = encodeDataSet(new Map([["00020000", { vr: "UL", value: metaBody.length }]]), "ascii");
  const bytes = Buffer.concat([Buffer.alloc(128), Buffer.from("DICM", "latin1"), groupLength, metaBody, dataset, pixelBytes]);
  return { bytes, replaced, removed, patientKey: text("00100020") || `study:${text("0020000D")}` };
}
