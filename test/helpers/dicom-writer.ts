import { deflateRawSync } from "node:zlib";

/**
 * A minimal DICOM Part 10 writer for tests and benchmarks that need files no honest encoder writes: a header that
 * disagrees with its codestream, a deflated data set that inflates without end. Explicit VR Little Endian elements
 * (the file meta always, the data set unless deflated), encapsulated pixel data for compressed syntaxes. The
 * well-formed files of every syntax come from make_dicoms.py (pydicom); this writes only what a test states.
 */

export const SYNTAX = {
  explicitLittle: "1.2.840.10008.1.2.1",
  deflated: "1.2.840.10008.1.2.1.99",
  jpegBaseline: "1.2.840.10008.1.2.4.50",
  jpegLossless: "1.2.840.10008.1.2.4.70",
  jpegLs: "1.2.840.10008.1.2.4.80",
  j2k: "1.2.840.10008.1.2.4.90",
} as const;

export interface DicomSpec {
  syntax: string;
  rows: number;
  columns: number;
  bitsAllocated?: number;
  samplesPerPixel?: number;
  photometric?: string;
  frames?: number;
  window?: { center: number; width: number };
  /** Compressed syntaxes: one fragment per frame. Native: the pixel bytes. */
  pixels: Uint8Array | Uint8Array[];
}

const SECONDARY_CAPTURE = "1.2.840.10008.5.1.4.1.1.7";
/** VRs whose length field is 4 bytes after 2 reserved ones (PS3.5 7.1.2). */
const LONG_VR = new Set(["OB", "OW", "OF", "SQ", "UT", "UN"]);

/** One explicit VR little endian element; strings are padded to an even length as DICOM asks. */
function element(group: number, el: number, vr: string, value: Uint8Array | string | number[], undefinedLength = false): Buffer {
  let body: Buffer;
  if (typeof value === "string") {
    body = Buffer.from(value, "latin1");
    if (body.length % 2) body = Buffer.concat([body, Buffer.from(vr === "UI" ? [0] : [0x20])]);
  } else if (Array.isArray(value)) {
    body = Buffer.alloc(value.length * (vr === "UL" ? 4 : 2));
    value.forEach((v, i) => (vr === "UL" ? body.writeUInt32LE(v, 4 * i) : body.writeUInt16LE(v, 2 * i)));
  } else body = Buffer.from(value);
  const long = LONG_VR.has(vr);
  const head = Buffer.alloc(long ? 12 : 8);
  head.writeUInt16LE(group, 0);
  head.writeUInt16LE(el, 2);
  head.write(vr, 4, "latin1");
  if (long) head.writeUInt32LE(undefinedLength ? 0xffffffff : body.length, 8);
  else head.writeUInt16LE(body.length, 6);
  return Buffer.concat([head, body]);
}

function item(group: number, el: number, bytes: Uint8Array): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt16LE(group, 0);
  head.writeUInt16LE(el, 2);
  head.writeUInt32LE(bytes.length, 4);
  return Buffer.concat([head, Buffer.from(bytes)]);
}

/** The data set (after the file meta) as explicit VR little endian bytes. */
export function dataSetBytes(spec: DicomSpec): Buffer {
  const bits = spec.bitsAllocated ?? 8;
  const samples = spec.samplesPerPixel ?? 1;
  const parts = [
    element(0x0008, 0x0016, "UI", SECONDARY_CAPTURE),
    element(0x0008, 0x0018, "UI", "1.2.826.0.1.3680043.10.1.1"),
    element(0x0008, 0x0060, "CS", "OT"),
    element(0x0028, 0x0002, "US", [samples]),
    element(0x0028, 0x0004, "CS", spec.photometric ?? (samples === 3 ? "RGB" : "MONOCHROME2")),
    ...(samples === 3 ? [element(0x0028, 0x0006, "US", [0])] : []),
    ...(spec.frames && spec.frames > 1 ? [element(0x0028, 0x0008, "IS", String(spec.frames))] : []),
    element(0x0028, 0x0010, "US", [spec.rows]),
    element(0x0028, 0x0011, "US", [spec.columns]),
    element(0x0028, 0x0100, "US", [bits]),
    element(0x0028, 0x0101, "US", [bits]),
    element(0x0028, 0x0102, "US", [bits - 1]),
    element(0x0028, 0x0103, "US", [0]),
    ...(spec.window
      ? [element(0x0028, 0x1050, "DS", String(spec.window.center)), element(0x0028, 0x1051, "DS", String(spec.window.width))]
      : []),
  ];
  if (Array.isArray(spec.pixels)) {
    const fragments = spec.pixels.map((f) => item(0xfffe, 0xe000, f.length % 2 ? Buffer.concat([f, Buffer.from([0])]) : f));
    parts.push(
      element(0x7fe0, 0x0010, "OB", new Uint8Array(0), true),
      item(0xfffe, 0xe000, new Uint8Array(0)), // an empty basic offset table
      ...fragments,
      item(0xfffe, 0xe0dd, new Uint8Array(0)),
    );
  } else parts.push(element(0x7fe0, 0x0010, bits > 8 ? "OW" : "OB", spec.pixels));
  return Buffer.concat(parts);
}

/**
 * A whole Part 10 file. A deflated syntax deflates the data set (raw deflate, PS3.5 A.5) unless it comes deflated
 * already (alreadyDeflated).
 */
export function writeDicom(spec: DicomSpec, dataSet: Uint8Array = dataSetBytes(spec), opts: { alreadyDeflated?: boolean } = {}): Buffer {
  const body = spec.syntax === SYNTAX.deflated && !opts.alreadyDeflated ? deflateRawSync(dataSet, { level: 9 }) : dataSet;
  const meta = Buffer.concat([
    element(0x0002, 0x0001, "OB", new Uint8Array([0, 1])),
    element(0x0002, 0x0002, "UI", SECONDARY_CAPTURE),
    element(0x0002, 0x0003, "UI", "1.2.826.0.1.3680043.10.1.1"),
    element(0x0002, 0x0010, "UI", spec.syntax),
  ]);
  return Buffer.concat([Buffer.alloc(128), Buffer.from("DICM"), element(0x0002, 0x0000, "UL", [meta.length]), meta, body]);
}
