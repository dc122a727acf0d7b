/**
 * The transfer syntaxes Builder reads, by UID: how the pixel data is stored and which decoder takes it. The name is
 * DICOM PS3.6's, so that an error can name a syntax the way a PACS administrator knows it.
 */

export type PixelEncoding =
  | "native" // uncompressed, little or big endian (dicom-parser reads the data set either way)
  | "rle"
  | "jpeg-baseline" // 8-bit DCT: libjpeg-turbo (WASM)
  | "jpeg-lossless" // SOF3: jpeg-lossless-decoder-js
  | "jpeg-ls" // CharLS (WASM)
  | "jpeg-2000"; // OpenJPEG (WASM)

export interface TransferSyntax {
  uid: string;
  name: string;
  /** undefined: known by name, not decoded (the error says so). */
  encoding?: PixelEncoding;
  bigEndian?: boolean;
}

const SYNTAXES: TransferSyntax[] = [
  { uid: "1.2.840.10008.1.2", name: "Implicit VR Little Endian", encoding: "native" },
  { uid: "1.2.840.10008.1.2.1", name: "Explicit VR Little Endian", encoding: "native" },
  { uid: "1.2.840.10008.1.2.1.99", name: "Deflated Explicit VR Little Endian", encoding: "native" },
  { uid: "1.2.840.10008.1.2.2", name: "Explicit VR Big Endian", encoding: "native", bigEndian: true },
  { uid: "1.2.840.10008.1.2.5", name: "RLE Lossless", encoding: "rle" },
  { uid: "1.2.840.10008.1.2.4.50", name: "JPEG Baseline (Process 1)", encoding: "jpeg-baseline" },
  // Extended is 8-bit (decoded like baseline) or 12-bit, which the 8-bit libjpeg-turbo build refuses: see codecs.ts.
  { uid: "1.2.840.10008.1.2.4.51", name: "JPEG Extended (Process 2 & 4)", encoding: "jpeg-baseline" },
  { uid: "1.2.840.10008.1.2.4.57", name: "JPEG Lossless, Non-Hierarchical (Process 14)", encoding: "jpeg-lossless" },
  {
    uid: "1.2.840.10008.1.2.4.70",
    name: "JPEG Lossless, Non-Hierarchical, First-Order Prediction (Process 14 [Selection Value 1])",
    encoding: "jpeg-lossless",
  },
  { uid: "1.2.840.10008.1.2.4.80", name: "JPEG-LS Lossless Image Compression", encoding: "jpeg-ls" },
  { uid: "1.2.840.10008.1.2.4.81", name: "JPEG-LS Lossy (Near-Lossless) Image Compression", encoding: "jpeg-ls" },
  { uid: "1.2.840.10008.1.2.4.90", name: "JPEG 2000 Image Compression (Lossless Only)", encoding: "jpeg-2000" },
  { uid: "1.2.840.10008.1.2.4.91", name: "JPEG 2000 Image Compression", encoding: "jpeg-2000" },
  // Known, not decoded: named in the error instead of "unknown".
  { uid: "1.2.840.10008.1.2.4.201", name: "High-Throughput JPEG 2000 Image Compression (Lossless Only)" },
  { uid: "1.2.840.10008.1.2.4.202", name: "High-Throughput JPEG 2000 with RPCL Options Image Compression (Lossless Only)" },
  { uid: "1.2.840.10008.1.2.4.203", name: "High-Throughput JPEG 2000 Image Compression" },
  { uid: "1.2.840.10008.1.2.4.100", name: "MPEG2 Main Profile / Main Level" },
  { uid: "1.2.840.10008.1.2.4.101", name: "MPEG2 Main Profile / High Level" },
  { uid: "1.2.840.10008.1.2.4.102", name: "MPEG-4 AVC/H.264 High Profile / Level 4.1" },
  { uid: "1.2.840.10008.1.2.4.103", name: "MPEG-4 AVC/H.264 BD-compatible High Profile / Level 4.1" },
  { uid: "1.2.840.10008.1.2.4.107", name: "HEVC/H.265 Main Profile / Level 5.1" },
  { uid: "1.2.840.10008.1.2.4.92", name: "JPEG 2000 Part 2 Multi-component Image Compression (Lossless Only)" },
  { uid: "1.2.840.10008.1.2.4.93", name: "JPEG 2000 Part 2 Multi-component Image Compression" },
  { uid: "1.2.840.10008.1.2.4.94", name: "JPIP Referenced" },
  { uid: "1.2.840.10008.1.2.4.110", name: "JPEG XL Lossless" },
  { uid: "1.2.840.10008.1.2.4.112", name: "JPEG XL" },
];

const BY_UID = new Map(SYNTAXES.map((s) => [s.uid, s]));

/** The syntax a UID names; an unknown UID gets a syntax of its own with no decoder (its name says so). */
export function transferSyntax(uid: string | undefined): TransferSyntax {
  const clean = (uid ?? "").replace(/\0/g, "").trim();
  return (
    BY_UID.get(clean) ?? { uid: clean || "(none)", name: clean ? "unknown transfer syntax" : "no transfer syntax in the file meta header" }
  );
}

/** "JPEG-LS Lossless Image Compression (1.2.840.10008.1.2.4.80)": how errors and reports name one. */
export const describeSyntax = (s: TransferSyntax) => `${s.name} (${s.uid})`;

/** Every syntax Builder decodes, for docs and tests. */
export const DECODED_SYNTAXES: readonly TransferSyntax[] = SYNTAXES.filter((s) => s.encoding);
