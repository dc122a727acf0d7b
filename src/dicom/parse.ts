import { inflateRawSync } from "node:zlib";
import dicomParser from "dicom-parser";
import { DicomError } from "./errors.js";
import { msg } from "../errors.js";
import { transferSyntax, type TransferSyntax } from "./transfer-syntax.js";

/**
 * A DICOM file's data set (dicom-parser) and the attributes that say how its pixels are stored. Identifying
 * attributes are read only as "present or not" (header.ts): their values never leave this module.
 */

type DataSet = dicomParser.DataSet;

/** A DICOM Part 10 file: 128 bytes of preamble, then "DICM". */
export function isDicom(bytes: Uint8Array): boolean {
  return bytes.length >= 132 && bytes[128] === 0x44 && bytes[129] === 0x49 && bytes[130] === 0x43 && bytes[131] === 0x4d;
}

export interface PixelModule {
  rows: number;
  columns: number;
  samplesPerPixel: number;
  bitsAllocated: number;
  bitsStored: number;
  signed: boolean;
  photometric: string;
  planarConfiguration: number;
  frames: number;
}

export interface ParsedDicom {
  dataSet: DataSet;
  syntax: TransferSyntax;
  pixel: PixelModule;
}

/**
 * A deflated data set is inflated with a running cap (zlib stops at it, so no more than this is ever allocated):
 * what the largest frame the pixel limit allows can need (4 bytes a pixel: 32-bit grey, or 8-bit RGB with room to
 * spare) plus 1 MiB of other elements, and never more than 64 times the file (the bound when no limit is given).
 */
const INFLATE_FACTOR = 64;
const BYTES_PER_PIXEL = 4;
const HEADER_ALLOWANCE = 2 ** 20;

/**
 * zlib's output chunk: 16 KiB by default, thousands of small allocations for a large data set, which glibc kept after
 * they were freed (~250 MB held for good after three refused 200 MB inflations on one thread). From 32 MiB, glibc's
 * largest mmap threshold, each chunk is mapped on its own and given back to the system when freed (~0 held).
 */
const inflateChunk = (limit: number) => Math.max(64 * 2 ** 10, Math.min(limit, 32 * 2 ** 20));

/** The inflated size past which a deflated data set is refused, and the sentence that says why. */
function inflateLimit(fileBytes: number, maxPixels: number): { bytes: number; why: "pixels" | "file" } {
  const byFile = Math.max(1, fileBytes * INFLATE_FACTOR);
  const byPixels = maxPixels * BYTES_PER_PIXEL + HEADER_ALLOWANCE;
  return byPixels < byFile ? { bytes: byPixels, why: "pixels" } : { bytes: byFile, why: "file" };
}

/**
 * bare: also read a dataset without preamble and file meta (older exports), as the pipelines do
 * (builder_pipelines.common.dicom._read): uncompressed little endian, explicit VR when the first element states one.
 * maxPixels: the image limit, which bounds how far a deflated data set may inflate (inflateLimit).
 */
export function parseDicom(bytes: Uint8Array, opts: { bare?: boolean; maxPixels?: number } = {}): ParsedDicom {
  const part10 = isDicom(bytes);
  if (!part10 && !opts.bare) throw new DicomError("invalid_dicom", msg("dicom.not_part10"));
  let syntax: TransferSyntax | undefined;
  let dataSet: DataSet;
  try {
    const bareSyntax = part10
      ? undefined
      : bytes.length > 8 && /^[A-Z]{2}$/.test(String.fromCharCode(bytes[4], bytes[5]))
        ? "1.2.840.10008.1.2.1"
        : "1.2.840.10008.1.2";
    syntax = transferSyntax(bareSyntax ?? dicomParser.readPart10Header(bytes).string("x00020010"));
    dataSet = dicomParser.parseDicom(bytes, {
      // Without DICM, dicom-parser reads from byte 0 in the syntax given here.
      ...(bareSyntax ? { TransferSyntaxUID: bareSyntax } : {}),
      // dicom-parser's own Node path calls Buffer.copy on what it was given; this one works on any Uint8Array and
      // caps the inflated size.
      inflater: (array: Uint8Array, position: number) => {
        const limit = inflateLimit(bytes.length, opts.maxPixels ?? Infinity);
        let body: Buffer;
        try {
          body = inflateRawSync(array.subarray(position), { maxOutputLength: limit.bytes, chunkSize: inflateChunk(limit.bytes) });
        } catch (err) {
          if ((err as { code?: string }).code !== "ERR_BUFFER_TOO_LARGE") throw err;
          throw new DicomError(
            "image_too_many_pixels",
            limit.why === "pixels"
              ? msg("dicom.inflates_past_pixels", { bytes: limit.bytes, max: opts.maxPixels ?? Infinity })
              : msg("dicom.inflates_past_file", { bytes: limit.bytes, factor: INFLATE_FACTOR }),
            syntax,
          );
        }
        const full = new Uint8Array(position + body.length);
        full.set(array.subarray(0, position), 0);
        full.set(body, position);
        return full;
      },
    });
  } catch (err) {
    if (err instanceof DicomError) throw err;
    throw new DicomError("invalid_dicom", msg("dicom.unparsable", { why: parserMessage(err) }), syntax);
  }
  if (!syntax.encoding) throw new DicomError("unsupported_transfer_syntax", msg("dicom.syntax_unsupported"), syntax);
  return { dataSet, syntax, pixel: pixelModule(dataSet, syntax) };
}

function pixelModule(ds: DataSet, syntax: TransferSyntax): PixelModule {
  const rows = ds.uint16("x00280010") ?? 0;
  const columns = ds.uint16("x00280011") ?? 0;
  if (!ds.elements.x7fe00010) throw new DicomError("invalid_dicom", msg("dicom.no_pixel_data"), syntax);
  if (!rows || !columns) throw new DicomError("invalid_dicom", msg("dicom.no_size"), syntax);
  const bitsAllocated = ds.uint16("x00280100") ?? 0;
  if (![8, 16, 32].includes(bitsAllocated))
    throw new DicomError("dicom_decode_failed", msg("dicom.bits_allocated", { bits: bitsAllocated || "no" }), syntax);
  return {
    rows,
    columns,
    samplesPerPixel: ds.uint16("x00280002") ?? 1,
    bitsAllocated,
    bitsStored: ds.uint16("x00280101") ?? bitsAllocated,
    signed: ds.uint16("x00280103") === 1,
    photometric: (ds.string("x00280004") ?? "MONOCHROME2").toUpperCase(),
    planarConfiguration: ds.uint16("x00280006") ?? 0,
    frames: Math.max(1, ds.intString("x00280008") ?? 1),
  };
}

/** dicom-parser throws strings, Errors, or {exception, dataSet}: a sentence either way. */
function parserMessage(err: unknown): string {
  const e = (err as { exception?: unknown })?.exception ?? err;
  const text = e instanceof Error ? e.message : String(e);
  return text.replace(/^dicomParser\.[A-Za-z.]+:?\s*/, "").slice(0, 200);
}

/** Decimal string value i of a tag (DS), or undefined. */
export function decimal(ds: DataSet, tag: string, i = 0): number | undefined {
  const v = ds.floatString(tag, i);
  return v === undefined || !Number.isFinite(v) ? undefined : v;
}
