/** The compressed transfer syntaxes Builder decodes (codecs.ts); here so that codecs.ts can import this file without a circle. */
export type CompressedKind = "jpeg-baseline" | "jpeg-lossless" | "jpeg-ls" | "jpeg-2000";

/**
 * The size a compressed frame states about itself, read from its own header before any decoder runs: a JPEG's
 * start-of-frame marker (SOF0..SOF15; JPEG-LS's SOF55), a JPEG 2000 codestream's SIZ marker. The decoders allocate
 * what these say, not what the DICOM header says: a 600-byte JPEG 2000 codestream can claim 16384x16384 pixels and
 * make OpenJPEG allocate over a gigabyte inside a DICOM whose header claims 64x64. pixels.ts compares the two and
 * refuses a frame that disagrees with its header before decoding it.
 */

export interface StatedSize {
  width: number;
  height: number;
  components: number;
  /** Bits per sample (JPEG's P; JPEG 2000's first component's Ssiz + 1). */
  precision: number;
}

/** undefined: no SOF/SIZ marker where the format puts one (no decoder could decode the frame either). */
export function statedSize(kind: CompressedKind, b: Uint8Array): StatedSize | undefined {
  return kind === "jpeg-2000" ? sizMarker(b) : startOfFrame(b);
}

const u16 = (b: Uint8Array, i: number) => (b[i] << 8) | b[i + 1];
const u32 = (b: Uint8Array, i: number) => ((b[i] << 24) >>> 0) + (b[i + 1] << 16) + (b[i + 2] << 8) + b[i + 3];

/** ITU-T T.81 B.2: markers from SOI, each FF xx followed by a 2-byte length, until the frame header. */
function startOfFrame(b: Uint8Array): StatedSize | undefined {
  if (b[0] !== 0xff || b[1] !== 0xd8) return undefined;
  let i = 2;
  while (i + 9 < b.length) {
    if (b[i] !== 0xff) return undefined;
    const marker = b[i + 1];
    if (marker === 0xff) {
      i++; // a fill byte before a marker (B.1.1.2)
      continue;
    }
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd8)) {
      i += 2; // markers without a length: TEM, RSTn, SOI
      continue;
    }
    if (marker === 0xd9 || marker === 0xda) return undefined; // EOI or a scan before any frame header
    // SOF0..SOF15 (not DHT C4, JPG C8, DAC CC) and JPEG-LS's SOF55 (F7): P, Y, X, Nf.
    if ((marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) || marker === 0xf7)
      return { precision: b[i + 4], height: u16(b, i + 5), width: u16(b, i + 7), components: b[i + 9] };
    i += 2 + u16(b, i + 2);
  }
  return undefined;
}

/**
 * ITU-T T.800 A.5.1: the codestream starts with SOC (FF4F) and SIZ (FF51); its image area is Xsiz - XOsiz by
 * Ysiz - YOsiz. A JP2 file (boxes around the codestream, which some writers put in DICOM) is searched for it.
 */
function sizMarker(b: Uint8Array): StatedSize | undefined {
  for (let i = 0; i + 43 <= b.length; i++) {
    if (b[i] !== 0xff || b[i + 1] !== 0x4f || b[i + 2] !== 0xff || b[i + 3] !== 0x51) continue;
    const s = i + 6; // after SOC, SIZ and Lsiz: Rsiz, Xsiz, Ysiz, XOsiz, YOsiz, XTsiz, YTsiz, XTOsiz, YTOsiz, Csiz
    const width = u32(b, s + 2) - u32(b, s + 10);
    const height = u32(b, s + 6) - u32(b, s + 14);
    return { width, height, components: u16(b, s + 34), precision: (b[s + 36] & 0x7f) + 1 };
  }
  return undefined;
}
