import fs from "node:fs/promises";
import path from "node:path";
import sharp from "sharp";
import { isDicom, type DicomHeaderSummary } from "../dicom/index.js";
import { preprocessPool } from "../serving/preprocess-pool.js";

// Image paths as written in the CSV, and decoding every image once with sharp.

/** What Builder accepts in file and folder names: portable on every OS and in every URL without escaping. */
const SAFE = /^[A-Za-z0-9._\-/]$/;

/** How each refused character is named (problems:dataset.path_character.<kind>); any other is "other", shown with its code point. */
const CHAR_KINDS: Record<string, PathCharacterKind> = {
  " ": "space",
  "\t": "tab",
  "\\": "backslash",
  "(": "symbol",
  ")": "symbol",
  ",": "comma",
  ";": "semicolon",
  "#": "symbol",
  "%": "symbol",
  "&": "symbol",
  "'": "quote",
};

export type PathCharacterKind = "space" | "tab" | "backslash" | "symbol" | "comma" | "semicolon" | "quote" | "other";

export interface CharProblem {
  char: string;
  /** What the character is, for its words in the catalog. */
  kind: PathCharacterKind;
  /** Its code point, U+XXXX. */
  codepoint: string;
  position: number;
  suggestion: string;
}

/** First character a path may not hold, what it is, and the path with every such character replaced by '_'. */
export function pathCharProblem(p: string): CharProblem | null {
  const chars = [...p];
  const i = chars.findIndex((c) => !SAFE.test(c));
  if (i < 0) return null;
  const c = chars[i];
  const codepoint = `U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}`;
  const suggestion = chars.map((x) => (x === "\\" ? "/" : SAFE.test(x) ? x : "_")).join("");
  return { char: c, kind: CHAR_KINDS[c] ?? "other", codepoint, position: i + 1, suggestion };
}

/**
 * Where an image path from the CSV lies in the archive. The zip's folders must equal the CSV paths;
 * one folder around everything is tolerated (whether or not the CSV path repeats it).
 * Returns the path relative to the dataset root, or null when absent (with a case-only near match if any).
 */
export function locateImage(
  value: string,
  files: Set<string>,
  top: string | null,
  lowerIndex?: Map<string, string>,
): { rel: string | null; near?: string } {
  const v = value.replace(/\\/g, "/").replace(/^\.\//, "");
  const candidates = top ? [`${top}/${v}`, v] : [v];
  for (const c of candidates) {
    if (files.has(c)) return { rel: top && c.startsWith(`${top}/`) ? c.slice(top.length + 1) : c };
  }
  if (lowerIndex) {
    for (const c of candidates) {
      const near = lowerIndex.get(c.toLowerCase());
      if (near) return { rel: null, near: top && near.startsWith(`${top}/`) ? near.slice(top.length + 1) : near };
    }
  }
  return { rel: null };
}

export const IMAGE_EXTENSIONS = new Set([".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".gif", ".webp", ".dcm", ".dicom"]);
export const isImageFile = (name: string) => IMAGE_EXTENSIONS.has(path.extname(name).toLowerCase());
const isDicomName = (name: string) => [".dcm", ".dicom"].includes(path.extname(name).toLowerCase());

/** dicom: the header summary of a DICOM (never an identifying value, see src/dicom/header.ts). */
export type ImageInfo =
  { width: number; height: number; channels: number; format: string; dicom?: DicomHeaderSummary } | { error: string; dicom?: true };

/** Images up to this many pixels are decoded whole in one call (fast); larger ones through shrink-on-load. */
const DIRECT_DECODE_PIXELS = 16_000_000;

/**
 * Decodes one image fully, so a truncated or corrupt file fails here and not during training.
 * Usual sizes: a plain raw decode (about twice as fast as a resized one for small images). Past 16 MP
 * (at most 64 MB of pixels) the decode is resized to a few pixels so memory per image stays small; JPEG
 * shrink-on-load still reads every scan.
 */
export async function inspectImage(file: string, maxDicomPixels: number): Promise<ImageInfo> {
  if (isDicomName(file) || (await startsLikeDicom(file))) return inspectDicomFile(file, isDicomName(file), maxDicomPixels);
  try {
    // The header gives the stored channels (the raw output would be converted to sRGB).
    const img = sharp(file, { failOn: "error", limitInputPixels: 200_000_000 });
    const meta = await img.metadata();
    if (!meta.width || !meta.height) return { error: "no width or height" };
    if (meta.width * meta.height <= DIRECT_DECODE_PIXELS) await img.raw().toBuffer();
    else await img.resize(8, 8, { fit: "fill" }).raw().toBuffer();
    return { width: meta.width, height: meta.height, channels: meta.channels ?? 0, format: meta.format ?? "unknown" };
  } catch (err) {
    return { error: (err as Error).message.split("\n")[0] };
  }
}

/** Bytes 128..131 are "DICM": a DICOM file, whatever its name (PACS exports often have no extension). */
async function startsLikeDicom(file: string): Promise<boolean> {
  const fh = await fs.open(file).catch(() => null);
  if (!fh) return false;
  try {
    const head = new Uint8Array(132);
    const { bytesRead } = await fh.read(head, 0, 132, 0);
    return bytesRead === 132 && isDicom(head);
  } finally {
    await fh.close();
  }
}

/**
 * A DICOM is decoded whole, as training will (src/dicom on a preprocessing thread: the WASM codecs would otherwise
 * hold the event loop), and its header summarised; an error names the transfer syntax. One of more than maxPixels
 * (its header's Rows x Columns) is refused before any pixel is decoded or any deflated data set inflated past what
 * such an image needs: the whole decode of a 144-megapixel file took close to 1 GB.
 */
async function inspectDicomFile(file: string, named: boolean, maxPixels: number): Promise<ImageInfo> {
  try {
    const bytes = await fs.readFile(file);
    // A file named .dcm may be a bare dataset (no preamble, no file meta), which the pipelines read too.
    const r = await preprocessPool().inspectDicom(bytes, { bare: named, maxPixels });
    return { width: r.width, height: r.height, channels: r.channels, format: "dicom", dicom: r.header };
  } catch (err) {
    return { error: (err as Error).message.split("\n")[0], dicom: true };
  }
}

/** Inspects many images with a few in flight (sharp decodes on libuv's thread pool). */
export async function inspectImages(
  root: string,
  rels: string[],
  opts: { maxDicomPixels: number; concurrency?: number; signal?: AbortSignal },
): Promise<Map<string, ImageInfo>> {
  const out = new Map<string, ImageInfo>();
  let next = 0;
  const worker = async () => {
    while (next < rels.length) {
      opts.signal?.throwIfAborted();
      const rel = rels[next++];
      out.set(rel, await inspectImage(path.join(root, ...rel.split("/")), opts.maxDicomPixels));
    }
  };
  await Promise.all(Array.from({ length: Math.min(opts.concurrency ?? 4, rels.length) }, worker));
  return out;
}
