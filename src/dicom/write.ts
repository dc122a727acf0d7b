import { randomUUID } from "node:crypto";

/**
 * A small DICOM Part 10 writer for the objects Builder sends back to the PACS (structured reports, secondary
 * captures: src/pacs): Explicit VR Little Endian, defined lengths everywhere, elements sorted by tag. It writes only
 * what it is given; which attributes an object needs is the caller's business (and dcmtk checks it in the tests).
 */

export type Vr =
  | "AE"
  | "AS"
  | "CS"
  | "DA"
  | "DS"
  | "DT"
  | "FL"
  | "FD"
  | "IS"
  | "LO"
  | "LT"
  | "OB"
  | "OW"
  | "PN"
  | "SH"
  | "SQ"
  | "ST"
  | "TM"
  | "UI"
  | "UL"
  | "US"
  | "UT";

/** A data set: tag ("00080016") to element. */
export type DataSet = Map<string, Element>;

export type Element =
  | { vr: "SQ"; items: DataSet[] }
  | { vr: "US" | "UL" | "FL" | "FD"; value: number | number[] }
  | { vr: "OB" | "OW"; value: Uint8Array }
  /** Strings: several values joined by "\\"; `raw` bytes are written as they are (copied from the source file). */
  | { vr: Exclude<Vr, "SQ" | "US" | "UL" | "FL" | "FD" | "OB" | "OW">; value: string | string[] | number; raw?: Uint8Array };

const LONG_LENGTH = new Set<Vr>(["OB", "OW", "SQ", "UT"]);

export const EXPLICIT_VR_LITTLE_ENDIAN = "1.2.840.10008.1.2.1";
/** Builder's implementation class UID (a UUID-derived UID, PS3.5 B.2), fixed so files name their writer. */
export const IMPLEMENTATION_CLASS_UID = "2.25.266842117418843064307744437463522547201";

/** A new globally unique UID from a random UUID (PS3.5 B.2: "2.25." and the UUID as a decimal integer). */
export function newUid(): string {
  return `2.25.${BigInt(`0x${randomUUID().replace(/-/g, "")}`).toString()}`;
}

/**
 * How the object's own texts are encoded: UTF-8 (ISO_IR 192) unless the source file's character set is kept for the
 * patient's attributes copied from it, then Latin-1 (ISO_IR 100) or plain ASCII with "?" for what does not fit.
 */
export type TextEncoding = "utf8" | "latin1" | "ascii";

function encodeText(s: string, enc: TextEncoding): Buffer {
  if (enc === "utf8") return Buffer.from(s, "utf8");
  const max = enc === "latin1" ? 0xff : 0x7f;
  return Buffer.from(Array.from(s, (ch) => (ch.codePointAt(0)! <= max ? ch : "?")).join(""), "latin1");
}

function valueBytes(e: Element, enc: TextEncoding): Buffer {
  switch (e.vr) {
    case "SQ":
      throw new Error("sequences are encoded by encodeDataSet");
    case "US":
    case "UL":
    case "FL":
    case "FD": {
      const values = Array.isArray(e.value) ? e.value : [e.value];
      const size = { US: 2, UL: 4, FL: 4, FD: 8 }[e.vr];
      const b = Buffer.alloc(values.length * size);
      values.forEach((v, i) => {
        if (e.vr === "US") b.writeUInt16LE(v, i * 2);
        else if (e.vr === "UL") b.writeUInt32LE(v, i * 4);
        else if (e.vr === "FL") b.writeFloatLE(v, i * 4);
        else b.writeDoubleLE(v, i * 8);
      });
      return b;
    }
    case "OB":
    case "OW": {
      const b = Buffer.from(e.value.buffer, e.value.byteOffset, e.value.byteLength);
      return b.length % 2 ? Buffer.concat([b, Buffer.alloc(1)]) : b;
    }
    default: {
      const text = e.raw
        ? Buffer.from(e.raw)
        : encodeText(Array.isArray(e.value) ? e.value.join("\\") : String(e.value), e.vr === "UI" ? "ascii" : enc);
      if (text.length % 2 === 0) return text;
      return Buffer.concat([text, Buffer.from([e.vr === "UI" ? 0 : 0x20])]);
    }
  }
}

function header(tag: string, vr: Vr, length: number): Buffer {
  const group = parseInt(tag.slice(0, 4), 16);
  const element = parseInt(tag.slice(4, 8), 16);
  const long = LONG_LENGTH.has(vr);
  const b = Buffer.alloc(long ? 12 : 8);
  b.writeUInt16LE(group, 0);
  b.writeUInt16LE(element, 2);
  b.write(vr, 4, "latin1");
  if (long) b.writeUInt32LE(length, 8);
  else {
    if (length > 0xffff) throw new Error(`element ${tag} (${vr}) is too long for its VR: ${length} bytes`);
    b.writeUInt16LE(length, 6);
  }
  return b;
}

/** The data set's elements in tag order, Explicit VR Little Endian, sequences and items with defined lengths. */
export function encodeDataSet(ds: DataSet, enc: TextEncoding): Buffer {
  const parts: Buffer[] = [];
  for (const tag of [...ds.keys()].sort()) {
    if (!/^[0-9A-F]{8}$/.test(tag)) throw new Error(`bad tag ${tag}: eight upper-case hexadecimal digits`);
    const e = ds.get(tag)!;
    if (e.vr === "SQ") {
      const items = e.items.map((item) => {
        const body = encodeDataSet(item, enc);
        const h = Buffer.alloc(8);
        h.writeUInt16LE(0xfffe, 0);
        h.writeUInt16LE(0xe000, 2);
        h.writeUInt32LE(body.length, 4);
        return Buffer.concat([h, body]);
      });
      const body = Buffer.concat(items);
      parts.push(header(tag, "SQ", body.length), body);
    } else {
      const body = valueBytes(e, enc);
      parts.push(header(tag, e.vr, body.length), body);
    }
  }
  return Buffer.concat(parts);
}

/** A Part 10 file: preamble, "DICM", file meta information (group 0002), the data set. */
export function writePart10(ds: DataSet, enc: TextEncoding): Buffer {
  const sopClass = ds.get("00080016");
  const sopInstance = ds.get("00080018");
  if (!sopClass || !sopInstance || sopClass.vr !== "UI" || sopInstance.vr !== "UI")
    throw new Error("a Part 10 file needs SOPClassUID and SOPInstanceUID");
  const meta: DataSet = new Map<string, Element>([
    ["00020001", { vr: "OB", value: Uint8Array.from([0, 1]) }],
    ["00020002", { vr: "UI", value: sopClass.value }],
    ["00020003", { vr: "UI", value: sopInstance.value }],
    ["00020010", { vr: "UI", value: EXPLICIT_VR_LITTLE_ENDIAN }],
    ["00020012", { vr: "UI", value: IMPLEMENTATION_CLASS_UID }],
    ["00020013", { vr: "SH", value: "BUILDER" }],
  ]);
  const metaBody = encodeDataSet(meta, "ascii");
  const groupLength = encodeDataSet(new Map([["00020000", { vr: "UL", value: metaBody.length }]]), "ascii");
  return Buffer.concat([Buffer.alloc(128), Buffer.from("DICM", "latin1"), groupLength, metaBody, encodeDataSet(ds, enc)]);
}

/** Helpers for building data sets. */
export const el = {
  str: (vr: Exclude<Vr, "SQ" | "US" | "UL" | "FL" | "FD" | "OB" | "OW">, value: string | string[] | number): Element => ({ vr, value }),
  seq: (...items: DataSet[]): Element => ({ vr: "SQ", items }),
};

export function dataSet(entries: Record<string, Element | undefined>): DataSet {
  return new Map(Object.entries(entries).filter((e): e is [string, Element] => e[1] !== undefined));
}

/** DICOM DA and TM of a moment, in the server's local time (as the PACS displays its own objects). */
export function dicomDateTime(d: Date): { date: string; time: string } {
  const p = (n: number, w = 2) => String(n).padStart(w, "0");
  return {
    date: `${d.getFullYear()}${p(d.getMonth() + 1)}${p(d.getDate())}`,
    time: `${p(d.getHours())}${p(d.getMinutes())}${p(d.getSeconds())}`,
  };
}
