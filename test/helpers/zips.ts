import fs from "node:fs";
import zlib from "node:zlib";

// A minimal zip writer for tests and benchmarks. Hand-written rather than yazl/archiver because the tests
// need archives no well-behaved library will produce: '../' names, absolute names, symlinks, the
// encryption flag, entries that lie about their size.

export interface ZipEntryOptions {
  /** Deflate (default) or store. */
  method?: "deflate" | "store";
  /** Unix mode, e.g. 0o120777 for a symlink; stored in the high 16 bits of the external attributes. */
  unixMode?: number;
  /** Sets general-purpose bit 0 (traditional encryption) without encrypting: enough for a reader to refuse it. */
  encryptedFlag?: boolean;
  /** Declares this uncompressed size instead of the true one (a lying header, as in some zip bombs). */
  declaredSize?: number;
}

interface Central {
  name: Buffer;
  crc: number;
  compressed: number;
  uncompressed: number;
  method: number;
  flags: number;
  external: number;
  offset: number;
}

/** Streams entries to a file (or memory) as they are added, so a 20,000-image archive never sits in memory. */
export class ZipWriter {
  private readonly central: Central[] = [];
  private offset = 0;
  private readonly fd: number | null;
  private readonly chunks: Buffer[] = [];

  constructor(file?: string) {
    this.fd = file ? fs.openSync(file, "w") : null;
  }

  private out(buf: Buffer): void {
    if (this.fd !== null) fs.writeSync(this.fd, buf);
    else this.chunks.push(buf);
    this.offset += buf.length;
  }

  add(name: string, data: Buffer | string, opts: ZipEntryOptions = {}): this {
    const raw = typeof data === "string" ? Buffer.from(data) : data;
    const method = opts.method === "store" || name.endsWith("/") ? 0 : 8;
    const body = method === 8 ? zlib.deflateRawSync(raw) : raw;
    const nameBuf = Buffer.from(name, "utf8");
    const flags = 0x800 | (opts.encryptedFlag ? 0x1 : 0);
    const crc = zlib.crc32(raw);
    const entry: Central = {
      name: nameBuf,
      crc,
      compressed: body.length,
      uncompressed: opts.declaredSize ?? raw.length,
      method,
      flags,
      external: ((opts.unixMode ?? (name.endsWith("/") ? 0o40755 : 0o100644)) << 16) >>> 0,
      offset: this.offset,
    };
    const h = Buffer.alloc(30);
    h.writeUInt32LE(0x04034b50, 0);
    h.writeUInt16LE(20, 4);
    h.writeUInt16LE(flags, 6);
    h.writeUInt16LE(method, 8);
    h.writeUInt32LE(0, 10); // time/date
    h.writeUInt32LE(crc >>> 0, 14);
    h.writeUInt32LE(body.length, 18);
    h.writeUInt32LE(entry.uncompressed, 22);
    h.writeUInt16LE(nameBuf.length, 26);
    h.writeUInt16LE(0, 28);
    this.out(h);
    this.out(nameBuf);
    this.out(body);
    this.central.push(entry);
    return this;
  }

  /** Writes the central directory; returns the archive when writing to memory. */
  finish(): Buffer {
    const start = this.offset;
    for (const e of this.central) {
      const c = Buffer.alloc(46);
      c.writeUInt32LE(0x02014b50, 0);
      c.writeUInt16LE((3 << 8) | 20, 4); // made by: Unix
      c.writeUInt16LE(20, 6);
      c.writeUInt16LE(e.flags, 8);
      c.writeUInt16LE(e.method, 10);
      c.writeUInt32LE(0, 12);
      c.writeUInt32LE(e.crc >>> 0, 16);
      c.writeUInt32LE(e.compressed, 20);
      c.writeUInt32LE(e.uncompressed, 24);
      c.writeUInt16LE(e.name.length, 28);
      c.writeUInt16LE(0, 30);
      c.writeUInt16LE(0, 32);
      c.writeUInt16LE(0, 34);
      c.writeUInt16LE(0, 36);
      c.writeUInt32LE(e.external, 38);
      c.writeUInt32LE(e.offset, 42);
      this.out(c);
      this.out(e.name);
    }
    const size = this.offset - start;
    const end = Buffer.alloc(22);
    end.writeUInt32LE(0x06054b50, 0);
    end.writeUInt16LE(this.central.length, 8);
    end.writeUInt16LE(this.central.length, 10);
    end.writeUInt32LE(size, 12);
    end.writeUInt32LE(start, 16);
    this.out(end);
    if (this.fd !== null) {
      fs.closeSync(this.fd);
      return Buffer.alloc(0);
    }
    return Buffer.concat(this.chunks);
  }
}

/** Builds an in-memory zip from {name: content}. */
export function makeZip(entries: Record<string, Buffer | string>, opts: Record<string, ZipEntryOptions> = {}): Buffer {
  const w = new ZipWriter();
  for (const [name, data] of Object.entries(entries)) w.add(name, data, opts[name]);
  return w.finish();
}

/** A small real PNG (sharp-encoded): distinct per `seed` so duplicate-row checks see different files. */
export async function png(width = 8, height = 8, channels: 1 | 3 = 3, seed = 0): Promise<Buffer> {
  const sharp = (await import("sharp")).default;
  const c = (seed * 37) % 256;
  return sharp({ create: { width, height, channels: 3, background: { r: c, g: 255 - c, b: (c * 7) % 256 } } })
    .toColourspace(channels === 1 ? "b-w" : "srgb")
    .png()
    .toBuffer();
}

/**
 * A valid vision classification dataset: `patients` patients with `perPatient` images each, labels
 * alternating over `classes`. Returns the entries so a test can break exactly one thing.
 */
export async function visionDataset(
  opts: { patients?: number; perPatient?: number; classes?: string[]; top?: string } = {},
): Promise<Record<string, Buffer | string>> {
  const { patients = 12, perPatient = 2, classes = ["0", "1"], top = "" } = opts;
  const entries: Record<string, Buffer | string> = {};
  const lines = ["patient_id,image,label,diagnosis"];
  let k = 0;
  for (let p = 0; p < patients; p++) {
    const label = classes[p % classes.length];
    for (let i = 0; i < perPatient; i++) {
      const name = `images/p${p}_${i}.png`;
      entries[`${top}${name}`] = await png(8 + (k % 3), 8, 3, k++);
      lines.push(`P${p},${name},${label},name_${label}`);
    }
  }
  entries[`${top}labels.csv`] = lines.join("\n") + "\n";
  return entries;
}
