import { msg, say, type Message } from "../errors.js";
import dicomParser from "dicom-parser";
import { decodeCompressed } from "./codecs.js";
import { statedSize } from "./codestream.js";
import { DicomError } from "./errors.js";
import type { ParsedDicom } from "./parse.js";
import { decodeRle } from "./rle.js";

/**
 * The first frame's samples, decoded whatever the transfer syntax: grey frames as stored values (masked to
 * BitsStored, sign-extended when PixelRepresentation is 1, as pydicom gives them), colour frames as 8-bit RGB
 * interleaved (YBR converted as pydicom's convert_color_space does).
 */

export type GreyFrame = { kind: "grey"; values: Int32Array | Float64Array; width: number; height: number };
export type ColourFrame = { kind: "rgb"; rgb: Uint8Array; width: number; height: number };

type Raw = { data: ArrayLike<number>; planar: boolean; alreadyRgb: boolean };

/** A pixel-data problem found before a decoder ran, in catalog words (said inside dicom.pixels_undecodable). */
class PixelProblem extends Error {
  constructor(public readonly text: Message) {
    super(say(text, "en"));
  }
}

export function firstFrame(d: ParsedDicom): GreyFrame | ColourFrame {
  const { pixel: p, syntax } = d;
  const colour = p.samplesPerPixel === 3;
  if (p.samplesPerPixel !== 1 && !colour)
    throw new DicomError("dicom_decode_failed", msg("dicom.samples_per_pixel", { samples: p.samplesPerPixel }), syntax);
  if (!colour && !p.photometric.startsWith("MONOCHROME"))
    throw new DicomError("dicom_decode_failed", msg("dicom.photometric", { photometric: p.photometric }), syntax);
  let raw: Raw;
  try {
    raw = decodeRaw(d);
  } catch (err) {
    if (err instanceof DicomError) throw err;
    throw new DicomError(
      "dicom_decode_failed",
      msg("dicom.pixels_undecodable", { why: err instanceof PixelProblem ? err.text : ((err as Error).message ?? String(err)) }),
      syntax,
    );
  }
  const n = p.rows * p.columns;
  if (raw.data.length < n * p.samplesPerPixel)
    throw new DicomError(
      "dicom_decode_failed",
      msg("dicom.too_few_samples", { held: raw.data.length, needed: n * p.samplesPerPixel }),
      syntax,
    );
  if (colour && p.bitsStored > 8) throw new DicomError("dicom_decode_failed", msg("dicom.colour_bits", { bits: p.bitsStored }), syntax);
  if (colour) return { kind: "rgb", rgb: toRgb(raw, n, p.photometric), width: p.columns, height: p.rows };
  return { kind: "grey", values: storedValues(raw.data, n, p.bitsStored, p.signed), width: p.columns, height: p.rows };
}

function decodeRaw(d: ParsedDicom): Raw {
  const { pixel: p, syntax, dataSet: ds } = d;
  const el = ds.elements.x7fe00010;
  const planarNative = p.planarConfiguration === 1;
  if (syntax.encoding === "native") {
    if (el.encapsulatedPixelData) throw new Error("encapsulated pixel data in an uncompressed transfer syntax");
    const bytesPerSample = p.bitsAllocated / 8;
    // Uncompressed YBR_FULL_422 stores two samples per pixel (Y Y Cb Cr for each pair of pixels).
    const subsampled = p.photometric === "YBR_FULL_422" && p.samplesPerPixel === 3;
    const count = p.rows * p.columns * (subsampled ? 2 : p.samplesPerPixel);
    const length = count * bytesPerSample;
    if (el.dataOffset + length > ds.byteArray.length)
      throw new Error(`the pixel data is cut short (${length} bytes needed for the first frame)`);
    // Big endian 8-bit data in an OW element is stored as swapped 16-bit words.
    const swapBytes = !!syntax.bigEndian && p.bitsAllocated === 8 && el.vr === "OW";
    const data = nativeSamples(ds.byteArray, el.dataOffset, count, p.bitsAllocated, !!syntax.bigEndian, swapBytes);
    return {
      data: subsampled ? upsample422(data, p.rows * p.columns) : data,
      planar: subsampled ? false : planarNative,
      alreadyRgb: false,
    };
  }
  if (!el.encapsulatedPixelData || !el.fragments?.length) throw new PixelProblem(msg("dicom.not_encapsulated"));
  const frame = encapsulatedFirstFrame(ds, el, p.frames);
  if (syntax.encoding === "rle")
    return { data: decodeRle(frame, p.rows, p.columns, p.samplesPerPixel, p.bitsAllocated), planar: true, alreadyRgb: false };
  // The decoders allocate what the codestream states: it must be the frame the header (already held to the pixel
  // limit) describes, checked before any decoder runs.
  const stated = statedSize(syntax.encoding!, frame);
  if (!stated) throw new PixelProblem(msg("dicom.frame_size_unstated"));
  if (stated.width !== p.columns || stated.height !== p.rows || stated.components !== p.samplesPerPixel)
    throw new PixelProblem(
      msg("dicom.frame_size_differs", {
        stated: `${stated.width}x${stated.height}`,
        components: stated.components,
        size: `${p.columns}x${p.rows}`,
        samples: p.samplesPerPixel,
      }),
    );
  const f = decodeCompressed(syntax.encoding!, frame, p.bitsAllocated, p.signed);
  if (f.width !== p.columns || f.height !== p.rows || f.components !== p.samplesPerPixel)
    throw new PixelProblem(
      msg("dicom.decoded_size_differs", {
        decoded: `${f.width}x${f.height}x${f.components}`,
        size: `${p.columns}x${p.rows}x${p.samplesPerPixel}`,
      }),
    );
  // libjpeg-turbo converts YCbCr to RGB itself, and OpenJPEG undoes J2K's colour transform (YBR_ICT/YBR_RCT).
  const alreadyRgb = syntax.encoding === "jpeg-baseline" || syntax.encoding === "jpeg-2000";
  return { data: f.data, planar: false, alreadyRgb };
}

function encapsulatedFirstFrame(ds: dicomParser.DataSet, el: dicomParser.Element, frames: number): Uint8Array {
  const fragments = el.fragments!;
  if (frames === 1) return dicomParser.readEncapsulatedPixelDataFromFragments(ds, el, 0, fragments.length) as Uint8Array;
  if (el.basicOffsetTable?.length) return dicomParser.readEncapsulatedImageFrame(ds, el, 0) as Uint8Array;
  if (fragments.length === frames) return dicomParser.readEncapsulatedPixelDataFromFragments(ds, el, 0, 1) as Uint8Array;
  // No offset table and several fragments per frame: JPEG frames end at an EOI marker.
  const table = dicomParser.createJPEGBasicOffsetTable(ds, el);
  return dicomParser.readEncapsulatedImageFrame(ds, el, 0, table) as Uint8Array;
}

/** Y0 Y1 Cb Cr per pixel pair -> Y Cb Cr for each pixel (pydicom does the same before converting to RGB). */
function upsample422(d: ArrayLike<number>, n: number): Uint8Array {
  const out = new Uint8Array(n * 3);
  for (let i = 0; i < n; i++) {
    const j = (i >> 1) * 4; // this pixel's pair
    out[i * 3] = d[j + (i & 1)];
    out[i * 3 + 1] = d[j + 2];
    out[i * 3 + 2] = d[j + 3];
  }
  return out;
}

function nativeSamples(
  bytes: Uint8Array,
  offset: number,
  count: number,
  bitsAllocated: number,
  bigEndian: boolean,
  swapBytes: boolean,
): ArrayLike<number> {
  if (bitsAllocated === 8 && swapBytes) {
    const out = new Uint8Array(count);
    for (let i = 0; i < count; i++) out[i] = bytes[offset + (i ^ 1)];
    return out;
  }
  if (bitsAllocated === 8) return bytes.subarray(offset, offset + count);
  const view = new DataView(bytes.buffer, bytes.byteOffset + offset, count * (bitsAllocated / 8));
  if (bitsAllocated === 16) {
    const out = new Uint16Array(count);
    for (let i = 0; i < count; i++) out[i] = view.getUint16(2 * i, !bigEndian);
    return out;
  }
  const out = new Float64Array(count);
  for (let i = 0; i < count; i++) out[i] = view.getUint32(4 * i, !bigEndian);
  return out;
}

/** The bits above BitsStored are not part of the value; signed values are two's complement in BitsStored bits. */
function storedValues(data: ArrayLike<number>, n: number, bitsStored: number, signed: boolean): Int32Array | Float64Array {
  if (bitsStored >= 32) {
    const out = new Float64Array(n);
    for (let i = 0; i < n; i++) out[i] = signed ? data[i] | 0 : data[i] >>> 0;
    return out;
  }
  const out = new Int32Array(n);
  const mask = bitsStored >= 31 ? 0x7fffffff : (1 << bitsStored) - 1;
  const shift = 32 - bitsStored;
  for (let i = 0; i < n; i++) {
    const v = data[i] & mask;
    out[i] = signed ? (v << shift) >> shift : v;
  }
  return out;
}

function toRgb(raw: Raw, n: number, photometric: string): Uint8Array {
  const rgb = new Uint8Array(n * 3);
  const d = raw.data;
  if (raw.planar) for (let i = 0; i < n; i++) for (let c = 0; c < 3; c++) rgb[i * 3 + c] = d[c * n + i];
  else for (let i = 0; i < 3 * n; i++) rgb[i] = d[i];
  if (raw.alreadyRgb || photometric === "RGB") return rgb;
  if (photometric === "YBR_FULL" || photometric === "YBR_FULL_422") return ybrFullToRgb(rgb);
  throw new Error(`colour photometric interpretation ${photometric} is not read`);
}

/** pydicom.pixels.processing.convert_color_space("YBR_FULL" -> "RGB"): float64, +0.5, floor, clip. */
function ybrFullToRgb(px: Uint8Array): Uint8Array {
  const gCb = (-0.114 * 1.772) / 0.587;
  const gCr = (-0.299 * 1.402) / 0.587;
  const clip = (v: number) => (v < 0 ? 0 : v > 255 ? 255 : v);
  for (let i = 0; i < px.length; i += 3) {
    const y = px[i];
    const cb = px[i + 1] - 128;
    const cr = px[i + 2] - 128;
    px[i] = clip(Math.floor(y + 1.402 * cr + 0.5));
    px[i + 1] = clip(Math.floor(y + gCb * cb + gCr * cr + 0.5));
    px[i + 2] = clip(Math.floor(y + 1.772 * cb + 0.5));
  }
  return px;
}
