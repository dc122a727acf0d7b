import fs from "node:fs";
import { Readable } from "node:stream";
import { promisify } from "node:util";
import yauzl from "yauzl";

// Opens a zip for yauzl with one difference from yauzl.open: the central directory is read in 1 MB chunks
// instead of two small reads per entry. yauzl reads an entry's fixed 46 bytes, then its name, each through the
// thread pool; a 190,000-entry archive took 9 s of round trips before anything was checked. Reads that continue
// the previous ones (the directory walk) are served from the chunk; any other read (a local header before an entry
// is extracted) goes to the file directly, so random access stays as cheap as before.

const CHUNK = 1024 * 1024;

class SequentialChunkReader extends yauzl.RandomAccessReader {
  private chunk = Buffer.alloc(0);
  private chunkStart = 0;
  private lastEnd = -1;
  private streak = 0;

  constructor(private readonly fd: number) {
    super();
  }

  override read(
    buffer: Buffer,
    offset: number,
    length: number,
    position: number,
    callback: (err: Error | null, bytesRead?: number) => void,
  ): void {
    // A walk is several reads in a row, each starting where the last ended; an entry's local header is two such
    // reads and no more, and must not pull in a whole chunk for its few bytes.
    this.streak = position === this.lastEnd ? this.streak + 1 : 0;
    this.lastEnd = position + length;
    const inChunk = position >= this.chunkStart && position + length <= this.chunkStart + this.chunk.length;
    if (inChunk) {
      this.chunk.copy(buffer, offset, position - this.chunkStart, position - this.chunkStart + length);
      return void setImmediate(callback, null, length);
    }
    if (this.streak < 2 || length > CHUNK) {
      return void fs.read(this.fd, buffer, offset, length, position, (err, n) => callback(err, n));
    }
    const chunk = Buffer.allocUnsafe(CHUNK);
    fs.read(this.fd, chunk, 0, CHUNK, position, (err, n) => {
      if (err) return callback(err);
      this.chunk = chunk.subarray(0, n);
      this.chunkStart = position;
      const got = Math.min(length, n);
      this.chunk.copy(buffer, offset, 0, got);
      callback(null, got);
    });
  }

  /** An entry's bytes. Not fs.createReadStream: destroying that closes the shared descriptor, and yauzl destroys. */
  override _readStreamForRange(start: number, end: number) {
    const fd = this.fd;
    let position = start;
    return new Readable({
      highWaterMark: 64 * 1024,
      read(size) {
        const length = Math.min(size, end - position);
        if (length <= 0) return void this.push(null);
        const buffer = Buffer.allocUnsafe(length);
        fs.read(fd, buffer, 0, length, position, (err, n) => {
          if (err) return void this.destroy(err);
          if (n === 0) return void this.push(null); // yauzl's byte count reports the short entry
          position += n;
          this.push(buffer.subarray(0, n));
        });
      },
    });
  }

  override close(callback: (err: Error | null) => void): void {
    fs.close(this.fd, (err) => callback(err ?? null));
  }
}

/** yauzl.open's equivalent (autoClose is forced off: close the ZipFile when done, which closes the file). */
export async function openZipFile(file: string, options: yauzl.Options): Promise<yauzl.ZipFile> {
  // A plain descriptor, not a FileHandle: the reader owns it (closed through zip.close()), and a FileHandle would
  // be closed under it when garbage-collected.
  const fd = await promisify(fs.open)(file, "r");
  let size: number;
  try {
    size = (await promisify(fs.fstat)(fd)).size;
  } catch (err) {
    fs.close(fd, () => undefined);
    throw err;
  }
  const reader = new SequentialChunkReader(fd);
  return new Promise((resolve, reject) =>
    yauzl.fromRandomAccessReader(reader, size, { ...options, autoClose: false }, (err, zip) => {
      if (err || !zip) {
        reader.close(() => undefined);
        reject(err ?? new Error("cannot open the zip"));
      } else resolve(zip);
    }),
  );
}
